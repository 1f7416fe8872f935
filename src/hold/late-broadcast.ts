/**
 * Shares the release lanes' second rule between replicas (release-lanes.ts). Each replica's
 * lanes see only their share of a producer's slots; one replica late on a stretch of the
 * producer's slots while another was on time on the next sent together more than the second
 * allows (up to 1.17 × the rate in the bench). So every message a lane counts late is
 * published on one Redis channel, and each replica remembers what the others published in its
 * own lane of that producer: every replica then holds back what lies more than a second and a
 * tenth of slots after any replica's late message, and the replicas together keep the second.
 * Slots and send instants are on the store's clock (docs/design.md "One clock"), so they compare
 * across replicas.
 *
 * What one tick counts late goes out together, in messages of bounded size. A message that
 * cannot be published (Redis down) is dropped. What is heard is checked against this replica's
 * store clock before it is believed (late-message.ts); a message that cannot be read, or an
 * entry outside its bounds, is ignored and counted: the lanes then bound each replica alone,
 * as they always do.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { LateIgnoredReason, Metrics } from '../metrics/types';
import { checkLateEntry, type LateEntry, readLateMessage, writeLateMessages } from './late-message';
import type { OnLate } from './release-lanes';

/** The Redis commands used: `publish` on the limiter's client, the rest on a subscriber connection of its own. */
export interface Publisher {
  publish(channel: string, message: string): Promise<unknown>;
}
export interface Subscriber {
  status: string;
  subscribe(channel: string): Promise<unknown>;
  once(event: 'ready', listener: () => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  disconnect(): void;
}

export interface LateBroadcast {
  /** Publishes a message counted late here (the lanes' `onLate`). */
  publish: OnLate;
  /**
   * Hands every late message another replica publishes to `lateElsewhere`, once checked against
   * `clock` (the store's: the lanes' clock); what is ignored is counted in `metrics`. With
   * `spacingOf` (the interval this replica's own rule gives a producer), the lane is paced by
   * that, never by the interval told: a lane takes the interval it is handed, and one told a
   * day apart held a backlogged producer's next message for a day.
   */
  listen(lateElsewhere: OnLate, checks: { clock: Clock; metrics?: Pick<Metrics, 'lateReleasesIgnored'>; spacingOf?(producer: string): number }): void;
  close(): void;
}

export const lateChannel = (keyPrefix: string): string => `${keyPrefix}late-releases`;

export const createLateBroadcast = ({ publisher, subscriber, channel, logger }: {
  publisher: Publisher;
  subscriber: Subscriber;
  channel: string;
  logger: Logger;
}): LateBroadcast => {
  const from = randomUUID();
  /** How this replica's own messages begin (writeLateMessages): what it hears back is dropped unread. */
  const own = `{"from":${JSON.stringify(from)},`;
  let pending: LateEntry[] = [];
  let flush: NodeJS.Immediate | undefined;
  let closed = false;

  const send = (): void => {
    flush = undefined;
    const late = pending;
    pending = [];
    for (const message of writeLateMessages(from, late)) {
      publisher.publish(channel, message).catch((error: unknown) =>
        logger.debug({ err: error, messages: late.length }, 'late releases not told to the other replicas (Redis did not take them)'));
    }
  };

  return {
    publish(producer, spacingMs, slot, sent) {
      if (closed) return;
      pending.push([producer, spacingMs, slot, sent]);
      flush ??= setImmediate(send);
    },
    listen(lateElsewhere, { clock, metrics, spacingOf }) {
      const ignore = (ignored: Map<LateIgnoredReason, number>): void => {
        for (const [reason, count] of ignored) metrics?.lateReleasesIgnored?.(reason, count);
        logger.debug({ channel, ignored: Object.fromEntries(ignored) }, 'late releases heard and not believed: ignored');
      };
      subscriber.on('message', (_, raw) => {
        // Every replica hears its own messages back (a lone replica only those): not parsed
        // (up to 64 KB of JSON each while many count late, as at a start that fell behind).
        if (raw.startsWith(own)) return;
        const told = readLateMessage(raw);
        if (typeof told === 'string') return ignore(new Map([[told, 1]]));
        if (told.from === from) return;
        const now = clock.now();
        const ignored = new Map<LateIgnoredReason, number>();
        for (const heard of told.late) {
          const checked = checkLateEntry(heard, now);
          if (checked.ok) {
            const [producer, spacingMs, slot, sent] = checked.entry;
            lateElsewhere(producer, spacingOf ? spacingOf(producer) : spacingMs, slot, sent);
          } else ignored.set(checked.reason, (ignored.get(checked.reason) ?? 0) + 1);
        }
        if (ignored.size > 0) ignore(ignored);
      });
      const subscribe = (): void =>
        void subscriber.subscribe(channel).catch((error: unknown) => logger.warn({ err: error, channel }, 'not subscribed to late releases: each replica bounds only its own'));
      // The connection resubscribes by itself after a reconnect; the first subscribe waits for it to be ready.
      if (subscriber.status === 'ready') subscribe();
      else subscriber.once('ready', subscribe);
    },
    close() {
      closed = true;
      if (flush) clearImmediate(flush);
      subscriber.disconnect();
    },
  };
};
