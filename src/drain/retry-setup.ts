/** What the drainer and `sluice drain` read once at start: the retry policy and the partition counts of the topics they write. */
import type { Kafka } from 'kafkajs';
import type { Config } from '../config/types';
import { SluiceError } from '../errors';
import type { RetryPolicy } from './retry-steps';

export const retryPolicyOf = (config: Config): RetryPolicy => ({
  tiers: config.retry.tiers,
  holdMaxMs: config.hold.maxMs,
  maxAttempts: config.retry.maxAttempts,
  maxAgeMs: config.retry.maxAgeMs,
});

/** Partition count of each topic; a missing topic is TOPIC_INVALID (exit 2) naming it. */
export const fetchPartitionCounts = async (kafka: Kafka, topics: readonly string[]): Promise<Map<string, number>> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      throw new SluiceError('TOPIC_INVALID', `missing topic(s): ${missing.join(', ')} (create them, or start sluice run once with topics.create=true)`);
    }
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
    return new Map(metadata.map((t) => [t.name, t.partitions.length]));
  } finally {
    await admin.disconnect();
  }
};
