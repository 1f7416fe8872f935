/**
 * Reads a downstream topic from the beginning until `expected` messages came, keeping only
 * what the benchmark judges: the producer id, the send time (header bench-sent), the message
 * number (bench-seq) and the
 * broker's append time (the topic uses LogAppendTime).
 */
import type { Kafka } from 'kafkajs';
import { randomGroupId } from '../../test/helpers/names';
import { waitFor } from '../../test/helpers/wait';

export interface Arrival {
  producer: string;
  sentMs: number;
  seq: string;
  appendMs: number;
}

export const readDownstream = async (kafka: Kafka, topic: string, expected: number, timeoutMs = 60_000): Promise<Arrival[]> => {
  const arrivals: Arrival[] = [];
  const consumer = kafka.consumer({ groupId: randomGroupId('bench-read'), maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const headers = m.headers ?? {};
          arrivals.push({ producer: String(headers['producer-id'] ?? ''), sentMs: Number(String(headers['bench-sent'] ?? 'NaN')), seq: String(headers['bench-seq'] ?? ''), appendMs: Number(m.timestamp) });
        }
      },
    });
    await waitFor(() => arrivals.length >= expected, { timeoutMs, message: `${expected} messages on ${topic} (got ${arrivals.length})` });
    return arrivals;
  } finally {
    await consumer.disconnect();
  }
};

export interface DistinctArrivals {
  /** Distinct bench-seq values read. */
  distinct: number;
  /** Records read beyond the first of each id. */
  duplicates: number;
  /** Broker append time of the first record, and of the record that brought the last new id. */
  firstAppendMs: number;
  lastNewAppendMs: number;
}

/**
 * Reads `topic` from the beginning until `expected` distinct ids (header bench-seq) came, or
 * the deadline: throughput counts distinct ids, so a message sent twice is no progress.
 */
export const readDistinct = async (kafka: Kafka, topic: string, expected: number, deadline: number): Promise<DistinctArrivals> => {
  const seen = new Set<string>();
  const out: DistinctArrivals = { distinct: 0, duplicates: 0, firstAppendMs: Infinity, lastNewAppendMs: -Infinity };
  const consumer = kafka.consumer({ groupId: randomGroupId('bench-distinct'), maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const id = String(m.headers?.['bench-seq'] ?? '');
          const appendMs = Number(m.timestamp);
          out.firstAppendMs = Math.min(out.firstAppendMs, appendMs);
          if (seen.has(id)) out.duplicates += 1;
          else {
            seen.add(id);
            out.lastNewAppendMs = Math.max(out.lastNewAppendMs, appendMs);
          }
        }
        out.distinct = seen.size;
      },
    });
    await waitFor(() => seen.size >= expected, { timeoutMs: Math.max(0, deadline - Date.now()), message: `${expected} distinct ids on ${topic} (got ${seen.size})` });
    return out;
  } finally {
    await consumer.disconnect();
  }
};
