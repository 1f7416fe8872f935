/**
 * Reads a downstream topic from the beginning until `expected` messages came, keeping only
 * what the benchmark judges: the producer id, the send time (header bench-sent), the message
 * number (bench-seq) and the
 * broker's append time (the topic uses LogAppendTime).
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import { randomGroupId } from '../../test/helpers/names';
import { waitFor } from '../../test/helpers/wait';

export interface Arrival {
  producer: string;
  sentMs: number;
  seq: string;
  appendMs: number;
}

/** Reads `topic` from the beginning with a fresh group, each record to `take`, until `done()` or the deadline. */
const readFromStart = async (
  kafka: Kafka, topic: string, take: (m: KafkaMessage) => void, done: () => boolean, deadline: number, what: () => string,
): Promise<void> => {
  const consumer = kafka.consumer({ groupId: randomGroupId('bench-read'), maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) take(m);
      },
    });
    await waitFor(done, { timeoutMs: Math.max(0, deadline - Date.now()), message: what });
  } finally {
    await consumer.disconnect();
  }
};

export const readDownstream = async (kafka: Kafka, topic: string, expected: number, timeoutMs = 60_000): Promise<Arrival[]> => {
  const arrivals: Arrival[] = [];
  await readFromStart(kafka, topic, (m) => {
    const headers = m.headers ?? {};
    arrivals.push({ producer: String(headers['producer-id'] ?? ''), sentMs: Number(String(headers['bench-sent'] ?? 'NaN')), seq: String(headers['bench-seq'] ?? ''), appendMs: Number(m.timestamp) });
  }, () => arrivals.length >= expected, Date.now() + timeoutMs, () => `${expected} messages on ${topic} (got ${arrivals.length})`);
  return arrivals;
};

export interface DistinctArrivals {
  /** Distinct bench-seq values read. */
  distinct: number;
  /** Records read beyond the first of each id. */
  duplicates: number;
  /** Broker append time of the first record, and of the record that brought the last new id. */
  firstAppendMs: number;
  lastNewAppendMs: number;
  /** Broker append time by which half of the distinct ids (the ceiling of distinct ÷ 2) were downstream. */
  halfAppendMs: number;
}

/**
 * Reads `topic` from the beginning until `expected` distinct ids (header bench-seq) came, or
 * the deadline: throughput counts distinct ids, so a message sent twice is no progress.
 */
export const readDistinct = async (kafka: Kafka, topic: string, expected: number, deadline: number): Promise<DistinctArrivals> => {
  const seen = new Set<string>();
  const newAppends: number[] = [];
  const out: DistinctArrivals = { distinct: 0, duplicates: 0, firstAppendMs: Infinity, lastNewAppendMs: -Infinity, halfAppendMs: NaN };
  await readFromStart(kafka, topic, (m) => {
    const id = String(m.headers?.['bench-seq'] ?? '');
    const appendMs = Number(m.timestamp);
    out.firstAppendMs = Math.min(out.firstAppendMs, appendMs);
    if (seen.has(id)) out.duplicates += 1;
    else {
      seen.add(id);
      newAppends.push(appendMs);
      out.lastNewAppendMs = Math.max(out.lastNewAppendMs, appendMs);
    }
    out.distinct = seen.size;
  }, () => seen.size >= expected, deadline, () => `${expected} distinct ids on ${topic} (got ${seen.size})`);
  // Partitions are read in no common order: the half-way moment is the middle of the sorted times.
  newAppends.sort((a, b) => a - b);
  out.halfAppendMs = newAppends[Math.ceil(newAppends.length / 2) - 1] ?? NaN;
  return out;
};
