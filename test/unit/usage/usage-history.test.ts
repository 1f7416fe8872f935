/**
 * The recorder's aggregation and the reader, end to end on the in-memory fake of the two Redis
 * calls (fake-usage-redis.ts): what is counted is what is read back, per producer, bucket and
 * resolution; one call per producer per flush; zeros where nothing happened.
 */
import { Writable } from 'node:stream';
import { manualClock } from '../../../src/clock';
import { createLogger } from '../../../src/logger';
import { flushCalls, MAX_KEYS_PER_CALL } from '../../../src/usage/flush-plan';
import { bucketRange, readUsage, rowsOf } from '../../../src/usage/read-usage';
import { parseResolutions } from '../../../src/config/usage-resolutions';
import { usageKey } from '../../../src/usage/usage-keys';
import { createUsageRecorder } from '../../../src/usage/usage-recorder';
import { zeroCounts } from '../../../src/usage/usage-counters';
import { fakeUsageRedis } from './fake-usage-redis';

const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;
const [perSecond, perMinute, perHour] = resolutions;
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0); // on the hour

const logLines = (): { logger: ReturnType<typeof createLogger>; lines: string[] } => {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) });
  return { logger: createLogger({ level: 'info', destination }), lines };
};

const setup = (options: { maxPending?: number } = {}) => {
  const clock = manualClock(T0);
  const redis = fakeUsageRedis(clock);
  const { logger, lines } = logLines();
  const recorder = createUsageRecorder({ redis: redis as never, keyPrefix: 'p:', resolutions, clock, logger, flushIntervalMs: 3_600_000, ...options });
  const read = (producer: string, resolution = perSecond, since = 10_000) => readUsage({ redis, keyPrefix: 'p:', producer, resolution, since, now: clock.now() });
  return { clock, redis, recorder, read, lines };
};

describe('usage history', () => {
  describe('when counts of several producers are flushed', () => {
    it('adds them up in memory and writes each producer with one call covering every resolution', async () => {
      const { clock, redis, recorder } = setup();
      for (let i = 0; i < 1000; i += 1) recorder.count('billing', 'forwarded', 1, 100);
      recorder.count('billing', 'offered', 1000);
      recorder.count('reports', 'delayed', 7);
      clock.advance(1000);
      recorder.count('billing', 'forwarded', 5, 500);
      await recorder.flush();
      expect(redis.calls).toHaveLength(2);
      const billing = redis.calls.find((call) => call.keys[0].includes('{billing}'))!;
      expect(billing.keys).toEqual([
        usageKey('p:', 'billing', perSecond, Math.floor(T0 / 1000 / 20)),
        usageKey('p:', 'billing', perMinute, Math.floor(T0 / 60_000 / 20)),
        usageKey('p:', 'billing', perHour, Math.floor(T0 / 3_600_000 / 20)),
      ]);
      expect(recorder.stats().pendingCells).toBe(0);
      await recorder.flush();
      expect(redis.calls).toHaveLength(2); // nothing pending: no call
    });

    it('reads back per bucket what was counted, at each resolution', async () => {
      const { clock, recorder, read } = setup();
      recorder.count('billing', 'offered', 3);
      recorder.count('billing', 'forwarded', 2, 20);
      recorder.count('billing', 'overflowed', 1);
      clock.advance(2000);
      recorder.count('billing', 'forwarded', 1, 10);
      recorder.count('billing', 'deadLettered', 4);
      await recorder.flush();
      const rows = await read('billing', perSecond, 3000);
      expect(rows.map((r) => r.startMs)).toEqual([T0, T0 + 1000, T0 + 2000]);
      expect(rows[0]).toMatchObject({ offered: 3, forwarded: 2, forwardedBytes: 20, overflowed: 1, delayed: 0, deadLettered: 0 });
      expect(rows[1]).toMatchObject(zeroCounts());
      expect(rows[2]).toMatchObject({ forwarded: 1, forwardedBytes: 10, deadLettered: 4 });
      const [minute] = await read('billing', perMinute, 60_000);
      expect(minute).toMatchObject({ startMs: T0, offered: 3, forwarded: 3, forwardedBytes: 30, overflowed: 1, deadLettered: 4 });
      const [hour] = await read('billing', perHour, 3_600_000);
      expect(hour).toMatchObject({ startMs: T0, forwarded: 3 });
      expect(await read('reports')).toHaveLength(10);
      expect((await read('reports')).every((r) => r.forwarded === 0)).toBe(true);
    });

    it('keeps producers apart, ids with braces and slashes included', async () => {
      const { recorder, read } = setup();
      recorder.count('team/{a}', 'forwarded', 2);
      recorder.count('team/{b}', 'forwarded', 5);
      await recorder.flush();
      expect((await read('team/{a}', perSecond, 1000))[0].forwarded).toBe(2);
      expect((await read('team/{b}', perSecond, 1000))[0].forwarded).toBe(5);
    });
  });

  describe('when the pending counts reach their bound', () => {
    it('counts the counts of further cells in other (one more cell a second), reports them once, and keeps counting the cells it has', async () => {
      const { clock, recorder, lines, read } = setup({ maxPending: 2 });
      recorder.count('a', 'forwarded');
      recorder.count('b', 'forwarded');
      recorder.count('c', 'forwarded', 3);
      recorder.count('d', 'forwarded', 4);
      recorder.count('a', 'forwarded');
      expect(recorder.stats()).toMatchObject({ pendingCells: 3, foldedCounts: 7 });
      expect(lines.filter((line) => line.includes('usage history'))).toHaveLength(1);
      clock.advance(1000);
      await recorder.flush();
      expect((await read('a', perSecond, 2000))[0].forwarded).toBe(2);
      expect((await read('other', perSecond, 2000))[0].forwarded).toBe(7);
      expect((await read('c', perSecond, 2000))[0].forwarded).toBe(0);
    });
  });

  describe('when the store fails a call', () => {
    it('never throws, logs at most once a minute, and does not write the counts twice', async () => {
      const { clock, redis, recorder, lines, read } = setup();
      redis.failNext = 2;
      recorder.count('a', 'forwarded', 3);
      recorder.count('b', 'forwarded', 4);
      await expect(recorder.flush()).resolves.toBeUndefined();
      expect(recorder.stats().failedCalls).toBe(2);
      expect(lines.filter((line) => line.includes('usage history'))).toHaveLength(1);
      recorder.count('a', 'forwarded', 1);
      await recorder.flush();
      expect((await read('a', perSecond, 1000))[0].forwarded).toBe(1);
      redis.failNext = 1;
      clock.advance(1000);
      recorder.count('a', 'forwarded', 1);
      await recorder.flush();
      expect(lines.filter((line) => line.includes('usage history'))).toHaveLength(1);
      clock.advance(60_000);
      redis.failNext = 1;
      recorder.count('a', 'forwarded', 1);
      await recorder.flush();
      expect(lines.filter((line) => line.includes('usage history'))).toHaveLength(2);
    });
  });

  describe('when a bucket is past its retention', () => {
    it('is no longer read, and its segment hash is gone once the last bucket of the segment is past it too', async () => {
      const short = parseResolutions('1s:5s')!;
      const clock = manualClock(T0);
      const redis = fakeUsageRedis(clock);
      const recorder = createUsageRecorder({ redis: redis as never, keyPrefix: 'p:', resolutions: short, clock, logger: logLines().logger, flushIntervalMs: 3_600_000 });
      recorder.count('a', 'forwarded', 9);
      await recorder.flush();
      const read = () => readUsage({ redis, keyPrefix: 'p:', producer: 'a', resolution: short[0], since: 60_000, now: clock.now() });
      expect((await read()).map((r) => r.forwarded)).toEqual([0, 0, 0, 0, 9]);
      clock.advance(4000);
      expect((await read()).map((r) => r.forwarded)).toEqual([9, 0, 0, 0, 0]);
      clock.advance(1000);
      expect((await read()).map((r) => r.forwarded)).toEqual([0, 0, 0, 0, 0]);
      expect(redis.hashes.size).toBe(1);
      clock.advance(5000); // the segment (5 buckets) ended 5 s ago
      expect(await redis.hgetall([...redis.hashes.keys()][0])).toEqual({});
    });
  });

  describe('the pure parts', () => {
    it('flushCalls gives nothing to write for counts that are all zero', () => {
      expect(flushCalls('p:', 'a', resolutions, new Map([[T0, zeroCounts()]]))).toEqual([]);
    });

    it('flushCalls sums seconds that share a bucket into one field, and sets each expiry retention past the segment end', () => {
      const counts = (forwarded: number) => ({ ...zeroCounts(), forwarded });
      const [call, ...more] = flushCalls('p:', 'a', [perMinute], new Map([[T0, counts(2)], [T0 + 1000, counts(3)]]));
      expect(more).toEqual([]);
      const segment = Math.floor(T0 / 60_000 / 20);
      expect(call.keys).toEqual([usageKey('p:', 'a', perMinute, segment)]);
      expect(call.args).toEqual([(segment + 1) * 20 * 60_000 + perMinute.retentionMs, 1, `${(T0 / 60_000) % 20}f`, 5]);
    });

    it('flushCalls splits counts that touch more keys than one call carries, keeping every key and increment once', () => {
      // one second in each of 20 segments of the per-second resolution (20 buckets each)
      const pending = new Map(Array.from({ length: 20 }, (_, i) => [T0 + i * 20_000, { ...zeroCounts(), forwarded: i + 1 }] as const));
      const calls = flushCalls('p:', 'a', [perSecond], pending);
      expect(calls.map((c) => c.keys.length)).toEqual([MAX_KEYS_PER_CALL, MAX_KEYS_PER_CALL, 20 - 2 * MAX_KEYS_PER_CALL]);
      expect(new Set(calls.flatMap((c) => c.keys)).size).toBe(20);
      const increments = calls.flatMap((c) => c.args.filter((_, i, all) => typeof all[i - 1] === 'string'));
      expect(increments.reduce((a, b) => Number(a) + Number(b), 0)).toBe((20 * 21) / 2);
    });

    it('bucketRange covers the last `since`, at least one bucket and at most the retention', () => {
      expect(bucketRange(perMinute, 3_600_000, T0 + 30_000)).toEqual({ first: T0 / 60_000 - 59, last: T0 / 60_000 });
      expect(bucketRange(perMinute, 1, T0)).toEqual({ first: T0 / 60_000, last: T0 / 60_000 });
      const all = bucketRange(perSecond, 86_400_000, T0);
      expect(all.last - all.first + 1).toBe(600);
    });

    it('rowsOf ignores fields it does not know and buckets outside the range', () => {
      const segment = Math.floor(T0 / 1000 / 20);
      const offset = (T0 / 1000) % 20;
      const rows = rowsOf(perSecond, T0 / 1000, T0 / 1000 + 1, new Map([[segment, { [`${offset}f`]: '4', [`${offset}z`]: '9', junk: '1', [`${offset + 5}f`]: '7' }]]));
      expect(rows.map((r) => r.forwarded)).toEqual([4, 0]);
      expect(rows[0].start).toBe(new Date(T0).toISOString());
    });
  });
});
