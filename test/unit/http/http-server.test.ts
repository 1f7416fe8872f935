import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { manualClock } from '../../../src/clock';
import { createHttpServer, type HttpServer } from '../../../src/http/http-server';
import type { ProducerReport, StatusProvider, StatusReport } from '../../../src/http/status-provider';
import { createLogger } from '../../../src/logger';
import { createPromMetrics } from '../../../src/metrics/prom-metrics';

const REDIS_PASSWORD = 'r3d1s-pw-xyz';

const fakeProvider = (over: Partial<StatusProvider> = {}) => {
  const state = { alive: true, ready: false };
  const status: StatusReport = {
    mode: 'enforce',
    store: { healthy: false, lastError: `connect ECONNREFUSED redis://:${REDIS_PASSWORD}@redis:6379` },
    fallbackActive: true,
    onStoreError: 'local',
    groups: [{ groupId: 'sluice.events', joined: true, crashed: false, topics: ['events'] }],
    held: { messages: 3, bytes: 300 },
  };
  const billing: ProducerReport = {
    id: 'billing/eu',
    rule: { match: 'billing/*', rate: '20/s', queue: '1m' },
    ratePerSecond: 20,
    backlogMs: 1500,
    nextFreeSlot: 1_700_000_001_500,
    counts: { forwarded: 10, delayed: 2 },
  };
  const provider: StatusProvider = {
    alive: () => state.alive,
    ready: () => state.ready,
    status: () => status,
    producer: async (id) => (id === billing.id ? billing : undefined),
    quotas: () => ({ file: '/etc/sluice/quotas/quotas.yaml', loadedAt: 1_700_000_000_000, default: { rate: '100/s', queue: '1m' }, producers: [billing.rule] }),
    ...over,
  };
  return { provider, state };
};

const silentLogger = () => createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

describe('http server', () => {
  let server: HttpServer;
  let base: string;
  /** the admin listener (loopback): /v1/* */
  let admin: string;
  let fake: ReturnType<typeof fakeProvider>;
  let registry: Registry;

  const start = async (provider?: Partial<StatusProvider>) => {
    fake = fakeProvider(provider);
    const metrics = createPromMetrics();
    metrics.message('forwarded', 'billing/eu', 4);
    registry = metrics.registry;
    server = createHttpServer({
      host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: registry, status: fake.provider, logger: silentLogger(), secrets: [REDIS_PASSWORD],
    });
    const bound = await server.listen();
    base = `http://127.0.0.1:${bound.port}`;
    admin = `http://127.0.0.1:${bound.admin?.port}`;
  };

  afterEach(async () => {
    await server.close();
  });

  describe('when the consumers have not joined yet', () => {
    it('is alive but not ready, and ready once they joined', async () => {
      await start();
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      fake.state.ready = true;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    });
  });

  describe('when SIGTERM arrived', () => {
    it('answers 503 on /readyz even though the consumers are joined, and stays alive', async () => {
      await start();
      fake.state.ready = true;
      server.shuttingDown();
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'shutting down' });
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    });
  });

  describe('when a consumer crashed for good', () => {
    it('fails /healthz', async () => {
      await start();
      fake.state.alive = false;
      expect((await fetch(`${base}/healthz`)).status).toBe(503);
    });
  });

  describe('when Redis is down', () => {
    it('stays ready and shows the store trouble in /v1/status without the password', async () => {
      await start();
      fake.state.ready = true;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const res = await fetch(`${admin}/v1/status`);
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(text).not.toContain(REDIS_PASSWORD);
      expect(JSON.parse(text)).toMatchObject({ store: { healthy: false }, fallbackActive: true, held: { messages: 3, bytes: 300 } });
    });
  });

  describe('when metrics are scraped', () => {
    it('answers the Prometheus text format', async () => {
      await start();
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('sluice_messages_total{outcome="forwarded"} 4');
    });
  });

  describe('when a producer is asked for', () => {
    it('answers its rule, rate, backlog, next free slot and counts (id percent-decoded)', async () => {
      await start();
      const res = await fetch(`${admin}/v1/producers/${encodeURIComponent('billing/eu')}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: 'billing/eu', ratePerSecond: 20, backlogMs: 1500, nextFreeSlot: 1_700_000_001_500, counts: { forwarded: 10 } });
    });

    it('answers 404 for an unknown one', async () => {
      await start();
      expect((await fetch(`${admin}/v1/producers/nobody`)).status).toBe(404);
    });
  });

  describe('when the quotas are asked for', () => {
    it('answers the rules in force and when they were loaded', async () => {
      await start();
      expect(await (await fetch(`${admin}/v1/quotas`)).json()).toMatchObject({ loadedAt: 1_700_000_000_000, default: { rate: '100/s' } });
    });
  });

  describe('when a client tries to change something', () => {
    it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers 405 to %s without calling the provider', async (method) => {
      const status = jest.fn();
      await start({ status });
      const res = await fetch(`${admin}/v1/status`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(status).not.toHaveBeenCalled();
    });
  });

  describe('when the path is unknown', () => {
    it('answers 404', async () => {
      await start();
      expect((await fetch(`${admin}/v1/nothing`)).status).toBe(404);
      expect((await fetch(`${admin}/`)).status).toBe(404);
    });
  });

  describe('when the provider fails', () => {
    it('answers 500 without the error text', async () => {
      await start({
        status: () => {
          throw new Error(`redis://:${REDIS_PASSWORD}@x exploded`);
        },
      });
      const res = await fetch(`${admin}/v1/status`);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain(REDIS_PASSWORD);
    });
  });

  describe('when the port is taken', () => {
    it('refuses to listen with an error naming the address', async () => {
      await start();
      const port = Number(new URL(base).port);
      const second = createHttpServer({ host: '127.0.0.1', port, metricsRegistry: registry, status: fake.provider, logger: silentLogger() });
      await expect(second.listen()).rejects.toThrow(`HTTP server could not listen on 127.0.0.1:${port}`);
    });

    it('refuses when the admin port is taken, naming the admin listener, and leaves the main port free', async () => {
      await start();
      const port = Number(new URL(admin).port);
      const second = createHttpServer({ host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port }, metricsRegistry: registry, status: fake.provider, logger: silentLogger() });
      await expect(second.listen()).rejects.toThrow(`HTTP admin listener could not listen on 127.0.0.1:${port}`);
    });
  });

  describe('when it starts', () => {
    it('logs both addresses in one line', async () => {
      const lines: string[] = [];
      const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }) });
      server = createHttpServer({ host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: createPromMetrics().registry, status: fakeProvider().provider, logger });
      const bound = await server.listen();
      const line = JSON.parse(lines.find((l) => l.includes('HTTP server listening')) as string) as Record<string, unknown>;
      expect(line).toMatchObject({ host: '127.0.0.1', port: bound.port, admin: { host: '127.0.0.1', port: bound.admin?.port } });
    });
  });
});

describe('answers about one producer', () => {
  let server: HttpServer;
  let admin: string;
  let status: StatusProvider & { producer: jest.Mock };
  const clock = manualClock(1_700_000_000_000);

  beforeEach(async () => {
    const report = (id: string): ProducerReport => ({ id, rule: { match: 'default' }, backlogMs: 0, nextFreeSlot: null, counts: {} });
    status = { ...fakeProvider().provider, producer: jest.fn(async (id: string) => report(id)) };
    server = createHttpServer({ host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: createPromMetrics().registry, status, clock, logger: silentLogger() });
    admin = `http://127.0.0.1:${(await server.listen()).admin?.port}`;
  });
  afterEach(async () => {
    await server.close();
  });

  describe('when the same producer is asked for again within a second', () => {
    it('reads the store once, and again once the second has passed', async () => {
      const answers = await Promise.all([1, 2, 3].map(() => fetch(`${admin}/v1/producers/billing`).then((r) => r.json() as Promise<{ id: string }>)));
      expect(answers.every((a) => a.id === 'billing')).toBe(true);
      clock.advance(999);
      expect((await fetch(`${admin}/v1/producers/billing`)).status).toBe(200);
      expect(status.producer).toHaveBeenCalledTimes(1);
      clock.advance(1);
      await fetch(`${admin}/v1/producers/billing`);
      expect(status.producer).toHaveBeenCalledTimes(2);
    });
  });

  describe('when different producers are asked for', () => {
    it('reads each one', async () => {
      await fetch(`${admin}/v1/producers/a`);
      await fetch(`${admin}/v1/producers/b`);
      expect(status.producer.mock.calls.map(([id]) => id)).toEqual(['a', 'b']);
    });
  });

  describe('when reading the store failed', () => {
    it('does not keep the failure: the next request reads again', async () => {
      status.producer.mockRejectedValueOnce(new Error('store down'));
      expect((await fetch(`${admin}/v1/producers/p`)).status).toBe(500);
      expect((await fetch(`${admin}/v1/producers/p`)).status).toBe(200);
      expect(status.producer).toHaveBeenCalledTimes(2);
    });
  });
});
