/**
 * The one consumer wrapper: a kafkajs consumer in a group with manual offsets (autoCommit and
 * eachBatchAutoResolve off), fromBeginning for a new group, a short maxWaitTimeInMs so a
 * resume takes effect within ~200 ms, the acknowledged prefix committed every
 * commit.intervalMs. kafkajs has no revoke callback, so a rebalance is read from its events:
 *   REBALANCING → `onRebalancing()` (the flow freezes its sends), then what was acknowledged
 *                 is committed while the group is still preparing the rebalance;
 *   GROUP_JOIN  → partitions lost are forgotten and `onJoin(lost)` (the flow drops their unsent
 *                 messages: their new owner handles them), pause state is re-derived.
 * A CRASH with restart false means the consumer is gone for good (/healthz says so).
 */
import type { Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createCommitter } from '../commit/committer';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { Metrics } from '../metrics/types';
import { ownerOf } from './flow-item';
import { type Assignment, createPartitionPauser, type PartitionPauser } from './partition-pauser';

/** The handler never blocks, so a short session lets a dead replica's partitions move on within ~10 s. */
export const CONSUMER_SETTINGS = { maxWaitTimeInMs: 200, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 1_000 } as const;

export interface GroupConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: readonly string[];
  tracker: OffsetTracker;
  commitIntervalMs: number;
  partitionsConsumedConcurrently: number;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  config?: Partial<ConsumerConfig>;
  onRebalancing(): Promise<void>;
  onJoin(lost: (owner: string) => boolean): void;
}

export interface GroupConsumer {
  pauser: PartitionPauser;
  start(eachBatch: (payload: EachBatchPayload) => Promise<void>): Promise<void>;
  joined(): boolean;
  crashed(): boolean;
  assignment(): Assignment;
  commitNow(): Promise<void>;
  /** Something was acknowledged: commit soon. */
  nudge(): void;
  /** Commits, leaves the group and disconnects, each step bounded by `deadline` (epoch ms of the pod clock). */
  stop(deadline: number): Promise<void>;
}

const within = <T>(work: Promise<T>, deadline: number): Promise<T | undefined> =>
  Promise.race([work, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now())).unref())]);

export const createGroupConsumer = (options: GroupConsumerOptions): GroupConsumer => {
  const { tracker, logger, groupId } = options;
  const consumer: Consumer = options.kafka.consumer({ groupId, allowAutoTopicCreation: false, ...CONSUMER_SETTINGS, ...options.config });
  const pauser = createPartitionPauser({ consumer, clock: options.clock });
  const committer = createCommitter({ tracker, target: consumer, logger, intervalMs: options.commitIntervalMs });
  let joined = false;
  let crashed = false;
  let assigned: Assignment = [];

  consumer.on(consumer.events.REBALANCING, () => {
    logger.debug('group rebalancing: sends frozen, committing what was acknowledged');
    void options.onRebalancing().then(() => committer.commitNow());
  });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const next = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    const owners = (list: Assignment): string[] => list.flatMap(({ topic, partitions }) => partitions.map((p) => ownerOf(topic, p)));
    // Only what this consumer owned before and not now is lost (other flows' partitions share the hold).
    const kept = new Set(owners(next));
    const lost = new Set(owners(assigned).filter((owner) => !kept.has(owner)));
    assigned = next;
    tracker.retain(next);
    pauser.onAssignment(next);
    options.onJoin((owner) => lost.has(owner));
    joined = true;
    logger.info({ group: groupId, assigned: next }, 'joined the group');
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    options.metrics.consumerCrash(groupId, payload.restart);
    if (!payload.restart) crashed = true;
    logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
  });

  return {
    pauser,
    async start(eachBatch) {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: options.partitionsConsumedConcurrently, eachBatch });
      committer.start();
    },
    joined: () => joined,
    crashed: () => crashed,
    assignment: () => assigned,
    commitNow: () => committer.commitNow(),
    nudge: () => committer.nudge(),
    async stop(deadline) {
      committer.stop();
      await within(committer.commitNow(), deadline);
      pauser.close();
      // consumer.stop() waits for a join in progress; past the deadline the process leaves anyway
      // (uncommitted work is delivered again: nothing is lost).
      await within(consumer.stop(), deadline);
      await within(consumer.disconnect(), deadline + 500);
    },
  };
};
