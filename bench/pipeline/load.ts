/**
 * Load for the benchmark: `prefill` writes `count` messages as fast as the broker takes them
 * (before a throughput run, so the load generator does not compete with the side measured);
 * `paced` writes at a fixed rate for a while (latency and accuracy runs). Message i comes
 * from producer `<prefix><i mod producers>` (header producer-id) on partition i mod
 * partitions (PARTITIONS unless the shape says), and carries its send time in header
 * bench-sent and i in header bench-seq; a shape with `headers` > 3 adds headers such as
 * applications send (trace ids, content type, schema, tenant …) up to that many.
 */
import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { PARTITIONS } from './topics';

export interface LoadShape {
  producers: number;
  valueBytes: number;
  producerPrefix?: string;
  /** Headers per message, the three the bench reads included (default 3, at most 3 + EXTRA_HEADERS.length). */
  headers?: number;
  /** Partitions of the topic written (default PARTITIONS): message i goes to partition i mod partitions. */
  partitions?: number;
}

/** Headers beyond the bench's own three, in this order, as applications commonly send them (names and values 10–40 bytes). */
export const EXTRA_HEADERS: readonly (readonly [string, string])[] = [
  ['traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
  ['content-type', 'application/json'],
  ['schema-id', '100042'],
  ['tenant', 'tenant-0007'],
  ['source-service', 'orders-api'],
  ['correlation-id', '6f1c2d9e-8a4b-4c3d-9e2f-1a2b3c4d5e6f'],
  ['event-type', 'order.updated.v2'],
];

const BENCH_HEADERS = 3;

const extraHeaders = (shape: LoadShape): Record<string, string> => {
  const extra = (shape.headers ?? BENCH_HEADERS) - BENCH_HEADERS;
  if (extra < 0 || extra > EXTRA_HEADERS.length) throw new Error(`headers per message: ${BENCH_HEADERS} to ${BENCH_HEADERS + EXTRA_HEADERS.length}, got ${shape.headers}`);
  return Object.fromEntries(EXTRA_HEADERS.slice(0, extra));
};

const message = (i: number, shape: LoadShape, value: Buffer, sent: string, extra: Record<string, string>): Message & { partition: number } => ({
  partition: i % (shape.partitions ?? PARTITIONS),
  value,
  headers: { 'producer-id': `${shape.producerPrefix ?? 'p-'}${i % shape.producers}`, 'bench-sent': sent, 'bench-seq': String(i), ...extra },
});

/** Bytes of a message as the producer wrote them: key + value + every header name and value. */
const payloadBytes = (m: Message): number =>
  (m.value as Buffer).length + Object.entries(m.headers ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);

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

/** Writes `count` messages; returns their mean size as the producer wrote them (key + value + header names and values). */
export const prefill = async (kafka: Kafka, topic: string, count: number, shape: LoadShape, parallel = 4): Promise<number> => {
  const producer = await connect(kafka);
  const value = Buffer.alloc(shape.valueBytes, 'x');
  const extra = extraHeaders(shape);
  const chunk = (shape.partitions ?? PARTITIONS) * PREFILL_BATCH;
  let next = 0;
  let bytes = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + chunk);
      const sent = String(Date.now());
      const messages = Array.from({ length: next - from }, (_, k) => message(from + k, shape, value, sent, extra));
      for (const m of messages) bytes += payloadBytes(m);
      await producer.send({ topic, messages, acks: 1 });
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, lane));
  } finally {
    await producer.disconnect();
  }
  return bytes / count;
};

/** Writes `rate` messages/s for `durationMs` in 10 ms ticks; returns how many were written. */
export const paced = async (kafka: Kafka, topic: string, rate: number, durationMs: number, shape: LoadShape): Promise<number> => {
  const producer = await connect(kafka);
  const value = Buffer.alloc(shape.valueBytes, 'x');
  const extra = extraHeaders(shape);
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
        const messages = Array.from({ length: upTo - written }, (_, k) => message(written + k, shape, value, sent, extra));
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
