/**
 * The ingress consumer: a kafkajs consumer in the ingress group with manual offsets
 * (autoCommit off, eachBatchAutoResolve off), fromBeginning for a new group, a short
 * maxWaitTimeInMs so a resume takes effect within ~200 ms. It keeps the offset tracker in
 * step with the group (forget lost partitions after each join, commit at once when a
 * rebalance starts) and re-derives pause state after every join.
 */
import type { Consumer, EachBatchPayload } from 'kafkajs';
import type { Logger } from 'pino';
import type { Committer } from '../commit/committer';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { Metrics } from '../metrics/types';

export interface IngressConsumer {
  start(eachBatch: (payload: EachBatchPayload) => Promise<void>): Promise<void>;
  pauseAll(): void;
  /** Resumes fetching unless stopping; partitions stopped on a stuck message stay paused. */
  resumeAll(): void;
  stopPartition(partition: number): void;
  stoppedPartitions(): number[];
  joined(): boolean;
  crashed(): boolean;
  /** Memory of the group's current assignment for this member. */
  assignment(): number[];
}

export interface IngressConsumerOptions {
  consumer: Consumer;
  topic: string;
  group: string;
  tracker: OffsetTracker;
  committer: Committer;
  metrics: Metrics;
  logger: Logger;
  partitionsConsumedConcurrently?: number;
  /** Whether fetching should be paused right now (the hold is full, or the process is stopping). */
  shouldPause(): boolean;
}

/** The handler never blocks, so a short session lets a dead replica's partitions move on within ~10 s. */
export const INGRESS_CONSUMER_SETTINGS = { maxWaitTimeInMs: 200, sessionTimeout: 10_000, heartbeatInterval: 1_000 } as const;

export const createIngressConsumer = (options: IngressConsumerOptions): IngressConsumer => {
  const { consumer, topic, tracker, committer, metrics, logger } = options;
  const stopped = new Set<number>();
  let joined = false;
  let crashed = false;
  let assigned: number[] = [];

  const applyPauseState = (): void => {
    if (options.shouldPause()) consumer.pause([{ topic }]);
    else {
      consumer.resume([{ topic }]);
      if (stopped.size > 0) consumer.pause([{ topic, partitions: [...stopped] }]);
    }
  };

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    assigned = payload.memberAssignment[topic] ?? [];
    tracker.retain([{ topic, partitions: assigned }]);
    joined = true;
    logger.info({ group: options.group, partitions: assigned }, 'joined the ingress group');
    applyPauseState();
  });
  consumer.on(consumer.events.REBALANCING, () => {
    void committer.commitNow();
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    metrics.consumerCrash(options.group, payload.restart);
    if (!payload.restart) crashed = true;
    logger.error({ err: payload.error, restart: payload.restart }, 'ingress consumer crashed');
  });

  return {
    async start(eachBatch) {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 8,
        eachBatch,
      });
      committer.start();
    },
    pauseAll: () => consumer.pause([{ topic }]),
    resumeAll: () => {
      if (!options.shouldPause()) applyPauseState();
    },
    stopPartition(partition) {
      stopped.add(partition);
      consumer.pause([{ topic, partitions: [partition] }]);
    },
    stoppedPartitions: () => [...stopped],
    joined: () => joined,
    crashed: () => crashed,
    assignment: () => assigned,
  };
};
