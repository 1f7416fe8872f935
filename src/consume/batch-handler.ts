/**
 * The eachBatch handler of the ingress consumer. It never waits for a release or for memory:
 * it identifies, decides (one store call per producer per fetch), dispatches each message
 * (held or parked), resolves its offset and returns. Sends complete later; commits follow.
 *  - Offsets this member already scheduled (kafkajs fetches again from the committed offset
 *    after a rejoin) are skipped, so nothing is decided or charged twice.
 *  - When the hold is full or the consumer is stopping, the batch is left unresolved (kafkajs
 *    fetches it again later) and the consumer is paused.
 */
import type { EachBatchPayload } from 'kafkajs';
import type { Clock } from '../clock';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { FetchDecider } from '../decide/fetch-decider';
import type { RuleView } from '../decide/verdict';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { IdentityOptions } from '../identify/identify';
import type { Metrics } from '../metrics/types';
import type { Dispatcher } from './dispatch';
import { toInbound } from './inbound';

export interface BatchHandlerDeps {
  identity: IdentityOptions;
  resolveRule(producer: string): RuleView;
  decider: FetchDecider;
  dispatcher: Dispatcher;
  hold: HoldScheduler;
  tracker: OffsetTracker;
  clock: Clock;
  metrics: Metrics;
  /** True from the graceful stop on, and for partitions stopped on a message that cannot be written. */
  refuses(topic: string, partition: number): boolean;
  /** Called when the hold is full: pause fetching until it frees. */
  onFull(): void;
}

type BatchPayload = Pick<EachBatchPayload, 'batch' | 'resolveOffset' | 'heartbeat'>;

export const createBatchHandler = (deps: BatchHandlerDeps) =>
  async ({ batch, resolveOffset, heartbeat }: BatchPayload): Promise<void> => {
    const { topic, partition } = batch;
    if (deps.refuses(topic, partition)) return;
    if (deps.hold.isFull()) return deps.onFull();
    const offsets = deps.tracker.partition(topic, partition);
    const now = deps.clock.now();
    const fresh = batch.messages.filter((m) => !offsets.scheduled(Number(m.offset)));
    const inbound = fresh.map((m) => toInbound(m, { topic, partition }, deps.identity, now));
    const forged = inbound.reduce((n, i) => n + i.forged, 0);
    if (forged > 0) deps.metrics.forgedHeadersDropped(forged);
    const verdicts = await deps.decider.decide(
      inbound.map((i) => ({ producer: i.producer, rule: deps.resolveRule(i.producer), size: i.size })),
    );
    // Decided means charged: dispatch every message now, whatever happened meanwhile.
    inbound.forEach((message, k) => {
      deps.dispatcher.dispatch(message, verdicts[k], offsets.track(Number(message.offset)));
      resolveOffset(message.offset);
    });
    // Offset gaps (control records, compaction) inside the batch are covered too.
    offsets.covered(Number(batch.lastOffset()));
    resolveOffset(batch.lastOffset());
    await heartbeat();
  };
