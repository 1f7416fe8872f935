/**
 * Carries out one verdict for one ingress message: hold it until its release instant (or,
 * due now, send it at once, counted against the hold's caps until acknowledged) and produce
 * it downstream, or park it on a retry tier. `ack` is called once the message is
 * safely written (its offset may then be committed). A message the broker refuses as too
 * large goes to the dead-letter topic (`too-large`); if even that fails, it is never
 * acknowledged: `onStuck` stops its partition and reports it. Nothing is skipped.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { SluiceError } from '../errors';
import type { Verdict } from '../decide/verdict';
import type { HoldScheduler } from '../hold/hold-scheduler';
import { createReleaseLanes, ReleaseLanes } from '../hold/release-lanes';
import type { Metrics } from '../metrics/types';
import type { ParkInfo, ParkReason } from '../park/park-headers';
import type { MessageWriter } from '../produce/message-writer';
import type { Inbound } from './inbound';

export interface Dispatcher {
  dispatch(inbound: Inbound, verdict: Verdict, ack: () => void): void;
}

export interface DispatchOptions {
  hold: HoldScheduler;
  writer: MessageWriter;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  onStuck(inbound: Inbound, error: unknown): void;
  /** Spaces each producer's releases (shared with the drainer's downstream sends). */
  lanes?: ReleaseLanes;
}

export const parkInfoOf = (inbound: Inbound, reason: ParkReason, notBefore: number): ParkInfo => ({
  producer: inbound.producer,
  attempt: 1,
  notBefore,
  firstSeen: inbound.firstSeen,
  timestamp: inbound.timestamp,
  origin: { topic: inbound.topic, partition: inbound.partition, offset: inbound.offset },
  reason,
});

const outcomeOfPark = (reason: ParkReason): 'delayed' | 'overflowed' | undefined =>
  reason.kind === 'delayed' ? 'delayed' : reason.kind === 'overflow' ? 'overflowed' : undefined;

export const createDispatcher = ({ hold, writer, clock, metrics, logger, onStuck, lanes = createReleaseLanes({ hold, clock }) }: DispatchOptions): Dispatcher => {
  const deadLetterTooLarge = (inbound: Inbound, info: ParkInfo, ack: () => void, first: unknown): void => {
    if (!(first instanceof SluiceError && first.code === 'MESSAGE_TOO_LARGE')) return onStuck(inbound, first);
    logger.error({ err: first, origin: info.origin, producer: inbound.producer }, 'message refused as too large; dead-lettering it');
    writer.deadLetter(inbound.content, info, 'too-large').then(
      () => {
        metrics.message('dead_lettered', inbound.producer);
        ack();
      },
      (error) => onStuck(inbound, error),
    );
  };

  const forward = (inbound: Inbound, ack: () => void): void => {
    const now = clock.now();
    const waitedMs = now - inbound.firstSeen;
    writer.forward(inbound.content, { timestamp: inbound.timestamp, waitedMs }).then(
      () => {
        metrics.message('forwarded', inbound.producer);
        metrics.releaseDelay(waitedMs);
        ack();
      },
      (error) => deadLetterTooLarge(inbound, parkInfoOf(inbound, { kind: 'delayed' }, now), ack, error),
    );
  };

  const park = (inbound: Inbound, reason: ParkReason, notBefore: number, ack: () => void): void => {
    const info = parkInfoOf(inbound, reason, notBefore);
    writer.park(inbound.content, info).then(
      () => {
        const outcome = outcomeOfPark(reason);
        if (outcome) metrics.message(outcome, inbound.producer);
        ack();
      },
      (error) => deadLetterTooLarge(inbound, info, ack, error),
    );
  };

  // Messages of a producer in the hold: a later one due now must not overtake them.
  const heldOf = new Map<string, number>();
  const unheld = (producer: string): void => {
    const n = heldOf.get(producer) ?? 0;
    if (n <= 1) heldOf.delete(producer);
    else heldOf.set(producer, n - 1);
  };

  // Due now (a conforming producer, the common case): straight to the producer's lane, no
  // timer. Still counted against hold.maxMessages/maxBytes until acknowledged (back-pressure).
  const dueNow = (inbound: Inbound, spacingMs: number, ack: () => void): void => {
    const done = hold.track(inbound.size);
    const acked = (): void => {
      done();
      ack();
    };
    const evict = (): void => park(inbound, { kind: 'delayed' }, clock.now(), acked);
    lanes.due(inbound.producer, spacingMs, { bytes: inbound.size, send: () => forward(inbound, acked), evict });
  };

  return {
    dispatch(inbound, verdict, ack) {
      if (verdict.kind === 'park') return park(inbound, verdict.reason, verdict.notBefore, ack);
      if (verdict.shadow) metrics.message(verdict.shadow === 'delayed' ? 'shadow_delayed' : 'shadow_overflowed', inbound.producer);
      const { producer } = inbound;
      if (verdict.at <= clock.now() && !heldOf.has(producer)) return dueNow(inbound, verdict.spacingMs ?? 0, ack);
      heldOf.set(producer, (heldOf.get(producer) ?? 0) + 1);
      const evict = (): void => {
        unheld(producer);
        park(inbound, { kind: 'delayed' }, verdict.at, ack);
      };
      hold.add({
        at: verdict.at,
        bytes: inbound.size,
        evict,
        // Late (this process stalled)? The lane keeps it one interval after this producer's previous release, in order.
        release: () => {
          unheld(producer);
          lanes.due(producer, verdict.spacingMs ?? 0, { bytes: inbound.size, send: () => forward(inbound, ack), evict: () => park(inbound, { kind: 'delayed' }, verdict.at, ack) });
        },
      });
    },
  };
};

