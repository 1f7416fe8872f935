/**
 * A flood of producer ids chosen by clients costs Redis a bounded amount (docs/design.md "Any
 * record, any id"): 20,000 random ids, one message each, decided by the Redis store under a slow
 * rule (1/h, so every limiter key lives) and counted by the usage recorder as the sidecar counts
 * them, flushed in rounds as the one-second flush would. Measured with MEMORY USAGE of every key
 * under the test's prefix (the Redis is shared: used_memory moves with other tests, so it is only
 * printed), plus what MEMORY USAGE leaves out of a key with a TTL: its entry in the expires dict
 * and its slots in both hash tables (at most 24 + 2 × 2 × 8 bytes).
 */
import type { Redis } from 'ioredis';
import { systemClock } from '../../../src/clock';
import { compileRule } from '../../../src/limit/compile-rule';
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import { OTHER } from '../../../src/usage/detail-selection';
import { readUsage } from '../../../src/usage/read-usage';
import { parseResolutions } from '../../../src/config/usage-resolutions';
import { type UsageCounts, zeroCounts } from '../../../src/usage/usage-counters';
import { createUsageRecorder } from '../../../src/usage/usage-recorder';
import { randomId } from '../../helpers/names';
import { redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { silentLogger } from './usage-harness';

const IDS = 20_000;
const ROUNDS = 10;
/** Per key, beyond MEMORY USAGE: the expires dict entry and at most two slots in each of the two hash tables. */
const UNCOUNTED_PER_KEY = 24 + 2 * 2 * 8;

const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;
const perHour = resolutions[2];

let redis: Redis;
beforeAll(async () => {
  redis = createRedisClient({ url: redisUrl(), timeoutMs: 5000 }) as Redis;
  await waitFor(() => redis.status === 'ready', { timeoutMs: 10_000, intervalMs: 20, message: 'Redis to be ready' });
});
afterAll(() => redis.quit());

const keysUnder = async (pattern: string): Promise<string[]> => {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
};

const usedMemory = async (): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

describe('a flood of random producer ids', () => {
  // As long as the default prefix `sluice:`, so keys are the size they are in production.
  const keyPrefix = `sl${randomId(2)}:`;
  afterAll(async () => {
    const keys = await keysUnder(`${keyPrefix}*`);
    for (let i = 0; i < keys.length; i += 5000) await redis.unlink(...keys.slice(i, i + 5000));
  });

  it('costs Redis at most 150 bytes per id, keeps full rows for the producers that matter and counts the rest in other', async () => {
    const compiled = compileRule({ rate: '1/h', queue: '1m' });
    if (!compiled.ok) throw new Error('rule');
    const rule = compiled.rule;
    const store = createRedisStore({ redis, keyPrefix, timeoutMs: 5000 });
    const recorder = createUsageRecorder({
      redis, keyPrefix, resolutions, clock: systemClock, logger: silentLogger(), flushIntervalMs: 3_600_000, hasOwnRule: (p) => p === 'billing',
    });
    const offered = new Map<string, number>();
    /** One fetch's messages of a producer: decided in one store call, counted as the sidecar's metrics count them. */
    const send = async (producer: string, count: number): Promise<void> => {
      const { decisions } = await store.decide({ producer, rule, sizes: Array.from({ length: count }, () => 16) });
      const forwarded = decisions.filter((d) => d.admitted).length;
      recorder.count(producer, 'offered', count);
      if (forwarded > 0) recorder.count(producer, 'forwarded', forwarded, 16 * forwarded);
      if (count > forwarded) recorder.count(producer, 'overflowed', count - forwarded);
      offered.set(producer, (offered.get(producer) ?? 0) + count);
    };
    const before = await usedMemory();
    const ids = Array.from({ length: IDS }, () => randomId());
    for (let round = 0; round < ROUNDS; round += 1) {
      const slice = ids.slice((round * IDS) / ROUNDS, ((round + 1) * IDS) / ROUNDS);
      await Promise.all([...slice.map((id) => send(id, 1)), send('billing', 1), send('busy', 50)]);
      await recorder.flush();
    }
    await recorder.close();
    const after = await usedMemory();

    // Memory: every key under the prefix, limiter and usage history together.
    const keys = await keysUnder(`${keyPrefix}*`);
    const sizes = await Promise.all(keys.map((key) => redis.memory('USAGE', key, 'SAMPLES', 0)));
    const counted = sizes.reduce<number>((sum, s) => sum + Number(s ?? 0), 0);
    const bytesPerId = (counted + keys.length * UNCOUNTED_PER_KEY) / IDS;
    const usageKeys = keys.filter((key) => key.includes(':usage:'));
    const detailed = new Set(usageKeys.map((key) => decodeURIComponent(/\{([^}]*)\}/.exec(key)![1])));
    process.stdout.write(
      `usage flood: ${IDS} random ids → ${keys.length} keys (${usageKeys.length} of usage history, ${detailed.size} producers with a history of their own): ` +
        `MEMORY USAGE ${(counted / IDS).toFixed(1)} B per id, ${bytesPerId.toFixed(1)} B per id with the expires entries and hash-table slots; ` +
        `used_memory +${((after - before) / IDS).toFixed(1)} B per id (shared Redis)\n`,
    );
    expect(bytesPerId).toBeLessThanOrEqual(150);
    // the busiest 100 (here the first 100 ids of the first flush, then busy) and billing, plus other: 3 resolutions,
    // a 1s segment boundary possibly crossed within the test
    expect(detailed.size).toBeLessThanOrEqual(100 + 2);
    expect(usageKeys.length).toBeLessThanOrEqual((100 + 2) * 3 * 2);

    // The limiter's keys expire when the bucket is empty: one slot of 1/h ahead.
    const limiterKey = keys.find((key) => !key.includes(':usage:') && key.includes(ids[IDS - 1]))!;
    const ttl = await redis.pttl(limiterKey);
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);

    // Full rows for the producers that matter, the tail in other, every message counted once.
    const now = Date.now();
    const totals = async (producer: string): Promise<UsageCounts> => {
      const sum = zeroCounts();
      for (const row of await readUsage({ redis, keyPrefix, producer, resolution: perHour, since: 2 * perHour.bucketMs, now })) {
        for (const field of Object.keys(sum) as Array<keyof UsageCounts>) sum[field] += row[field];
      }
      return sum;
    };
    expect(detailed).toContain('billing');
    expect(detailed).toContain('busy');
    expect(detailed).toContain(OTHER);
    expect(await totals('billing')).toEqual({ ...zeroCounts(), offered: ROUNDS, forwarded: 1, forwardedBytes: 16, overflowed: ROUNDS - 1 });
    expect(await totals('busy')).toEqual({ ...zeroCounts(), offered: 50 * ROUNDS, forwarded: 1, forwardedBytes: 16, overflowed: 50 * ROUNDS - 1 });
    let inDetail = 0;
    for (const producer of detailed) if (producer !== OTHER) inDetail += (await totals(producer)).offered;
    const other = await totals(OTHER);
    expect(other.offered).toBeGreaterThanOrEqual(IDS - 100);
    expect(inDetail + other.offered).toBe([...offered.values()].reduce((a, b) => a + b, 0));
  });
});
