/**
 * The long tail of the usage history on the in-memory fake (fake-usage-redis.ts): producers
 * without a rule of their own outside the busiest are written together under `other`, which
 * `sluice usage other` reads; `sluice usage <tail id>` says so instead of printing zeros.
 */
import { Writable } from 'node:stream';
import { manualClock } from '../../../src/clock';
import { createLogger } from '../../../src/logger';
import { parseResolutions } from '../../../src/config/usage-resolutions';
import { runUsage } from '../../../src/usage/usage-command';
import { createUsageQuery } from '../../../src/usage/usage-query';
import { createUsageRecorder } from '../../../src/usage/usage-recorder';
import { fakeUsageRedis } from './fake-usage-redis';

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);
const silent = () => createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

const setup = () => {
  const clock = manualClock(T0);
  const redis = fakeUsageRedis(clock);
  const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;
  const recorder = createUsageRecorder({
    redis: redis as never, keyPrefix: 'p:', resolutions, clock, logger: silent(), flushIntervalMs: 3_600_000,
    detailedProducers: 2, hasOwnRule: (p) => p === 'billing',
  });
  const query = createUsageQuery({ redis, keyPrefix: 'p:', resolutions, clock });
  /** `offered` messages of `producer`, each forwarded with 10 bytes. */
  const send = (producer: string, offered: number): void => {
    recorder.count(producer, 'offered', offered);
    recorder.count(producer, 'forwarded', offered, 10 * offered);
  };
  return { clock, redis, recorder, query, send };
};

const capture = () => {
  const chunks: string[] = [];
  return { isTTY: false, write: (text: string) => chunks.push(text), text: () => chunks.join('') };
};

describe('the long tail of the usage history', () => {
  describe('when more producers send than are kept in detail', () => {
    it('writes the busiest and those with a rule of their own as before, and the rest with one call under other', async () => {
      const { clock, redis, recorder, query, send } = setup();
      send('billing', 1);
      send('busy-1', 40);
      send('busy-2', 30);
      for (let i = 0; i < 500; i += 1) send(`random-${i}`, 1);
      await recorder.flush();
      const producers = redis.calls.map((call) => /\{([^}]*)\}/.exec(call.keys[0])![1]).sort();
      expect(producers).toEqual(['billing', 'busy-1', 'busy-2', 'other']);
      clock.advance(60_000);
      expect((await query('billing', '1m', '2m')).totals).toMatchObject({ offered: 1, forwarded: 1, forwardedBytes: 10 });
      expect((await query('busy-1', '1m', '2m')).rows[0]).toMatchObject({ startMs: T0, offered: 40, forwarded: 40, forwardedBytes: 400 });
      const other = await query('other', '1m', '2m');
      expect(other.totals).toMatchObject({ offered: 500, forwarded: 500, forwardedBytes: 5000 });
      expect(other.countedIn).toBeUndefined();
    });
  });

  describe('sluice usage', () => {
    it('says that a producer without history of its own is counted in other', async () => {
      const { recorder, query, send } = setup();
      send('busy-1', 40);
      send('busy-2', 30);
      send('random-7', 1);
      await recorder.flush();
      const answer = await query('random-7', '1m', '5m');
      expect(answer.countedIn).toBe('other');
      const out = capture();
      expect(await runUsage(query, out, { producer: 'random-7', since: '5m' })).toBe(0);
      expect(out.text()).toBe(
        'producer random-7: no history of its own in the last 5m at 1m resolution.\n' +
          'It is counted in "other" with the long tail of producers (those without a rule of their own in the quota file ' +
          'that are not among the 100 busiest), or it sent nothing then: see `sluice usage other`.\n',
      );
      const json = capture();
      await runUsage(query, json, { producer: 'random-7', since: '5m', json: true });
      expect(JSON.parse(json.text())).toMatchObject({ producer: 'random-7', countedIn: 'other', totals: { offered: 0 } });
    });

    it('prints the table of a producer kept in detail, without a word of other', async () => {
      const { recorder, query, send } = setup();
      send('busy-1', 40);
      await recorder.flush();
      const out = capture();
      await runUsage(query, out, { producer: 'busy-1', since: '2m' });
      expect(out.text().split('\n')[0]).toBe('producer busy-1: last 2m at 1m resolution (2 buckets)');
      expect(out.text()).not.toContain('other');
      expect((await query('busy-1')).countedIn).toBeUndefined();
    });
  });
});
