/**
 * Load for the benchmark: `prefill` writes `count` messages as fast as the broker takes them
 * (before a throughput run, so the load generator does not compete with the side measured);
 * `paced` writes at a fixed rate for a while (latency and accuracy runs). Message i comes
 * from producer `<prefix><i mod producers>` (header producer-id) on partition i mod
 * partitions, and carries its send time in header bench-sent and i in header bench-seq.
 */
import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { PARTITIONS } from './topics';

export interface LoadShape {
  producers: number;
  valueBytes: number;
  producerPrefix?: string;
}

const message = (i: number, shape: LoadShape, value: Buffer, sent: string): Message & { partition: number } => ({
  partition: i % PARTITIONS,
  value,
  headers: { 'producer-id': `${shape.producerPrefix ?? 'p-'}${i % shape.producers}`, 'bench-sent': sent, 'bench-seq': String(i) },
});

const MAX_SEND = 500;
/**
 * Messages per partition in one prefill send, so one record batch: 100 × 1 KiB is about 110 KiB.
 * Both sides fetch with kafkajs's default maxBytesPerPartition (1 MiB); the broker fills a fetch
 * with a slice of the log and the record batch cut at its end is thrown away and fetched again,
 * so a batch of half a MiB (the former 500) wasted up to half of every fetch; at 110 KiB at most
 * a tenth.
 */
const PREFILL_BATCH = 100;

const connect = async (kafka: Kafka): Promise<Producer> => {
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  return producer;
};

export const prefill = async (kafka: Kafka, topic: string, count: number, shape: LoadShape, chunk = PARTITIONS * PREFILL_BATCH, parallel = 4): Promise<void> => {
  const producer = await connect(kafka);
  const value = Buffer.alloc(shape.valueBytes, 'x');
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + chunk);
      const sent = String(Date.now());
      const messages = Array.from({ length: next - from }, (_, k) => message(from + k, shape, value, sent));
      await producer.send({ topic, messages, acks: 1 });
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, lane));
  } finally {
    await producer.disconnect();
  }
};

/** Writes `rate` messages/s for `durationMs` in 10 ms ticks; returns how many were written. */
export const paced = async (kafka: Kafka, topic: string, rate: number, durationMs: number, shape: LoadShape): Promise<number> => {
  const producer = await connect(kafka);
  const value = Buffer.alloc(shape.valueBytes, 'x');
  const start = Date.now();
  const sends: Promise<unknown>[] = [];
  let written = 0;
  try {
    for (let now = start; now - start < durationMs; now = Date.now()) {
      const due = Math.min(Math.floor(((now - start) * rate) / 1000), Math.floor((durationMs * rate) / 1000));
      // At most MAX_SEND messages a request: after a stall of the harness, catching up must not
      // build one partition's batch past the broker's message.max.bytes.
      for (const sent = String(Date.now()); due > written; ) {
        const upTo = Math.min(due, written + MAX_SEND);
        const messages = Array.from({ length: upTo - written }, (_, k) => message(written + k, shape, value, sent));
        written = upTo;
        sends.push(producer.send({ topic, messages, acks: 1 }));
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(sends);
    return written;
  } finally {
    await producer.disconnect();
  }
};
