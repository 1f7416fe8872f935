/**
 * What a `sluice drain` run covers, read before it consumes: for each partition of the
 * drained topics, where retry.group stands (committed offset, or the earliest) and the end
 * offset seen at start. Also the guard against racing running sidecars on the tiers.
 */
import type { Admin } from 'kafkajs';
import { SluiceError } from '../errors';

/** What the operator asked of `sluice drain`. */
export interface DrainOptions {
  /** A topic to drain instead of the retry tiers, normally the dead-letter topic. */
  topic?: string;
  ignoreDelay: boolean;
  dryRun: boolean;
  /** Drain at most this many messages. */
  max?: number;
  force: boolean;
}

export interface PartitionRange {
  topic: string;
  partition: number;
  /** First offset to drain: retry.group's committed offset, or the earliest kept. */
  from: number;
  /** End offset seen at start (exclusive). */
  end: number;
}

export const rangeKey = (topic: string, partition: number): string => `${topic}/${partition}`;

export const planDrain = async (admin: Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets'>, group: string, topics: readonly string[]): Promise<PartitionRange[]> => {
  const committed = new Map<string, number>();
  for (const { topic, partitions } of await admin.fetchOffsets({ groupId: group, topics: [...topics] })) {
    for (const { partition, offset } of partitions) committed.set(rangeKey(topic, partition), Number(offset));
  }
  const ranges: PartitionRange[] = [];
  for (const topic of topics) {
    for (const { partition, low, high } of await admin.fetchTopicOffsets(topic)) {
      const start = committed.get(rangeKey(topic, partition)) ?? -1;
      ranges.push({ topic, partition, from: Math.max(start, Number(low)), end: Number(high) });
    }
  }
  return ranges;
};

export const countToDrain = (ranges: readonly PartitionRange[]): number =>
  ranges.reduce((sum, r) => sum + Math.max(0, r.end - r.from), 0);

/** Refuses (exit 1) while retry.group has members: sidecars are draining the tiers. */
export const refuseWhileGroupActive = async (admin: Pick<Admin, 'describeGroups'>, group: string): Promise<void> => {
  const { groups } = await admin.describeGroups([group]);
  const members = groups[0]?.members ?? [];
  if (members.length === 0) return;
  const who = members.map((m) => `${m.clientId}@${m.clientHost}`).join(', ');
  throw new SluiceError(
    'ARGUMENT_INVALID',
    `retry group ${group} has ${members.length} active member(s) (${who}): a running sluice is draining the retry tiers. Stop it, or pass --force to drain alongside it`,
  );
};
