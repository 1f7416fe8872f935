/**
 * What the usage history costs Redis: store calls (at most one per producer per flush, once a
 * second, watched with MONITOR) and memory (MEMORY USAGE of a producer that had traffic in every
 * bucket of a whole retention, per resolution). The numbers are printed; the README quotes them.
 */
import type { Redis } from 'ioredis';
import { manualClock, systemClock } from '../../../src/clock';
import { createRedisClient } from '../../../src/limit/redis-client';
import { parseResolutions, type Resolution } from '../../../src/config/usage-resolutions';
import { bucketIndex, segmentOf, usageKey } from '../../../src/usage/usage-keys';
import { createRedis, redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { usageHarness } from './usage-harness';

let redis: Redis;
beforeAll(async () => {
  redis = createRedisClient({ url: redisUrl(), timeoutMs: 2000 }) as Redis;
  await waitFor(() => redis.status === 'ready', { timeoutMs: 10_000, intervalMs: 20, message: 'Redis to be ready' });
});
afterAll(() => redis.quit());

describe('the cost of the usage history', () => {
  describe('when three producers send steadily for four seconds', () => {
    it('makes at most one store call per producer per second, and only the script call', async () => {
      const { keyPrefix, recorder } = usageHarness(redis, parseResolutions('1s:10m,1m:48h,1h:30d')!, systemClock, 1000);
      const watcher = createRedis();
      const monitor = await watcher.monitor();
      const calls: Array<{ at: number; command: string; producer: string }> = [];
      monitor.on('monitor', (time: string, args: string[], source: string) => {
        const key = args.find((arg) => arg.startsWith(keyPrefix));
        if (!key || source === 'lua') return;
        calls.push({ at: Number(time) * 1000, command: args[0].toLowerCase(), producer: /\{([^}]*)\}/.exec(key)![1] });
      });
      const producers = ['a', 'b', 'c'];
      const started = Date.now();
      let sent = 0;
      while (Date.now() - started < 4000) {
        for (const producer of producers) recorder.count(producer, 'forwarded', 1, 100);
        sent += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await recorder.close();
      const seconds = (Date.now() - started) / 1000;
      await waitFor(() => calls.length >= producers.length * 4, { timeoutMs: 5000, message: 'MONITOR to show the flushes' });
      monitor.disconnect();
      watcher.disconnect();
      expect(sent).toBeGreaterThan(200);
      // EVALSHA; EVAL the first time this client uses the script
      expect(calls.filter((c) => c.command !== 'evalsha' && c.command !== 'eval')).toEqual([]);
      for (const producer of producers) {
        const times = calls.filter((c) => c.producer === producer).map((c) => c.at);
        // the timer's flushes are a second apart; close() adds one last flush
        expect(times.length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
        const gaps = times.slice(1, -1).map((t, i) => t - times[i]);
        for (const gap of gaps) expect(gap).toBeGreaterThan(900);
      }
      process.stdout.write(`usage history: ${sent * producers.length} counts of ${producers.length} producers in ${seconds.toFixed(1)} s → ${calls.length} store calls\n`);
    });
  });

  describe('when one producer had traffic in every bucket of a whole retention', () => {
    const fill = async (resolution: Resolution, fields: 'typical' | 'all') => {
      const now = Date.now();
      const first = bucketIndex(resolution, now) - resolution.buckets + 1;
      const clock = manualClock(first * resolution.bucketMs);
      const { keyPrefix, recorder } = usageHarness(redis, [resolution], clock);
      for (let i = 0; i < resolution.buckets; i += 1) {
        recorder.count('billing', 'offered', 1200);
        recorder.count('billing', 'forwarded', 1000, 1_000_000);
        if (fields === 'all') {
          recorder.count('billing', 'delayed', 150);
          recorder.count('billing', 'overflowed', 50);
          recorder.count('billing', 'deadLettered', 3);
        }
        clock.advance(resolution.bucketMs);
        if (i % 200 === 199) await recorder.flush();
      }
      await recorder.close();
      let bytes = 0;
      let keys = 0;
      for (let s = segmentOf(resolution, first); s <= segmentOf(resolution, bucketIndex(resolution, now)); s += 1) {
        const used = await redis.memory('USAGE', usageKey(keyPrefix, 'billing', resolution, s), 'SAMPLES', 0);
        if (used !== null) {
          bytes += Number(used);
          keys += 1;
        }
      }
      const encoding = await redis.object('ENCODING', usageKey(keyPrefix, 'billing', resolution, segmentOf(resolution, first + 1)));
      await redis.del(...Array.from({ length: keys }, (_, k) => usageKey(keyPrefix, 'billing', resolution, segmentOf(resolution, first) + k)));
      return { bytes, keys, encoding };
    };

    it.each(['1s:10m', '1m:48h', '1h:30d'])('stays compact at %s', async (text) => {
      const [resolution] = parseResolutions(text)!;
      const typical = await fill(resolution, 'typical');
      const all = await fill(resolution, 'all');
      process.stdout.write(
        `usage history ${text}: ${resolution.buckets} buckets in ${typical.keys} hashes (${typical.encoding}): ` +
          `${typical.bytes} bytes with 3 counters per bucket (${(typical.bytes / resolution.buckets).toFixed(1)}/bucket), ` +
          `${all.bytes} bytes with all 6 (${(all.bytes / resolution.buckets).toFixed(1)}/bucket)\n`,
      );
      expect(typical.encoding).toBe('listpack');
      expect(typical.bytes / resolution.buckets).toBeLessThan(64);
      expect(all.bytes / resolution.buckets).toBeLessThan(128);
    });
  });
});
