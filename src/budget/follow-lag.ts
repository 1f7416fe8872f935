/**
 * How far a consumer group lags on the downstream topic (`total.follow.group`), read with
 * kafkajs's admin API: Σ over partitions of (high watermark − committed offset); a partition the
 * group never committed counts from its low watermark. A group that has committed nothing on the
 * topic (not started yet, or a misspelt name) has no lag to follow: undefined, and the budget
 * takes no step.
 */
import type { Admin } from 'kafkajs';

export const readLag = async (admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>, group: string, topic: string): Promise<number | undefined> => {
  const [committed, ends] = await Promise.all([admin.fetchOffsets({ groupId: group, topics: [topic] }), admin.fetchTopicOffsets(topic)]);
  const byPartition = new Map<number, number>();
  for (const t of committed) for (const p of t.partitions) byPartition.set(p.partition, Number(p.offset));
  if (![...byPartition.values()].some((offset) => offset >= 0)) return undefined;
  let lag = 0;
  for (const end of ends) {
    const high = Number(end.high);
    const at = byPartition.get(end.partition);
    const from = at !== undefined && at >= 0 ? at : Number(end.low);
    lag += Math.max(0, high - from);
  }
  return lag;
};

/** maxLag as written: a count of messages, or a duration of the configured rate. */
export const maxLagMessages = (maxLag: { kind: 'count'; messages: number } | { kind: 'duration'; ms: number }, rate: number): number =>
  maxLag.kind === 'count' ? maxLag.messages : (maxLag.ms * rate) / 1000;
