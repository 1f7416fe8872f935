/**
 * Consumes fixed offset ranges as a member of a group (sluice drain as retry.group): every
 * message below the end offset seen at start is handed over once (at most `max` in all),
 * partitions past their end are paused, the acknowledged prefix is committed, and it returns
 * once every assigned partition reached its end (or `max` was taken) and nothing is in flight.
 * With --force beside running sidecars, only the partitions this member was assigned count.
 */
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { systemClock } from '../clock';
import type { Committer, CommitTarget } from '../commit/committer';
import type { OffsetTracker } from '../commit/offset-tracker';
import type { BatchControls } from './drain-batch';
import type { PartitionRange } from './drain-plan';
import { createPartitionPauser, type PartitionPauser } from './partition-pauser';
import { createRangeProgress } from './range-progress';
import { subscriptionAssigner } from './subscription-assigner';

export type Accept = (topic: string, partition: number, message: KafkaMessage) => boolean;

export interface ConsumeRangesOptions {
  kafka: Kafka;
  groupId: string;
  ranges: readonly PartitionRange[];
  max?: number;
  tracker: OffsetTracker;
  logger: Logger;
  commitIntervalMs: number;
  createCommitter(options: { tracker: OffsetTracker; target: CommitTarget; logger: Logger; intervalMs?: number }): Committer;
  onBatch(controls: BatchControls, accept: Accept, pauser: PartitionPauser): Promise<void>;
}

const waitUntil = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
};

export const consumeRanges = async (options: ConsumeRangesOptions): Promise<void> => {
  const { kafka, ranges, tracker } = options;
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
    partitionAssigners: [subscriptionAssigner],
  });
  const pauser = createPartitionPauser({ consumer, clock: systemClock });
  const progress = createRangeProgress(ranges, options.max);
  const accept: Accept = (topic, partition, message) => {
    const taken = progress.accept(topic, partition, Number(message.offset));
    if (!taken) consumer.pause([{ topic, partitions: [partition] }]);
    return taken;
  };
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const list = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    tracker.retain(list);
    pauser.onAssignment(list);
    progress.assigned(list);
    const notOurs = progress.notOurs();
    if (notOurs.length) options.logger.warn({ partitions: notOurs }, 'other members of the group own these partitions: not drained by this run');
  });
  const committer = options.createCommitter({ tracker, target: consumer, logger: options.logger, intervalMs: options.commitIntervalMs });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...new Set(ranges.map((r) => r.topic))], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: ({ batch, resolveOffset, isRunning, isStale }) => {
        const resolve = (offset: string): void => {
          progress.resolved(batch.topic, batch.partition, Number(offset));
          resolveOffset(offset);
        };
        return options.onBatch({ batch, isRunning, isStale, resolveOffset: resolve }, accept, pauser);
      },
    });
    committer.start();
    await waitUntil(() => progress.done(tracker.inFlight()));
    committer.stop();
    await committer.commitNow();
  } finally {
    pauser.close();
    await consumer.stop();
    await consumer.disconnect();
  }
};
