/**
 * The drainer's eachBatch: walks a tier partition in order, stops (unresolved, partition
 * paused) at the first message whose tier delay is not over, hands the due ones to the router
 * in one dispatch (one store call per producer), tracks each dispatched offset until its
 * write is acknowledged, and resolves exactly what was dispatched. Offsets already scheduled
 * by this member before a group rejoin are skipped, never decided twice.
 */
import type { Batch, KafkaMessage } from 'kafkajs';
import type { Clock } from '../clock';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { IdentityOptions } from '../identify/identify';
import type { Metrics } from '../metrics/types';
import { type Tier, tierDueAt, tierOfTopic } from '../park/tiers';
import type { PartitionPauser } from './partition-pauser';
import { readRetryItem, type RetryItem } from './retry-item';
import type { Planned, RetryRouter } from './retry-router';

export interface DrainBatchDeps {
  router: RetryRouter;
  tracker: OffsetTracker;
  pauser: PartitionPauser;
  tiers: readonly Tier[];
  identity: IdentityOptions;
  clock: Clock;
  metrics: Metrics;
  /** Wait for each tier's delay (the sidecar); sluice drain takes every message at once. */
  waitForTier: boolean;
  /** sluice drain: whether to take this message (end offsets, --max); false stops the batch there. */
  accept?: (topic: string, partition: number, message: KafkaMessage) => boolean;
  /** sluice drain: adjusts a message before its first step (--ignore-delay, dead-letter redrive). */
  prepare?: (item: RetryItem, now: number) => RetryItem;
}

export interface BatchControls {
  batch: Batch;
  resolveOffset(offset: string): void;
  isRunning(): boolean;
  isStale(): boolean;
}

interface Walk {
  planned: Planned[];
  /** Highest offset skipped as already scheduled before the first planned one. */
  skippedUpTo?: string;
  /** The head not due yet: pause until then. */
  notDueUntil?: number;
  complete: boolean;
}

const walk = (deps: DrainBatchDeps, { batch, isRunning, isStale }: BatchControls, now: number): Walk => {
  const tier = tierOfTopic(deps.tiers, batch.topic);
  const offsets = deps.tracker.partition(batch.topic, batch.partition);
  const result: Walk = { planned: [], complete: false };
  for (const message of batch.messages) {
    if (!isRunning() || isStale()) return result;
    if (offsets.scheduled(Number(message.offset))) {
      if (result.planned.length === 0) result.skippedUpTo = message.offset;
      continue;
    }
    if (deps.accept && !deps.accept(batch.topic, batch.partition, message)) return result;
    const due = tier ? tierDueAt(tier, Number(message.timestamp)) : now;
    if (deps.waitForTier && due > now) {
      result.notDueUntil = due;
      return result;
    }
    let item = readRetryItem(batch.topic, batch.partition, message, deps.identity, now);
    if (item.malformed) deps.metrics.malformedRetryHeaders(1);
    if (deps.prepare) item = deps.prepare(item, now);
    result.planned.push({ item, step: deps.router.firstStep(item, now) });
  }
  result.complete = true;
  return result;
};

export const handleDrainBatch = async (deps: DrainBatchDeps, controls: BatchControls): Promise<void> => {
  const { batch } = controls;
  const now = deps.clock.now();
  const found = walk(deps, controls, now);
  const { settled, stall } = await deps.router.dispatch(found.planned);
  const offsets = deps.tracker.partition(batch.topic, batch.partition);
  settled.forEach((done, i) => {
    const ack = offsets.track(Number(found.planned[i].item.offset));
    void done.then(ack);
  });
  const last = settled.length > 0 ? found.planned[settled.length - 1].item.offset : found.skippedUpTo;
  if (found.complete && !stall) {
    offsets.covered(Number(batch.lastOffset()));
    controls.resolveOffset(batch.lastOffset());
  } else if (last !== undefined) {
    controls.resolveOffset(last);
  }
  const until = stall?.until ?? found.notDueUntil;
  if (until !== undefined) deps.pauser.pauseUntil(batch.topic, batch.partition, until);
};
