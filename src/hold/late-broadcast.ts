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
 * What one tick counts late goes out in one message. A message that cannot be published (Redis
 * down) is dropped, and one that cannot be read is ignored: the lanes then bound each replica
 * alone, as they always do.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
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
  /** Hands every late message another replica publishes to `lateElsewhere`. */
  listen(lateElsewhere: OnLate): void;
  close(): void;
}

/** [producer, spacingMs, slot, sent] */
type Entry = [string, number, number, number];

const isEntry = (e: unknown): e is Entry =>
  Array.isArray(e) && e.length === 4 && typeof e[0] === 'string' && e.slice(1).every((n) => typeof n === 'number' && Number.isFinite(n));

export const lateChannel = (keyPrefix: string): string => `${keyPrefix}late-releases`;

export const createLateBroadcast = ({ publisher, subscriber, channel, logger }: {
  publisher: Publisher;
  subscriber: Subscriber;
  channel: string;
  logger: Logger;
}): LateBroadcast => {
  const from = randomUUID();
  let pending: Entry[] = [];
  let flush: NodeJS.Immediate | undefined;
  let closed = false;

  const send = (): void => {
    flush = undefined;
    const late = pending;
    pending = [];
    publisher.publish(channel, JSON.stringify({ from, late })).catch((error: unknown) =>
      logger.debug({ err: error, messages: late.length }, 'late releases not told to the other replicas (Redis did not take them)'));
  };

  return {
    publish(producer, spacingMs, slot, sent) {
      if (closed) return;
      pending.push([producer, spacingMs, slot, sent]);
      flush ??= setImmediate(send);
    },
    listen(lateElsewhere) {
      subscriber.on('message', (_, raw) => {
        let told: { from?: unknown; late?: unknown };
        try {
          told = JSON.parse(raw) as typeof told;
        } catch {
          return void logger.debug({ channel }, 'a message on the late-releases channel is not JSON: ignored');
        }
        if (told.from === from || !Array.isArray(told.late)) return;
        for (const entry of told.late) if (isEntry(entry)) lateElsewhere(...entry);
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
