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
