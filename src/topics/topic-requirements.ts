/**
 * What DESIGN.md "Topics are checked at start" asks of each topic, as pure checks:
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

export const downstreamWarnings = (config: TopicConfig, ingressMaxBytes: number): string[] =>
  config.maxMessageBytes < ingressMaxBytes
    ? [`max.message.bytes is ${config.maxMessageBytes}, smaller than ingress's ${ingressMaxBytes}: a large message may end in the dead-letter topic as too-large`]
    : [];

/** The configs a created retry tier or dead-letter topic gets. */
export const createdTopicConfig = (ingressMaxBytes: number, largestTierMs: number): { name: string; value: string }[] => [
  { name: 'cleanup.policy', value: 'delete' },
  { name: 'retention.ms', value: String(createdRetentionMs(largestTierMs)) },
  { name: 'max.message.bytes', value: String(ingressMaxBytes + HEADER_ROOM_BYTES) },
];
