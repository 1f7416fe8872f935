/**
 * Memory per tracked producer: a sidecar under a slow rule (1/h, so every producer's state
 * lives for an hour) sees `producers` distinct producers send one message each. Redis
 * used_memory and the sidecar's heap after a full gc, before and SETTLE_MS after the last
 * message (the heap also at once), divided by the producers; MEMORY USAGE of sampled keys as a
 * cross-check (the Redis is shared).
 */
import type { BenchContext } from './context';
import { prefill } from './load';
import { keyFootprint, usedMemory } from './redis-info';
import { watchCount } from './topics';

export interface MemoryResult {
  producers: number;
  redisBytesPerProducer: number;
  redisKeyBytesSampled: number;
  redisKeys: number;
  heapBytesPerProducer: number;
  /** The same read as soon as the last message was downstream (before the settle). */
  heapBytesPerProducerAtOnce: number;
  redisTimeoutMs: number;
  /** Limiter store calls that timed out (answered by the in-memory fallback, whose state is heap too). */
  storeErrors: number;
}

/** How long after the last message the heap and Redis are read (a usage flush and a fetch wait, with margin). */
const SETTLE_MS = 3000;

export const measureMemory = async (ctx: BenchContext, producers: number, timeoutMs = 5000): Promise<MemoryResult> => {
  // Every message here comes from a new producer, so a fetch of thousands of messages makes
  // thousands of script calls at once (~17 µs each in Redis): far more than the default 50 ms
  // redis.timeoutMs allows, and the in-memory fallback would answer instead. Memory is measured
  // with the state in Redis (timeout 5 s); how many calls timed out is reported.
  const setup = { ...ctx.sluiceSetup({ rate: '1/h', queue: '1m' }), env: { SLUICE_REDIS_TIMEOUT_MS: String(timeoutMs) } };
  const ingress = await ctx.book.ingress('mem');
  const downstream = await ctx.book.downstream('mem-down');
  const side = await ctx.launch('sluice', { ingress, downstream }, setup);
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const heapBefore = (await side.usage(true)).heapUsed;
    const redisBefore = await usedMemory(ctx.redis);
    await prefill(ctx.kafka, ingress, producers, { producers, valueBytes: 16, producerPrefix: 'm-' });
    await watchCount(() => ctx.book.total(downstream), producers, { timeoutMs: 180_000, intervalMs: 200 });
    const heapAtOnce = (await side.usage(true)).heapUsed;
    // What stays is what a producer costs: the usage recorder flushes every second, and kafkajs
    // lets go of its last fetch when the next one returns (maxWaitTimeInMs, 200 ms).
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const heapAfter = (await side.usage(true)).heapUsed;
    const redisAfter = await usedMemory(ctx.redis);
    const footprint = await keyFootprint(ctx.redis, setup.keyPrefix);
    return {
      producers,
      redisBytesPerProducer: (redisAfter - redisBefore) / producers,
      redisKeyBytesSampled: footprint.meanBytes,
      redisKeys: footprint.keys,
      heapBytesPerProducer: (heapAfter - heapBefore) / producers,
      heapBytesPerProducerAtOnce: (heapAtOnce - heapBefore) / producers,
      redisTimeoutMs: timeoutMs,
      storeErrors: await side.storeErrors(),
    };
  } finally {
    await side.stop();
    await deleteKeys(ctx, setup.keyPrefix);
  }
};

/** The 1/h keys would live an hour in the shared Redis: remove them. */
const deleteKeys = async (ctx: BenchContext, prefix: string): Promise<void> => {
  let cursor = '0';
  do {
    const [next, keys] = await ctx.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    if (keys.length > 0) await ctx.redis.unlink(...keys);
  } while (cursor !== '0');
};
