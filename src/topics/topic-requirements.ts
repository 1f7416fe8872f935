/**
 * What docs/design.md "Topics are checked at start" asks of each topic, as pure checks:
 * retry tiers and the dead-letter topic need `cleanup.policy=delete`, a retention longer
 * than the largest tier and a `max.message.bytes` at least ingress's plus room for sluice's
 * headers; the downstream topic only warns when its `max.message.bytes` is below ingress's.
 */

/** Room for the sluice-* headers a parked message gains (seven short headers, generously). */
export const HEADER_ROOM_BYTES = 1024;

/** Retention of a topic sluice creates: a week, or four times the largest tier if longer. */
export const createdRetentionMs = (largestTierMs: number): number => Math.max(7 * 86_400_000, 4 * largestTierMs);

export interface TopicConfig {
  cleanupPolicy: string;
  /** -1 means forever. */
  retentionMs: number;
  maxMessageBytes: number;
  /** message.timestamp.type: CreateTime (the writer's) or LogAppendTime (the broker's). */
  timestampType: string;
}

export const parkTopicProblems = (config: TopicConfig, ingressMaxBytes: number, largestTierMs: number): string[] => {
  const problems: string[] = [];
  const policies = config.cleanupPolicy.split(',').map((p) => p.trim());
  if (policies.length !== 1 || policies[0] !== 'delete') {
    problems.push(`cleanup.policy is "${config.cleanupPolicy}", expected "delete"`);
  }
  if (config.retentionMs !== -1 && config.retentionMs <= largestTierMs) {
    problems.push(`retention.ms is ${config.retentionMs}, expected more than the largest retry tier (${largestTierMs})`);
  }
  const needed = ingressMaxBytes + HEADER_ROOM_BYTES;
  if (config.maxMessageBytes < needed) {
    problems.push(`max.message.bytes is ${config.maxMessageBytes}, expected at least ${needed} (ingress's ${ingressMaxBytes} plus ${HEADER_ROOM_BYTES} for sluice's headers)`);
  }
  return problems;
};

/** A tier read by the timestamp its writer chose lets a writer other than sluice pick when its record is taken. */
export const parkTopicWarnings = (config: TopicConfig): string[] =>
  config.timestampType === 'LogAppendTime'
    ? []
    : [`message.timestamp.type is ${config.timestampType || 'unknown'}: set LogAppendTime, so a record's tier delay counts from when the broker appended it (and let only sluice write the tier: README "Kafka ACLs")`];

export const downstreamWarnings = (config: TopicConfig, ingressMaxBytes: number): string[] =>
  config.maxMessageBytes < ingressMaxBytes
    ? [`max.message.bytes is ${config.maxMessageBytes}, smaller than ingress's ${ingressMaxBytes}: a large message may end in the dead-letter topic as too-large`]
    : [];

/** The configs a created retry tier (its delay counts from the broker's append time) or dead-letter topic gets. */
export const createdTopicConfig = (ingressMaxBytes: number, largestTierMs: number, { tier }: { tier: boolean }): { name: string; value: string }[] => [
  { name: 'cleanup.policy', value: 'delete' },
  { name: 'retention.ms', value: String(createdRetentionMs(largestTierMs)) },
  { name: 'max.message.bytes', value: String(ingressMaxBytes + HEADER_ROOM_BYTES) },
  ...(tier ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : []),
];
