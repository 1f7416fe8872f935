/**
 * The topic check at start of `sluice run`: ingress and downstream must exist; the retry
 * tiers and the dead-letter topic must exist configured for parking, or are created so when
 * topics.create is true. Any problem is a SluiceError TOPIC_INVALID (exit 2) naming the topic;
 * a Kafka error on the way is TOPIC_INVALID or KAFKA_UNREACHABLE (exit 2 as well).
 * Returns every topic's partition count (the park writer picks a producer's partition).
 */
import { Admin, ConfigResourceTypes } from 'kafkajs';
import type { Logger } from 'pino';
import { kafkaErrorOf, SluiceError } from '../errors';
import { createTopicsWithLeaders } from './create-topics';
import { createdTopicConfig, downstreamWarnings, parkTopicProblems, parkTopicWarnings, TopicConfig } from './topic-requirements';

export interface TopicPlan {
  ingress: string;
  downstream: string;
  /** Retry tier topics and the dead-letter topic. */
  parking: readonly string[];
  /** The dead-letter topic (one of `parking`): not read by a tier's delay, so it keeps the writer's timestamps. */
  deadLetter: string;
  largestTierMs: number;
  create: boolean;
}

const readConfigs = async (admin: Admin, topics: readonly string[]): Promise<Map<string, TopicConfig>> => {
  const reply = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['cleanup.policy', 'retention.ms', 'max.message.bytes', 'message.timestamp.type'] })),
  });
  const out = new Map<string, TopicConfig>();
  for (const resource of reply.resources) {
    const get = (key: string): string => resource.configEntries.find((e) => e.configName === key)?.configValue ?? '';
    out.set(resource.resourceName, {
      cleanupPolicy: get('cleanup.policy'),
      retentionMs: Number(get('retention.ms')),
      maxMessageBytes: Number(get('max.message.bytes')),
      timestampType: get('message.timestamp.type'),
    });
  }
  return out;
};

const partitionCounts = async (admin: Admin, topics: readonly string[]): Promise<Map<string, number>> => {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...topics] });
  return new Map(meta.map((t) => [t.name, t.partitions.length]));
};

/** Partition count of each topic a command needs (`sluice drain`); a missing topic is TOPIC_INVALID (exit 2) naming it. */
export const existingPartitionCounts = async (admin: Admin, topics: readonly string[]): Promise<Map<string, number>> => {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t));
  if (missing.length > 0) {
    throw new SluiceError('TOPIC_INVALID', `missing topic(s): ${missing.join(', ')} (create them, or start sluice run once with topics.create=true)`);
  }
  return partitionCounts(admin, topics);
};

const invalid = (topic: string, what: string): SluiceError =>
  new SluiceError('TOPIC_INVALID', `topic ${topic}: ${what}`);

/** Any Kafka error on the way is a SluiceError too (exit 2), saying the topics were being checked. */
export const checkTopics = (admin: Admin, plan: TopicPlan, logger: Logger): Promise<Map<string, number>> =>
  checkTopicsOnce(admin, plan, logger).catch((error: unknown) => {
    throw kafkaErrorOf('checking the topics at start', error);
  });

const checkTopicsOnce = async (admin: Admin, plan: TopicPlan, logger: Logger): Promise<Map<string, number>> => {
  const existing = new Set(await admin.listTopics());
  for (const required of [plan.ingress, plan.downstream]) {
    if (!existing.has(required)) throw invalid(required, 'does not exist (sluice never creates the ingress or downstream topic)');
  }
  const [ingressConfig] = [...(await readConfigs(admin, [plan.ingress])).values()];
  const missing = plan.parking.filter((t) => !existing.has(t));
  if (missing.length > 0 && !plan.create) {
    throw invalid(missing[0], `does not exist; create it (cleanup.policy=delete, retention.ms > ${plan.largestTierMs}) or set topics.create=true${missing.length > 1 ? ` (also missing: ${missing.slice(1).join(', ')})` : ''}`);
  }
  if (missing.length > 0) {
    const partitions = (await partitionCounts(admin, [plan.ingress])).get(plan.ingress) ?? 1;
    const configEntriesOf = (topic: string) => createdTopicConfig(ingressConfig.maxMessageBytes, plan.largestTierMs, { tier: topic !== plan.deadLetter });
    await createTopicsWithLeaders(admin, missing.map((topic) => ({ topic, numPartitions: partitions, configEntries: configEntriesOf(topic) })));
    logger.info({ topics: missing, partitions }, 'created missing retry tier and dead-letter topics');
  }
  const configs = await readConfigs(admin, [plan.downstream, ...plan.parking]);
  for (const warning of downstreamWarnings(configs.get(plan.downstream) as TopicConfig, ingressConfig.maxMessageBytes)) {
    logger.warn({ topic: plan.downstream }, `topic ${plan.downstream}: ${warning}`);
  }
  for (const topic of plan.parking) {
    const problems = parkTopicProblems(configs.get(topic) as TopicConfig, ingressConfig.maxMessageBytes, plan.largestTierMs);
    if (problems.length > 0) throw invalid(topic, problems.join('; '));
    if (topic !== plan.deadLetter) for (const warning of parkTopicWarnings(configs.get(topic) as TopicConfig)) logger.warn({ topic }, `topic ${topic}: ${warning}`);
  }
  return partitionCounts(admin, [plan.ingress, plan.downstream, ...plan.parking]);
};
