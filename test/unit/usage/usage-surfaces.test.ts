/**
 * The two ways to read the history: GET /v1/producers/{id}/usage and `sluice usage`, on the
 * usage query over the in-memory fake (no Redis needed).
 */
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { runCli } from '../../../src/cli/run-cli';
import type { UsageOptions } from '../../../src/cli/types';
import { manualClock } from '../../../src/clock';
import { createHttpServer, type HttpServer } from '../../../src/http/http-server';
import type { StatusProvider } from '../../../src/http/status-provider';
import { createLogger } from '../../../src/logger';
import { parseResolutions } from '../../../src/config/usage-resolutions';
import { runUsage } from '../../../src/usage/usage-command';
import { createUsageQuery, type UsageQuery } from '../../../src/usage/usage-query';
import { sparkline, usageText } from '../../../src/usage/usage-table';
import { createUsageRecorder } from '../../../src/usage/usage-recorder';
import { fakeUsageRedis } from './fake-usage-redis';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const silent = () => createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

/** billing forwarded 1, 2, 3 messages (10 bytes each) in the first three minutes after T0; now is T0 + 3m. */
const history = async (): Promise<UsageQuery> => {
  const clock = manualClock(T0);
  const redis = fakeUsageRedis(clock);
  const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;
  const recorder = createUsageRecorder({ redis: redis as never, keyPrefix: 'p:', resolutions, clock, logger: silent(), flushIntervalMs: 3_600_000 });
  for (const n of [1, 2, 3]) {
    recorder.count('billing/eu', 'offered', n);
    recorder.count('billing/eu', 'forwarded', n, 10 * n);
    clock.advance(60_000);
  }
  await recorder.close();
  return createUsageQuery({ redis, keyPrefix: 'p:', resolutions, clock });
};

const capture = (isTTY = false) => {
  const chunks: string[] = [];
  return { isTTY, write: (text: string) => chunks.push(text), text: () => chunks.join('') };
};

describe('reading the usage history', () => {
  describe('the usage query', () => {
    it('defaults to 1m buckets over the last hour, zeros where nothing happened', async () => {
      const answer = await (await history())('billing/eu');
      expect(answer).toMatchObject({ producer: 'billing/eu', resolution: '1m', since: '1h', totals: { offered: 6, forwarded: 6, forwardedBytes: 60 } });
      expect(answer.rows).toHaveLength(60);
      expect(answer.rows.slice(-4).map((r) => r.forwarded)).toEqual([1, 2, 3, 0]);
      expect(answer.rows.at(-1)!.start).toBe(new Date(T0 + 180_000).toISOString());
    });

    it('clamps since to the retention of the resolution', async () => {
      const answer = await (await history())('billing/eu', '1s', '1d');
      expect(answer.since).toBe('10m');
      expect(answer.rows).toHaveLength(600);
    });

    it.each([
      ['5m', undefined, 'resolution "5m": expected one of 1s, 1m, 1h'],
      ['1m', 'soon', 'since "soon": expected a duration'],
    ])('refuses resolution %s since %s', async (resolution, since, message) => {
      await expect((await history())('billing/eu', resolution, since)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID', message: expect.stringContaining(message) });
    });
  });

  describe('GET /v1/producers/{id}/usage', () => {
    let server: HttpServer;
    let base: string;
    const start = async (usage?: UsageQuery) => {
      const status = { alive: () => true, ready: () => true, status: async () => ({}), producer: async () => undefined, quotas: async () => ({}) } as unknown as StatusProvider;
      server = createHttpServer({ host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: new Registry(), status, logger: silent(), ...(usage ? { usage } : {}) });
      base = `http://127.0.0.1:${(await server.listen()).admin?.port}`;
    };
    afterEach(() => server.close());

    it('answers JSON rows for the resolution and window asked', async () => {
      await start(await history());
      const response = await fetch(`${base}/v1/producers/billing%2Feu/usage?resolution=1m&since=5m`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { rows: Array<{ forwarded: number }> };
      expect(body.rows.map((r) => r.forwarded)).toEqual([0, 1, 2, 3, 0]);
      expect(body.rows[1]).toEqual({ startMs: T0, start: new Date(T0).toISOString(), offered: 1, forwarded: 1, delayed: 0, overflowed: 0, deadLettered: 0, forwardedBytes: 10, budgetShare: 0 });
    });

    it('answers 400 with the reason for a bad parameter, and 503 when the store fails', async () => {
      await start(await history());
      const bad = await fetch(`${base}/v1/producers/billing/usage?resolution=7s`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain('resolution "7s"');
      await server.close();
      await start(async () => Promise.reject(new Error('Connection is closed.')));
      expect((await fetch(`${base}/v1/producers/billing/usage`)).status).toBe(503);
    });

    it('is not found when the server was given no usage history', async () => {
      await start();
      expect((await fetch(`${base}/v1/producers/billing/usage`)).status).toBe(404);
    });
  });

  describe('sluice usage', () => {
    it('prints a table with a totals line, and no sparkline when not on a terminal', async () => {
      const out = capture();
      expect(await runUsage(await history(), out, { producer: 'billing/eu', since: '4m' })).toBe(0);
      const lines = out.text().split('\n');
      expect(lines[0]).toBe('producer billing/eu: last 4m at 1m resolution (4 buckets)');
      expect(lines[1].split(/\s{2,}/)).toEqual(['bucket (UTC)', 'offered', 'forwarded', 'delayed', 'overflowed', 'dead-lettered', 'forwarded bytes']);
      expect(lines[3].split(/\s+/)).toEqual(['2026-11-23', '12:01:00', '2', '2', '0', '0', '0', '20']);
      expect(lines[6].split(/\s+/)).toEqual(['total', '6', '6', '0', '0', '0', '60']);
    });

    it('draws forwarded per bucket as a sparkline on a terminal', async () => {
      const out = capture(true);
      await runUsage(await history(), out, { producer: 'billing/eu', since: '4m' });
      expect(out.text().split('\n')[1]).toBe('forwarded  ▃▆█   max 3/bucket');
      expect(sparkline([0, 0])).toBe('  ');
    });

    it('prints the answer as JSON with --json', async () => {
      const out = capture(true);
      await runUsage(await history(), out, { producer: 'billing/eu', since: '2m', json: true });
      expect(JSON.parse(out.text())).toMatchObject({ resolution: '1m', since: '2m', rows: [{ forwarded: 3 }, { forwarded: 0 }] });
      expect(usageText(JSON.parse(out.text()), false)).toContain('total');
    });

    it('passes the producer and its options to the handler', async () => {
      const calls: UsageOptions[] = [];
      const handlers = { run: async () => 0, drain: async () => 0, status: async () => 0, usage: async (opts: UsageOptions) => (calls.push(opts), 0) };
      const io = { env: {}, out: capture(), err: capture(), version: '0' };
      expect(await runCli(['node', 'sluice', 'usage', 'billing', '--resolution', '1s', '--since', '5m', '--json'], handlers, io)).toBe(0);
      expect(calls).toEqual([{ producer: 'billing', resolution: '1s', since: '5m', json: true }]);
      expect(await runCli(['node', 'sluice', 'usage'], handlers, io)).toBe(1);
    });
  });
});
