/**
 * The drainer of the retry tiers, inside `sluice run`: its own consumer group (retry.group)
 * over every tier topic, manual offsets (autoCommit and eachBatchAutoResolve off), a partition
 * paused until its head is due, the contiguous acknowledged prefix committed. Reuses the
 * pipeline's sender, decider, hold scheduler, offset tracker and committer.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createCommitter } from '../commit/committer';
import { createOffsetTracker, type OffsetTracker } from '../commit/offset-tracker';
import type { Config } from '../config/types';
import type { FetchDecider } from '../decide/fetch-decider';
import type { RuleView } from '../decide/verdict';
import { createHoldScheduler } from '../hold/hold-scheduler';
import type { Metrics } from '../metrics/types';
import type { Sender } from '../produce/batch-sender';
import { handleDrainBatch } from './drain-batch';
import { createPartitionPauser, type PartitionPauser } from './partition-pauser';
import { createRetryRouter } from './retry-router';
import { fetchPartitionCounts, retryPolicyOf } from './retry-setup';
import { subscriptionAssigner } from './subscription-assigner';

export interface DrainerDeps {
  kafka: Kafka;
  config: Config;
  /** The pipeline's decider (coalesced): one store call per producer per fetch, store-error policy applied. */
  decider: FetchDecider;
  /** The rule in force for a producer (hot-reloaded rules: called for every message). */
  ruleOf: (producer: string) => RuleView;
  /** The pipeline's sender (acks = all, no auto topic creation). */
  sender: Sender;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
}

export interface Drainer {
  /** Whether the consumer has joined retry.group since start. */
  joined(): boolean;
  /** Whether the consumer crashed for good (kafkajs CRASH with restart: false): /healthz should say so. */
  crashed(): boolean;
  /** Messages and bytes the drainer holds in memory. */
  held(): { messages: number; bytes: number };
  /** Graceful stop: pause, park back what is held, commit, stop and disconnect. */
  stop(): Promise<void>;
}

interface GroupWatch {
  joined(): boolean;
  crashed(): boolean;
}

/** Group events: after every join, forget revoked partitions and re-derive pauses; count crashes. */
const watchGroup = (consumer: Consumer, parts: { tracker: OffsetTracker; pauser: PartitionPauser; metrics: Metrics; log: Logger; group: string }): GroupWatch => {
  let joined = false;
  let crashed = false;
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assigned = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    parts.tracker.retain(assigned);
    parts.pauser.onAssignment(assigned);
    joined = true;
    parts.log.info({ assigned }, 'drainer joined its group');
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    parts.metrics.consumerCrash(parts.group, payload.restart);
    if (!payload.restart) crashed = true;
    parts.log.error({ err: payload.error, restart: payload.restart }, 'drainer consumer crashed');
  });
  return { joined: () => joined, crashed: () => crashed };
};

export const startDrainer = async (deps: DrainerDeps): Promise<Drainer> => {
  const { kafka, config, clock } = deps;
  const log = deps.logger.child({ component: 'drainer', group: config.retry.group });
  const partitions = await fetchPartitionCounts(kafka, [...config.retry.tiers.map((t) => t.topic), config.topics.deadLetter]);
  const consumer: Consumer = kafka.consumer({
    groupId: config.retry.group,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
    partitionAssigners: [subscriptionAssigner],
  });
  const pauser = createPartitionPauser({ consumer, clock });
  const { maxMessages, maxBytes } = config.hold;
  const scheduler = createHoldScheduler({ clock, maxMessages, maxBytes, onPressure: (full) => pauser.setBlocked(full) });
  const tracker = createOffsetTracker();
  const committer = createCommitter({ tracker, target: consumer, logger: log, intervalMs: config.commit.intervalMs });
  const router = createRetryRouter({
    ...deps,
    scheduler,
    partitionsOf: (topic) => partitions.get(topic) ?? 1,
    policy: retryPolicyOf(config),
    topics: { downstream: config.topics.downstream, deadLetter: config.topics.deadLetter },
  });
  const group = watchGroup(consumer, { tracker, pauser, metrics: deps.metrics, log, group: config.retry.group });
  await consumer.connect();
  await consumer.subscribe({ topics: config.retry.tiers.map((t) => t.topic), fromBeginning: true });
  const batchDeps = { ...deps, router, tracker, pauser, tiers: config.retry.tiers, identity: config.identity, waitForTier: true };
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: Math.max(1, config.retry.tiers.length),
    eachBatch: (payload) => handleDrainBatch(batchDeps, payload),
  });
  committer.start();

  const stop = async (): Promise<void> => {
    pauser.setBlocked(true);
    // Held messages are due within hold.maxMs: those due within a second leave, the rest are parked again.
    for (const held of scheduler.takeLaterThan(clock.now() + 1000)) held.evict();
    await Promise.race([scheduler.whenEmpty(), new Promise((resolve) => setTimeout(resolve, 1500).unref())]);
    await deps.sender.flush();
    committer.stop();
    await committer.commitNow();
    scheduler.close();
    pauser.close();
    await consumer.stop();
    await consumer.disconnect();
  };
  return { ...group, held: () => scheduler.held(), stop };
};
