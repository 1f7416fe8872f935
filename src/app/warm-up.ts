/**
 * The warm-up `sluice run` does before its consumers join their groups: synthetic ingress
 * batches go the whole way of a message — read, identified, decided, dispatched, written —
 * through a pipeline of the very same code, on an in-memory store, a throwaway metrics registry
 * and a producer that discards what it is handed; nothing reaches Kafka, Redis or the metrics.
 * V8 compiles that hot code then, instead of in the first seconds of traffic, when a replica
 * just started or added would otherwise forward slower than it can (docs/performance.md). The
 * batches are what kafkajs's fetch decoder makes of record batches its encoder wrote, so the
 * messages have the shape real ones have. Bounded by a count of messages and a time.
 */
import { createRequire } from 'node:module';
import type { Batch, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { systemClock } from '../clock';
import type { Config } from '../config/types';
import type { RuleView } from '../decide/fetch-decider';
import { createStoreClock } from '../decide/store-clock';
import { compileRule } from '../limit/compile-rule';
import { createMemoryStore } from '../limit/memory-store';
import { createPromMetrics } from '../metrics/prom-metrics';
import { createPipeline, ingressFlow, limiterOn } from './wiring';

export interface WarmUpOptions {
  /** Messages at most (in batches of `batch`); 0: no warm-up. */
  messages: number;
  /** Wall-clock time at most, ms (the batch under way finishes; the first is always taken). */
  maxMs: number;
  batch: number;
}

export const WARM_UP: WarmUpOptions = { messages: 10_000, maxMs: 2000, batch: 500 };

const PRODUCERS = 100;
const PARTITIONS = 8;
const VALUE = Buffer.alloc(256, 0x61);

type Encoded = { buffer: Buffer };
interface KafkajsCodec {
  record(r: { offsetDelta: number; timestampDelta: number; key: Buffer; value: Buffer; headers: { key: string; value: Buffer }[] }): Encoded;
  recordBatch(b: { records: Encoded[]; firstOffset: string; firstTimestamp: number; maxTimestamp: number; lastOffsetDelta: number }): Promise<Encoded>;
  decodeMessages(decoder: unknown): Promise<KafkaMessage[]>;
  Decoder: new (buffer: Buffer) => unknown;
  Batch: new (topic: string, fetchedOffset: string, data: { partition: number; highWatermark: string; messages: KafkaMessage[]; abortedTransactions: [] }) => Batch;
}

let loaded: KafkajsCodec | undefined;
const kafkajsCodec = (): KafkajsCodec => {
  const load = createRequire(require.resolve('kafkajs/package.json'));
  return loaded ??= {
    record: load('./src/protocol/recordBatch/record/v0') as KafkajsCodec['record'],
    recordBatch: (load('./src/protocol/recordBatch/v0') as { RecordBatch: KafkajsCodec['recordBatch'] }).RecordBatch,
    decodeMessages: load('./src/protocol/requests/fetch/v4/decodeMessages') as KafkajsCodec['decodeMessages'],
    Decoder: load('./src/protocol/decoder') as KafkajsCodec['Decoder'],
    Batch: load('./src/consumer/batch') as KafkajsCodec['Batch'],
  };
};

/** One fetched batch as kafkajs hands it: `count` records of 100 producers from `offset` on. */
export const syntheticBatch = async (config: Config, where: { topic: string; partition: number; offset: number; count: number }): Promise<Batch> => {
  const codec = kafkajsCodec();
  const now = Date.now();
  const records: Encoded[] = [];
  for (let i = 0; i < where.count; i += 1) {
    const producer = `warm-up-${(where.offset + i) % PRODUCERS}`;
    const headers = [{ key: 'trace-id', value: Buffer.from(`${where.offset + i}`) }, { key: 'content-type', value: Buffer.from('application/json') }];
    if (config.identity.source === 'header') headers.unshift({ key: config.identity.header, value: Buffer.from(producer) });
    const key = Buffer.from(config.identity.source === 'key' ? producer : `key-${i}`);
    records.push(codec.record({ offsetDelta: i, timestampDelta: 0, key, value: VALUE, headers }));
  }
  const encoded = await codec.recordBatch({ records, firstOffset: String(where.offset), firstTimestamp: now, maxTimestamp: now, lastOffsetDelta: where.count - 1 });
  const sized = Buffer.alloc(4 + encoded.buffer.length);
  sized.writeInt32BE(encoded.buffer.length, 0);
  encoded.buffer.copy(sized, 4);
  const messages = await codec.decodeMessages(new codec.Decoder(sized));
  const highWatermark = String(where.offset + where.count);
  return new codec.Batch(where.topic, String(where.offset), { partition: where.partition, highWatermark, messages, abortedTransactions: [] });
};

const rule = ((): RuleView => {
  const compiled = compileRule({ rate: '1000000/s', queue: '1m' });
  if (!compiled.ok) throw new Error('the warm-up rule does not compile');
  return { name: 'warm-up', unlimited: false, shadow: false, limit: compiled.rule };
})();

/**
 * Runs the warm-up; resolves with how many messages it took and how many of them it wrote
 * downstream (all of them, unless the hold still had some at the end). Never throws: a warm-up that fails is logged
 * (the sidecar starts cold, as without one).
 */
export const warmUp = async (config: Config, deps: { kafka: Kafka; logger: Logger; partitions: ReadonlyMap<string, number> }, options: WarmUpOptions = WARM_UP): Promise<{ messages: number; written: number; ms: number }> => {
  const startedAt = Date.now();
  let messages = 0;
  let written = 0;
  if (options.messages <= 0) return { messages, written, ms: 0 };
  const logger = deps.logger.child({ component: 'warm-up' }, { level: 'silent' });
  try {
    const clock = createStoreClock(systemClock);
    const metrics = createPromMetrics();
    const limiter = limiterOn(config, { store: createMemoryStore({ clock }), clock, members: () => 1, metrics, logger });
    const producer = {
      sendBatch: async (batch: { topicMessages: { topic: string; messages: unknown[] }[] }): Promise<unknown> => {
        for (const t of batch.topicMessages) if (t.topic === config.topics.downstream) written += t.messages.length;
        return [];
      },
    };
    const pipeline = createPipeline(config, { producer, limiter, ruleOf: () => rule, partitions: deps.partitions, metrics, logger });
    const flow = ingressFlow(config, deps.kafka, pipeline);
    const controls = { resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false };
    const next = new Array<number>(PARTITIONS).fill(0);
    // The first batch whatever the time; then as long as both bounds allow.
    for (let n = 0; messages < options.messages && (n === 0 || Date.now() - startedAt < options.maxMs); n += 1) {
      const partition = n % PARTITIONS;
      const count = Math.min(options.batch, options.messages - messages);
      const batch = await syntheticBatch(config, { topic: config.topics.ingress, partition, offset: next[partition], count });
      next[partition] += count;
      await flow.handle({ ...controls, batch });
      messages += count;
    }
    // What waits for its slot (microseconds at this rate) leaves, then the sender has written it all.
    const { hold } = pipeline.shared;
    await Promise.race([hold.whenEmpty(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    await pipeline.sender.flush();
    pipeline.sender.close();
    hold.close();
  } catch (error) {
    deps.logger.warn({ err: error }, 'the warm-up failed; starting without it');
  }
  return { messages, written, ms: Date.now() - startedAt };
};
