/**
 * The usage history on the real Redis and Redis Cluster: what the recorder counted is what the
 * reader finds, per producer and at each resolution; segments expire at their retention.
 */
import type { Cluster, Redis } from 'ioredis';
import { manualClock, systemClock } from '../../../src/clock';
import { createRedisClient } from '../../../src/limit/redis-client';
import { parseResolutions } from '../../../src/config/usage-resolutions';
import { usageKey, segmentOf, bucketIndex } from '../../../src/usage/usage-keys';
import { type UsageCounter, zeroCounts } from '../../../src/usage/usage-counters';
import { redisClusterNodes, redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { usageHarness } from './usage-harness';

const backends: Array<[string, () => Redis | Cluster]> = [
  ['Redis', () => createRedisClient({ url: redisUrl(), timeoutMs: 2000 })],
  ['Redis Cluster', () => createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 })],
];

const COUNTERS: UsageCounter[] = ['offered', 'forwarded', 'delayed', 'overflowed', 'deadLettered'];

describe.each(backends)('usage history on %s', (_name, connect) => {
  let redis: Redis | Cluster;
  beforeAll(async () => {
    redis = connect();
    await waitFor(() => redis.status === 'ready', { timeoutMs: 10_000, intervalMs: 20, message: 'Redis to be ready' });
  });
  afterAll(() => redis.quit());

  describe('when several producers are counted over several seconds and buckets', () => {
    it('reads back per producer, at each resolution, exactly the counts recorded', async () => {
      const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;
      // 90 s (so across a minute boundary) that ended 10 s ago: well inside every retention
      const clock = manualClock(Date.now() - 100_000);
      const { recorder, totals } = usageHarness(redis, resolutions, clock);
      const producers = ['billing', 'reports/eu', 'team-{x}', 'ünïcode', 'x'.repeat(200)];
      const expected = new Map(producers.map((p) => [p, zeroCounts()]));
      let seed = 7;
      const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
      for (let second = 0; second < 90; second += 1) {
        for (const producer of producers) {
          const counter = COUNTERS[random(COUNTERS.length)];
          const n = 1 + random(50);
          const bytes = counter === 'forwarded' ? n * 100 : 0;
          recorder.count(producer, counter, n, bytes);
          const sum = expected.get(producer)!;
          sum[counter] += n;
          sum.forwardedBytes += bytes;
        }
        clock.advance(1000);
        if (second % 10 === 9) await recorder.flush();
      }
      await recorder.close();
      for (const producer of producers) {
        for (const resolution of resolutions) {
          expect({ producer, resolution: resolution.label, ...(await totals(producer, resolution)) }).toEqual({ producer, resolution: resolution.label, ...expected.get(producer) });
        }
      }
    });
  });

  describe('when one flush writes producers whose counts touch different numbers of keys', () => {
    it('writes every count (once crashed the process: a command defined while an auto-pipeline filled)', async () => {
      const resolutions = parseResolutions('1s:10m,1m:48h')!;
      // the last second of a per-second segment (20 buckets), 30 s ago: the next second is in a new segment
      const lastOfSegment = (Math.floor((Date.now() - 30_000) / 20_000) * 20 + 19) * 1000;
      const clock = manualClock(lastOfSegment);
      const { recorder, totals } = usageHarness(redis, resolutions, clock);
      const producers = ['one', 'two', 'three'];
      for (const p of producers) recorder.count(p, 'forwarded', 2);
      clock.advance(1000);
      recorder.count('one', 'forwarded', 3); // 'one' now touches 3 keys, the others 2
      for (let i = 0; i < 12; i += 1) {
        clock.advance(20_000); // 'many' touches a new segment every time: split over several calls
        recorder.count('many', 'forwarded', 1);
      }
      await recorder.flush();
      const [perSecond] = resolutions;
      expect(await Promise.all([...producers, 'many'].map(async (p) => (await totals(p, perSecond)).forwarded))).toEqual([5, 2, 2, 12]);
      expect(recorder.stats().failedCalls).toBe(0);
    });
  });

  describe('when the retention is short', () => {
    it('drops buckets from reads past their retention and deletes each segment retention after its last bucket', async () => {
      const [resolution] = parseResolutions('1s:3s')!;
      const { keyPrefix, recorder, totals } = usageHarness(redis, [resolution], systemClock);
      const at = Date.now();
      recorder.count('billing', 'forwarded', 5);
      await recorder.flush();
      const key = usageKey(keyPrefix, 'billing', resolution, segmentOf(resolution, bucketIndex(resolution, at)));
      const pexpireAt = (segmentOf(resolution, bucketIndex(resolution, at)) + 1) * 3000 + 3000;
      expect(await redis.exists(key)).toBe(1);
      const ttl = await redis.pttl(key);
      expect(Math.abs(Date.now() + ttl - pexpireAt)).toBeLessThan(200);
      expect((await totals('billing', resolution)).forwarded).toBe(5);
      await waitFor(async () => (await totals('billing', resolution)).forwarded === 0, { timeoutMs: 6000, intervalMs: 100, message: 'the bucket to leave the window' });
      expect(Date.now()).toBeGreaterThanOrEqual(Math.floor(at / 1000) * 1000 + 3000);
      await waitFor(async () => (await redis.exists(key)) === 0, { timeoutMs: 9000, intervalMs: 100, message: 'the segment to expire' });
      expect(Date.now()).toBeGreaterThanOrEqual(pexpireAt - 50);
    });

    it('does not resurrect a segment whose retention is over when late counts arrive', async () => {
      const [resolution] = parseResolutions('1s:3s')!;
      const clock = manualClock(Date.now() - 60_000);
      const { keyPrefix, recorder } = usageHarness(redis, [resolution], clock);
      recorder.count('billing', 'forwarded', 5);
      await recorder.flush();
      expect(await redis.exists(usageKey(keyPrefix, 'billing', resolution, segmentOf(resolution, bucketIndex(resolution, clock.now()))))).toBe(0);
    });
  });
});
