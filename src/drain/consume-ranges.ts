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
import { type PartitionRange, rangeKey } from './drain-plan';
import { createPartitionPauser, type PartitionPauser } from './partition-pauser';
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
  const { kafka, ranges, max, tracker } = options;
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
    partitionAssigners: [subscriptionAssigner],
  });
  const pauser = createPartitionPauser({ consumer, clock: systemClock });
  const byKey = new Map(ranges.map((r) => [rangeKey(r.topic, r.partition), r]));
  const next = new Map<string, number>();
  const accepted = new Set<string>();
  let assigned: string[] | undefined;

  const accept: Accept = (topic, partition, message) => {
    const key = rangeKey(topic, partition);
    const range = byKey.get(key);
    const offset = Number(message.offset);
    const id = `${key}/${offset}`;
    const full = max !== undefined && accepted.size >= max && !accepted.has(id);
    if (!range || offset >= range.end || full) {
      consumer.pause([{ topic, partitions: [partition] }]);
      return false;
    }
    accepted.add(id);
    return true;
  };
  const reachedEnd = (key: string): boolean => {
    const range = byKey.get(key);
    return !range || (next.get(key) ?? range.from) >= range.end;
  };
  const done = (): boolean =>
    assigned !== undefined &&
    tracker.inFlight() === 0 &&
    ((max !== undefined && accepted.size >= max) || assigned.every(reachedEnd));

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const list = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions }));
    tracker.retain(list);
    pauser.onAssignment(list);
    assigned = list.flatMap(({ topic, partitions }) => partitions.map((p) => rangeKey(topic, p)));
    const notOurs = ranges.filter((r) => !assigned?.includes(rangeKey(r.topic, r.partition)));
    if (notOurs.length) options.logger.warn({ partitions: notOurs.map((r) => rangeKey(r.topic, r.partition)) }, 'other members of the group own these partitions: not drained by this run');
  });
  const committer = options.createCommitter({ tracker, target: consumer, logger: options.logger, intervalMs: options.commitIntervalMs });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...new Set(ranges.map((r) => r.topic))], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: ({ batch, resolveOffset, isRunning, isStale }) => {
        const controls: BatchControls = {
          batch,
          isRunning,
          isStale,
          resolveOffset: (offset) => {
            next.set(rangeKey(batch.topic, batch.partition), Number(offset) + 1);
            resolveOffset(offset);
          },
        };
        return options.onBatch(controls, accept, pauser);
      },
    });
    committer.start();
    await waitUntil(done);
    committer.stop();
    await committer.commitNow();
  } finally {
    pauser.close();
    await consumer.stop();
    await consumer.disconnect();
  }
};
