/**
 * Topics of one benchmark run, built on test/helpers/kafka: random names, downstream topics
 * with LogAppendTime (latency and rate are judged by the broker's append time), end-offset
 * sums, and deletion of everything the run created (1 KiB × 200k a run adds up).
 */
import type { Admin, Kafka } from 'kafkajs';
import { createTopic } from '../../test/helpers/kafka';

export const PARTITIONS = 8;

export interface TopicBook {
  /** An ingress topic, PARTITIONS partitions unless told. */
  ingress(prefix: string, partitions?: number): Promise<string>;
  downstream(prefix: string): Promise<string>;
  /** Records topics created by others (the sidecar's retry tiers) for deletion. */
  remember(...topics: string[]): void;
  total(topic: string): Promise<number>;
  deleteAll(): Promise<void>;
}

export const topicBook = async (kafka: Kafka): Promise<TopicBook> => {
  const admin: Admin = kafka.admin();
  await admin.connect();
  const created: string[] = [];
  const make = async (prefix: string, appendTime: boolean, partitions = PARTITIONS): Promise<string> => {
    const configEntries = appendTime ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : undefined;
    const topic = await createTopic(kafka, { prefix: `bench-${prefix}`, partitions, configEntries });
    created.push(topic);
    return topic;
  };
  return {
    ingress: (prefix, partitions) => make(prefix, false, partitions),
    downstream: (prefix) => make(prefix, true),
    remember: (...topics) => created.push(...topics),
    async total(topic) {
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
    },
    async deleteAll() {
      const existing = new Set(await admin.listTopics());
      const topics = created.splice(0).filter((t) => existing.has(t));
      if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 }).catch(() => undefined);
      await admin.disconnect();
    },
  };
};

/** Polls `count()` until it reaches `target`; returns when it first moved and when it got there. */
export const watchCount = async (
  count: () => Promise<number>, target: number, { timeoutMs = 300_000, intervalMs = 50 } = {},
): Promise<{ firstAt: number; firstCount: number; doneAt: number }> => {
  const deadline = Date.now() + timeoutMs;
  let first: { at: number; count: number } | undefined;
  for (;;) {
    const n = await count();
    const now = Date.now();
    if (n > 0 && !first) first = { at: now, count: n };
    if (n >= target && first) return { firstAt: first.at, firstCount: first.count, doneAt: now };
    if (now > deadline) throw new Error(`only ${n} of ${target} messages arrived downstream within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
};
