/**
 * One flow: a source (the ingress topic, the retry tiers, or what `sluice drain` reads) read
 * by one consumer wrapper, one batch handler, and a dispatcher over the process's one hold,
 * release lanes and writer. The sidecar runs two flows (ingress, and the drainer of the retry
 * tiers: its own group); `sluice drain` runs one. docs/design.md "One flow".
 */
import type { ConsumerConfig, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { BudgetQueue } from '../budget/budget-queue';
import type { Clock } from '../clock';
import { createOffsetTracker, type OffsetTracker } from '../commit/committer';
import type { FetchDecider, RuleView } from '../decide/fetch-decider';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { ReleaseLanes } from '../hold/release-lanes';
import type { Metrics } from '../metrics/types';
import type { MessageWriter, Sender } from '../produce/batch-sender';
import { setTimerAfterIo } from '../timers';
import { type BatchControls, createBatchHandler, type SourceOptions, takeItems, type TakeDeps } from './batch-handler';
import { createDispatcher, type Outcome } from './dispatch';
import type { FlowItem, RoutePolicy } from './flow-item';
import { createGroupConsumer, type GroupConsumer } from './group-consumer';
import { type FenceStore, SETTLE_MS } from './handoff-fence';

/** What every flow of a process shares. */
export interface FlowShared {
  hold: HoldScheduler;
  lanes: ReleaseLanes;
  writer: MessageWriter;
  sender: Sender;
  decider: FetchDecider;
  ruleOf(producer: string): RuleView;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  commitIntervalMs: number;
  /** Where messages wait for a contended budget (src/budget/budget-queue.ts; only with `total:`). */
  budgetQueue?: BudgetQueue;
  /** Where the rebalance hand-off fences are (src/flow/handoff-fence.ts); none: partitions gained wait the whole bound. */
  fences?: { store: FenceStore; keyPrefix: string };
}

export interface FlowOptions {
  name: string;
  kafka: Kafka;
  groupId: string;
  topics: readonly string[];
  source: SourceOptions;
  policy: RoutePolicy;
  partitionsConsumedConcurrently: number;
  consumerConfig?: Partial<ConsumerConfig>;
  report?(producer: string, outcome: Outcome): void;
  /** The longest a partition this member gains waits for its previous owner's release of it (0: no hand-off). */
  handoffMs?: number;
}

/** Why a flow fetches nothing for now: the hold is full; or (only the flow that takes new messages) releases run late or the hold is nearly full. */
export type BlockReason = 'full' | 'late' | 'nearly-full';

export interface Flow {
  name: string;
  consumer: GroupConsumer;
  tracker: OffsetTracker;
  start(): Promise<void>;
  /** What the consumer calls for each fetched batch (bench/micro/path.ts hands it batches itself). */
  handle(controls: BatchControls): Promise<void>;
  /** Whether a fetched batch is being handled right now. */
  busy(): boolean;
  /** Pause fetching for `reason` (or end that reason): fetching resumes once no reason is left. */
  block(reason: BlockReason, on: boolean): void;
  /** Graceful stop, first part: fetch nothing more; resolves once no batch is being handled. */
  halt(deadline: number): Promise<void>;
  /** Graceful stop, once the hold is emptied: messages out being decided again are parked as their rounds answer; resolves when none is out. */
  parkOut(): Promise<void>;
  /** Graceful stop, last part: commit, leave the group, disconnect (bounded by `deadline`). */
  stop(deadline: number): Promise<void>;
}

const RETRY_STALL_MS = 100;

export const createFlow = (shared: FlowShared, options: FlowOptions): Flow => {
  const { clock, metrics } = shared;
  const logger = shared.logger.child({ component: options.name, group: options.groupId });
  const tracker = createOffsetTracker();
  let halted = false;
  let active = 0;
  const take: TakeDeps = { decider: shared.decider, ruleOf: shared.ruleOf, policy: options.policy, clock, budgetQueue: shared.budgetQueue };
  const late: { consumer?: GroupConsumer } = {};
  const blockedFor = new Set<BlockReason>();
  // The writes under way, and the budget's messages out being decided again (their outcome is a
  // write); answers that came while the process was stopped are read before it gives up.
  const writesSettled = (): Promise<unknown> => Promise.race([
    (shared.budgetQueue?.settled() ?? Promise.resolve()).then(() => shared.sender.flush()),
    new Promise((resolve) => void setTimerAfterIo(() => resolve(undefined), SETTLE_MS).unref()),
  ]);

  const again = (item: FlowItem, ack: () => void): Promise<unknown> => {
    const retryAt = (until: number): void => dispatcher.dispatch(item, { kind: 'wait', until: Math.max(until, clock.now() + RETRY_STALL_MS) }, ack);
    return takeItems(take, dispatcher, [item], { track: () => undefined, ack }).then(
      (taken) => taken.stallUntil !== undefined && retryAt(taken.stallUntil),
      (error: unknown) => {
        logger.warn({ err: error, origin: `${item.topic}/${item.partition}/${item.offset}` }, 'deciding a message again failed; it waits and is decided again');
        retryAt(clock.now());
      },
    );
  };
  const dispatcher = createDispatcher({
    hold: shared.hold, lanes: shared.lanes, writer: shared.writer, clock, metrics, logger, tiers: options.policy.tiers, again, report: options.report,
    budgetQueue: shared.budgetQueue,
    onStuck(item, error) {
      late.consumer?.pauser.stop(item.topic, item.partition); // does nothing once the flow stopped
      logger.error({ err: error, origin: `${item.topic}/${item.partition}/${item.offset}`, producer: item.info.producer },
        'a message could not be written anywhere: its partition is stopped (nothing after it is committed) until an operator acts');
    },
  });
  const consumer = createGroupConsumer({
    kafka: options.kafka, groupId: options.groupId, topics: options.topics, tracker, commitIntervalMs: shared.commitIntervalMs,
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently, clock, metrics, logger, config: options.consumerConfig,
    // Both wait for the writes under way (at most SETTLE_MS), so the commit that follows covers them.
    async onRebalancing() {
      dispatcher.handOver(); // forward nothing until the join
      await writesSettled();
    },
    async onJoin(lost) {
      dispatcher.resume(lost);
      await writesSettled();
    },
    handoffMs: options.handoffMs ?? 0,
    fences: shared.fences,
  });
  late.consumer = consumer;
  const handle = createBatchHandler({
    source: options.source, take, dispatcher, hold: shared.hold, tracker, pauser: consumer.pauser, clock, metrics,
    refuses: (topic, partition) => halted || consumer.pauser.isStopped(topic, partition),
    acked: () => consumer.nudge(),
  });

  const handleCounted = async (controls: BatchControls): Promise<void> => {
    active += 1;
    try {
      await handle(controls);
    } finally {
      active -= 1;
    }
  };

  return {
    name: options.name,
    consumer,
    tracker,
    start: () => consumer.start(handleCounted),
    handle: handleCounted,
    busy: () => active > 0,
    block: (reason, on) => {
      if (on) blockedFor.add(reason);
      else blockedFor.delete(reason);
      if (!halted) consumer.pauser.setBlocked(blockedFor.size > 0);
    },
    async halt(deadline) {
      halted = true;
      consumer.pauser.setBlocked(true);
      while (active > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    parkOut: () => dispatcher.parkOut(),
    stop: (deadline) => consumer.stop(deadline),
  };
};
