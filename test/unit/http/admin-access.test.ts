/**
 * Who may read /v1/*: loopback clients only without http.adminToken; with it, anyone who
 * sends `Authorization: Bearer <token>`. Probes and /metrics stay open. A client "from
 * elsewhere" is this machine through its own non-loopback address (the server sees that
 * address, not 127.0.0.1).
 */
import os from 'node:os';
import { Writable } from 'node:stream';
import { manualClock } from '../../../src/clock';
import { createHttpServer, type HttpServer } from '../../../src/http/http-server';
import type { ProducerReport, StatusProvider } from '../../../src/http/status-provider';
import { createLogger } from '../../../src/logger';
import { createPromMetrics } from '../../../src/metrics/prom-metrics';

const TOKEN = 'admin-T0ken-xyz';

const outsideAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((nic) => nic !== undefined && !nic.internal && nic.family === 'IPv4')?.address;
const fromOutside = outsideAddress !== undefined ? it : it.skip;

const report = (id: string): ProducerReport => ({ id, rule: { match: 'default' }, backlogMs: 0, nextFreeSlot: null, counts: {} });

const provider = (): StatusProvider & { producer: jest.Mock } => ({
  alive: () => true,
  ready: () => true,
  status: () => ({ mode: 'enforce', store: { healthy: true }, fallbackActive: false, onStoreError: 'local', groups: [], held: { messages: 0, bytes: 0 } }),
  producer: jest.fn(async (id: string) => report(id)),
  quotas: () => ({ file: 'q.yaml', loadedAt: 0, default: {}, producers: [] }),
});

describe('access to /v1/*', () => {
  let server: HttpServer;
  let port: number;
  let status: ReturnType<typeof provider>;
  const clock = manualClock(1_700_000_000_000);

  const start = async (adminToken?: string) => {
    status = provider();
    server = createHttpServer({
      host: '0.0.0.0', port: 0, metricsRegistry: createPromMetrics().registry, status, clock, adminToken, secrets: adminToken ? [adminToken] : [],
      logger: createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) }),
    });
    ({ port } = await server.listen());
  };
  const get = (host: string, path: string, headers: Record<string, string> = {}) => fetch(`http://${host}:${port}${path}`, { headers });

  afterEach(async () => {
    await server.close();
  });

  describe('when http.adminToken is not set', () => {
    it('answers loopback clients', async () => {
      await start();
      expect((await get('127.0.0.1', '/v1/status')).status).toBe(200);
      expect((await get('127.0.0.1', '/v1/producers/p')).status).toBe(200);
    });

    fromOutside('refuses other clients with 403 and a JSON error saying how to get in, without asking the provider', async () => {
      await start();
      for (const path of ['/v1/status', '/v1/quotas', '/v1/producers/p', '/v1/nothing']) {
        const res = await get(outsideAddress as string, path);
        expect(res.status).toBe(403);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(((await res.json()) as { error: string }).error).toMatch(/loopback.*http\.adminToken.*SLUICE_HTTP_ADMIN_TOKEN/);
      }
      expect(status.producer).not.toHaveBeenCalled();
    });

    fromOutside('leaves the probes and /metrics open to anyone', async () => {
      await start();
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get(outsideAddress as string, path)).status).toBe(200);
    });
  });

  describe('when http.adminToken is set', () => {
    it('refuses a request without the token with 401 and a Bearer challenge, even from loopback', async () => {
      await start(TOKEN);
      const res = await get('127.0.0.1', '/v1/status');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="sluice"');
      expect(((await res.json()) as { error: string }).error).toMatch(/Authorization: Bearer/);
    });

    it('refuses a wrong token, one of another length, or another scheme, and never echoes the token', async () => {
      await start(TOKEN);
      for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}x`, `Bearer ${TOKEN}-longer`, 'Bearer ', `Basic ${TOKEN}`, TOKEN]) {
        const res = await get('127.0.0.1', '/v1/status', { authorization });
        expect(res.status).toBe(401);
        expect(await res.text()).not.toContain(TOKEN);
      }
    });

    it('answers the right token from loopback', async () => {
      await start(TOKEN);
      expect((await get('127.0.0.1', '/v1/status', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get('127.0.0.1', '/v1/quotas', { authorization: `bearer  ${TOKEN}` })).status).toBe(200);
    });

    fromOutside('answers the right token from anywhere, and keeps the probes and /metrics open', async () => {
      await start(TOKEN);
      expect((await get(outsideAddress as string, '/v1/status', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get(outsideAddress as string, '/v1/status')).status).toBe(401);
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get(outsideAddress as string, path)).status).toBe(200);
    });
  });
});

describe('answers about one producer', () => {
  let server: HttpServer;
  let base: string;
  let status: ReturnType<typeof provider>;
  const clock = manualClock(1_700_000_000_000);

  beforeEach(async () => {
    status = provider();
    server = createHttpServer({
      host: '127.0.0.1', port: 0, metricsRegistry: createPromMetrics().registry, status, clock,
      logger: createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) }),
    });
    base = `http://127.0.0.1:${(await server.listen()).port}`;
  });
  afterEach(async () => {
    await server.close();
  });

  describe('when the same producer is asked for again within a second', () => {
    it('reads the store once, and again once the second has passed', async () => {
      const answers = await Promise.all([1, 2, 3].map(() => fetch(`${base}/v1/producers/billing`).then((r) => r.json() as Promise<{ id: string }>)));
      expect(answers.every((a) => a.id === 'billing')).toBe(true);
      clock.advance(999);
      expect((await fetch(`${base}/v1/producers/billing`)).status).toBe(200);
      expect(status.producer).toHaveBeenCalledTimes(1);
      clock.advance(1);
      await fetch(`${base}/v1/producers/billing`);
      expect(status.producer).toHaveBeenCalledTimes(2);
    });
  });

  describe('when different producers are asked for', () => {
    it('reads each one', async () => {
      await fetch(`${base}/v1/producers/a`);
      await fetch(`${base}/v1/producers/b`);
      expect(status.producer.mock.calls.map(([id]) => id)).toEqual(['a', 'b']);
    });
  });

  describe('when reading the store failed', () => {
    it('does not keep the failure: the next request reads again', async () => {
      status.producer.mockRejectedValueOnce(new Error('store down'));
      expect((await fetch(`${base}/v1/producers/p`)).status).toBe(500);
      expect((await fetch(`${base}/v1/producers/p`)).status).toBe(200);
      expect(status.producer).toHaveBeenCalledTimes(2);
    });
  });
});
