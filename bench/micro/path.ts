/**
 * sluice's own part of a message's way, without the broker's noise: synthetic fetched batches
 * (kafkajs's encoder, then its decoder: real records, 500 a batch, over 8 partitions) handed to
 * the ingress flow's batch handler as the consumer would, through the real decider on the Redis
 * store, the dispatcher, hold, lanes, writer and sender, to a producer that discards what it is
 * handed. The rule lets everything through at once (1,000,000/s), as the bench's throughput phase.
 * Reports the main thread's CPU per message (from /proc; the harness's own decoding, about 2.7 µs
 * on the bench machine, included), the wall time per message in the first 20,000 (cold) and in
 * the second half (warm), and the store's calls (decide rounds and lease renewals). Medians of 5 runs a side,
 * alternated: one run varies by ±0.5 µs.
 *   SLUICE_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/micro/path.ts [messages] [code: src/ (default), another checkout's, or a tsc build]
 * (A tsc build — `npx tsc -p tsconfig.build.json --outDir node_modules/.cache/sluice-tsc`, under
 * node_modules so it finds the dependencies, then each src/<folder>/lua copied to that folder's
 * <folder>/lua — makes a profile name functions and lines as written. dist/ is one bundled file
 * since 1b2964c: this harness needs the modules apart.)
 * Environment: PRODUCERS (100), HEADERS (2 besides the producer's), VALUE (bytes, 100),
 * PROF=file.cpuprofile (a CPU profile of the measured part), HEAP_PROF=file.heapprofile (its
 * allocations, sampled every 4 KiB, those collected since too). The Redis is flushed first.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Kafka, type Batch, type KafkaMessage, type Producer } from 'kafkajs';
import pino from 'pino';

type Wiring = typeof import('../../src/app/wiring');
const code = resolve(process.argv[3] ?? resolve(__dirname, '../../src'));
/* eslint-disable @typescript-eslint/no-require-imports -- the checkout to measure is chosen at run time */
const wiring = require(`${code}/app/wiring`) as Wiring;
const { loadConfig } = require(`${code}/config/load-config`) as typeof import('../../src/config/load-config');
const { systemClock } = require(`${code}/clock`) as typeof import('../../src/clock');
const { createStoreClock } = require(`${code}/decide/store-clock`) as typeof import('../../src/decide/store-clock');
const { compileRule } = require(`${code}/limit/compile-rule`) as typeof import('../../src/limit/compile-rule');
const { createPromMetrics } = require(`${code}/metrics/prom-metrics`) as typeof import('../../src/metrics/prom-metrics');
const { mainThreadMicros } = require('../common/main-thread-cpu.cjs') as { mainThreadMicros(): number | undefined };
/* eslint-enable @typescript-eslint/no-require-imports */

const MESSAGES = Number(process.argv[2] ?? 200_000);
const BATCH = 500;
const PARTITIONS = 8;
const COLD = 20_000;
const PRODUCERS = Number(process.env.PRODUCERS ?? 100);
const HEADERS = Number(process.env.HEADERS ?? 2);
const VALUE = Buffer.alloc(Number(process.env.VALUE ?? 100), 0x61);

// kafkajs's own record and batch codecs: what the consumer hands over is what it decodes.
const load = createRequire(require.resolve('kafkajs/package.json'));
const encodeRecord = load('./src/protocol/recordBatch/record/v0') as (r: object) => unknown;
const encodeBatch = (load('./src/protocol/recordBatch/v0') as { RecordBatch(b: object): Promise<{ buffer: Buffer }> }).RecordBatch;
const decodeMessages = load('./src/protocol/requests/fetch/v4/decodeMessages') as (decoder: unknown) => Promise<KafkaMessage[]>;
const Decoder = load('./src/protocol/decoder') as new (buffer: Buffer) => unknown;
const BatchOf = load('./src/consumer/batch') as new (topic: string, fetchedOffset: string, data: object) => Batch;

/** One partition's batch of BATCH records, length-prefixed as a fetch response holds it; its base offset is rewritten per use. */
const template = async (identityHeader: string): Promise<Buffer> => {
  const now = Date.now();
  const records = Array.from({ length: BATCH }, (_, i) => {
    const headers = [{ key: identityHeader, value: Buffer.from(`p-${i % PRODUCERS}`) }];
    for (let h = 0; h < HEADERS; h += 1) headers.push({ key: `h${h}`, value: Buffer.from(`${i}-${h}`) });
    return encodeRecord({ offsetDelta: i, timestampDelta: 0, key: Buffer.from(`key-${i}`), value: VALUE, headers });
  });
  const { buffer } = await encodeBatch({ records, firstOffset: '0', firstTimestamp: now, maxTimestamp: now, lastOffsetDelta: BATCH - 1 });
  const sized = Buffer.alloc(4 + buffer.length);
  sized.writeInt32BE(buffer.length, 0);
  buffer.copy(sized, 4);
  return sized;
};

/** The main thread's CPU so far, ms (Linux; 10 ms ticks). */
const mainThreadMs = (): number => {
  const micros = mainThreadMicros();
  if (micros === undefined) throw new Error('the main thread\'s CPU is read from /proc (Linux only)');
  return micros / 1000;
};

const main = async (): Promise<void> => {
  if (!process.env.SLUICE_REDIS_URL) throw new Error('SLUICE_REDIS_URL is not set: eval "$(npm run -s services -- up)" first');
  // One standalone Redis (SLUICE_REDIS_URL), as the bench's sidecar uses: a round is one script call.
  const env = { ...process.env, SLUICE_REDIS_CLUSTER_NODES: undefined, SLUICE_INGRESS_TOPIC: 'in', SLUICE_DOWNSTREAM_TOPIC: 'down', SLUICE_DEAD_LETTER_TOPIC: 'dlq' };
  const config = loadConfig({ env });
  const logger = pino({ level: 'warn' });
  const redis = wiring.createRedis(config);
  if (redis.status !== 'ready') await new Promise((ready) => redis.once('ready', ready));
  await redis.flushall();
  const clock = createStoreClock(systemClock);
  const store = wiring.createLimiterStore(config, redis, { clock });
  let calls = 0; // decide rounds and lease renewals
  let out = 0;
  const decideMany = store.decideMany?.bind(store);
  if (decideMany) {
    store.decideMany = async (requests) => {
      calls += 1;
      out += 1;
      try {
        return await decideMany(requests);
      } finally {
        out -= 1;
      }
    };
  }
  const metrics = createPromMetrics();
  const limiter = wiring.limiterOn(config, { store, clock, members: () => 1, metrics, logger });
  const compiled = compileRule({ rate: '1000000/s', queue: '1m' });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  const rule = { name: 'bench', unlimited: false, shadow: false, limit: compiled.rule };
  let written = 0;
  const producer = {
    sendBatch: async ({ topicMessages = [] }) => {
      for (const { messages } of topicMessages) written += messages.length;
      return [];
    },
  } as Pick<Producer, 'sendBatch'> as Producer;
  const partitions = new Map<string, number>([['in', PARTITIONS], ['down', PARTITIONS], ['dlq', 1], ...config.retry.tiers.map((t) => [t.topic, 1] as [string, number])]);
  const pipeline = wiring.createPipeline(config, { producer, limiter, ruleOf: () => rule, partitions, metrics, logger });
  const flow = wiring.ingressFlow(config, new Kafka({ brokers: ['127.0.0.1:1'] }), pipeline);

  const bytes = await template(config.identity.header);
  const next = new Array<number>(PARTITIONS).fill(0);
  const batchAt = async (n: number): Promise<Batch> => {
    const partition = n % PARTITIONS;
    const base = next[partition];
    next[partition] += BATCH;
    const raw = Buffer.from(bytes);
    raw.writeBigInt64BE(BigInt(base), 4);
    const messages = await decodeMessages(new Decoder(raw));
    return new BatchOf('in', String(base), { partition, highWatermark: String(base + BATCH), messages, abortedTransactions: [] });
  };
  const controls = { resolveOffset: () => undefined, heartbeat: async () => undefined, isRunning: () => true, isStale: () => false };

  const profiler = process.env.PROF || process.env.HEAP_PROF ? new Session() : undefined;
  if (profiler) profiler.connect();
  if (profiler && process.env.PROF) {
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.post('Profiler.start');
  }
  // Every allocation sampled, also those collected since (what the collector's threads work through).
  if (profiler && process.env.HEAP_PROF) {
    await profiler.post('HeapProfiler.enable');
    await profiler.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const mainStart = mainThreadMs();
  const start = performance.now();
  const marks: number[] = []; // wall ms at every COLD messages
  let handed = 0;
  while (handed < MESSAGES) {
    await flow.handle({ ...controls, batch: await batchAt(handed / BATCH) });
    handed += BATCH;
    if (handed % COLD === 0) marks.push(performance.now());
  }
  await pipeline.shared.hold.whenEmpty();
  await pipeline.sender.flush();
  const mainMs = mainThreadMs() - mainStart;
  const wallMs = performance.now() - start;
  if (profiler && process.env.PROF) writeFileSync(process.env.PROF, JSON.stringify((await profiler.post('Profiler.stop')).profile));
  if (profiler && process.env.HEAP_PROF) writeFileSync(process.env.HEAP_PROF, JSON.stringify((await profiler.post('HeapProfiler.stopSampling')).profile));

  const perMessage = (ms: number, count: number): number => Number(((ms * 1000) / count).toFixed(2));
  const half = Math.floor(marks.length / 2);
  console.log(JSON.stringify({
    messages: handed, written,
    mainThreadUsPerMessage: perMessage(mainMs, handed),
    wallUsPerMessage: perMessage(wallMs, handed),
    // The first COLD messages; the second half of the marks (from 2 × COLD messages on).
    ...(marks.length > 0 ? { coldWallUsPerMessage: perMessage(marks[0] - start, COLD) } : {}),
    ...(half > 0 ? { warmWallUsPerMessage: perMessage(marks[marks.length - 1] - marks[half - 1], (marks.length - half) * COLD) } : {}),
    storeCalls: calls,
  }));
  if (written !== handed) process.exitCode = 1; // said below, once everything is closed
  pipeline.sender.close();
  pipeline.shared.hold.close();
  // Lease renewals go out off the messages' path (on an immediate): none may be left out at the quit.
  const turn = (): Promise<void> => new Promise((next) => setImmediate(next));
  do await turn(); while (out > 0);
  await redis.quit();
  if (written !== handed) console.error(`${handed - written} messages were not handed to the producer`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
