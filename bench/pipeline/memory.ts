/**
 * Memory per tracked producer: a sidecar under a slow rule (1/h, so every producer's state
 * lives for an hour) sees `producers` distinct producers send one message each, after a warm-up
 * round of WARM_UP_PRODUCERS others. Redis used_memory and the sidecar's heap after a full gc,
 * after the warm-up and once the usage flush after the last message is over (at least
 * SETTLE_MS; the heap also at once, and from the idle sidecar before the warm-up), divided by
 * the producers; MEMORY USAGE of sampled keys as a cross-check (the Redis is shared).
 */
import type { BenchContext } from './context';
import { prefill } from './load';
import { keyFootprint, scriptCalls, usedMemory } from './redis-info';
import { watchCount } from './topics';

export interface MemoryResult {
  producers: number;
  redisBytesPerProducer: number;
  redisKeyBytesSampled: number;
  redisKeys: number;
  /** Of redisKeys, the usage history's (the rest is limiter state): producers with a history of their own, and `other`. */
  redisUsageKeys: number;
  heapBytesPerProducer: number;
  /** The same read as soon as the last message was downstream (before the settle). */
  heapBytesPerProducerAtOnce: number;
  /** Measured from the idle sidecar instead (before the warm-up): its first traffic's heap counted too. */
  heapBytesPerProducerFromIdle: number;
  /** When the heap and Redis were read, after the last message: the usage flush over. */
  settledAfterMs: number;
  redisTimeoutMs: number;
  /** Limiter store calls that timed out (answered by the in-memory fallback, whose state is heap too). */
  storeErrors: number;
}

/** The heap and Redis are read at least this long after the last message (a usage flush and a fetch wait, with margin). */
const SETTLE_MS = 3000;
/** No script call for this long: the usage flush is over (it flushes every second). */
const QUIET_MS = 1500;
/** Producers of the warm-up round, not counted. */
const WARM_UP_PRODUCERS = 5000;

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
    const heapIdle = (await side.usage(true)).heapUsed;
    // A first round of other producers warms the sidecar up: the code, type feedback and
    // optimized code of its hot path, kafkajs's and ioredis's buffers are the heap too, made once
    // on the first traffic, not per producer. What the measured producers add after it is.
    await prefill(ctx.kafka, ingress, WARM_UP_PRODUCERS, { producers: WARM_UP_PRODUCERS, valueBytes: 16, producerPrefix: 'w-' });
    await watchCount(() => ctx.book.total(downstream), WARM_UP_PRODUCERS, { timeoutMs: 180_000, intervalMs: 200 });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await scriptCallsSettled(ctx);
    const heapBefore = (await side.usage(true)).heapUsed;
    const redisBefore = await usedMemory(ctx.redis);
    await prefill(ctx.kafka, ingress, producers, { producers, valueBytes: 16, producerPrefix: 'm-' });
    await watchCount(() => ctx.book.total(downstream), WARM_UP_PRODUCERS + producers, { timeoutMs: 180_000, intervalMs: 200 });
    const heapAtOnce = (await side.usage(true)).heapUsed;
    // What stays is what a producer costs: kafkajs lets go of its last fetch when the next one
    // returns (maxWaitTimeInMs, 100 ms), and the usage recorder's flush of the producers' counts
    // (one script call per producer, a few seconds for 100k) holds them until it is done.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settledAfterMs = SETTLE_MS + (await scriptCallsSettled(ctx));
    const heapAfter = (await side.usage(true)).heapUsed;
    const redisAfter = await usedMemory(ctx.redis);
    const footprint = await keyFootprint(ctx.redis, setup.keyPrefix);
    return {
      producers,
      redisBytesPerProducer: (redisAfter - redisBefore) / producers,
      redisKeyBytesSampled: footprint.meanBytes,
      redisKeys: footprint.keys,
      redisUsageKeys: footprint.usageKeys,
      heapBytesPerProducer: (heapAfter - heapBefore) / producers,
      heapBytesPerProducerAtOnce: (heapAtOnce - heapBefore) / producers,
      heapBytesPerProducerFromIdle: (heapAfter - heapIdle) / producers,
      settledAfterMs,
      redisTimeoutMs: timeoutMs,
      storeErrors: await side.storeErrors(),
    };
  } finally {
    await side.stop();
    await deleteKeys(ctx, setup.keyPrefix);
  }
};

/**
 * Waits until the shared Redis has seen no script call for QUIET_MS (the sidecar's usage flush
 * is over; nothing else runs in this phase); returns how long that took. At most 60 s.
 */
const scriptCallsSettled = async (ctx: BenchContext): Promise<number> => {
  const started = Date.now();
  let calls = await scriptCalls(ctx.redis);
  let quietSince = Date.now();
  while (Date.now() - quietSince < QUIET_MS && Date.now() - started < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await scriptCalls(ctx.redis);
    if (now !== calls) [calls, quietSince] = [now, Date.now()];
  }
  return Date.now() - started;
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
