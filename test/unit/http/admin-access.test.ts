/**
 * Who may read /v1/*, by listener, never by the client's address: the admin listener on
 * loopback answers without a token; the main listener answers /v1/* only with
 * http.adminToken, and then only to its bearer; an admin listener off loopback needs the token
 * too, and without one the server refuses to start. Probes and /metrics stay open on both. A
 * client "from elsewhere" is this machine through its own non-loopback address (the server sees
 * that address, not 127.0.0.1).
 */
import os from 'node:os';
import { Writable } from 'node:stream';
import { manualClock } from '../../../src/clock';
import { SluiceError } from '../../../src/errors';
import { adminListenerProblem, isLoopbackHost } from '../../../src/http/admin-access';
import { createHttpServer, type HttpServer, type HttpServerOptions } from '../../../src/http/http-server';
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

const silent = () => createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

const serverOptions = (status: StatusProvider, over: Partial<HttpServerOptions>): HttpServerOptions => ({
  host: '0.0.0.0', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: createPromMetrics().registry, status,
  clock: manualClock(1_700_000_000_000), logger: silent(), ...over,
});

describe('access to /v1/*', () => {
  let server: HttpServer;
  let main: number;
  let admin: number;
  let status: ReturnType<typeof provider>;

  const start = async (over: Partial<HttpServerOptions> = {}) => {
    status = provider();
    server = createHttpServer(serverOptions(status, { secrets: over.adminToken ? [over.adminToken] : [], ...over }));
    const bound = await server.listen();
    main = bound.port;
    admin = bound.admin?.port ?? 0;
  };
  const get = (host: string, port: number, path: string, headers: Record<string, string> = {}) => fetch(`http://${host}:${port}${path}`, { headers });

  afterEach(async () => {
    await server?.close();
  });

  describe('when http.adminToken is not set', () => {
    it('answers /v1/* on the admin listener bound to loopback, without a token', async () => {
      await start();
      expect((await get('127.0.0.1', admin, '/v1/status')).status).toBe(200);
      expect((await get('127.0.0.1', admin, '/v1/producers/p')).status).toBe(200);
    });

    it('does not serve /v1/* on the main listener, not even to a loopback client (a mesh proxy forwards from 127.0.0.6), and says where it is', async () => {
      await start();
      for (const host of ['127.0.0.1', '127.0.0.6']) {
        for (const path of ['/v1/status', '/v1/quotas', '/v1/producers/p', '/v1/nothing']) {
          const res = await get(host, main, path);
          expect(res.status).toBe(404);
          expect(res.headers.get('content-type')).toContain('application/json');
          expect(((await res.json()) as { error: string }).error).toMatch(/admin listener.*http\.adminHost:http\.adminPort.*http\.adminToken.*SLUICE_HTTP_ADMIN_TOKEN/);
        }
      }
      expect(status.producer).not.toHaveBeenCalled();
    });

    fromOutside('leaves the probes and /metrics open to anyone on the main listener', async () => {
      await start();
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get(outsideAddress as string, main, path)).status).toBe(200);
    });

    fromOutside('keeps the admin listener out of reach from elsewhere', async () => {
      await start();
      await expect(get(outsideAddress as string, admin, '/v1/status')).rejects.toThrow();
    });

    it('answers the probes and /metrics on the admin listener too', async () => {
      await start();
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get('127.0.0.1', admin, path)).status).toBe(200);
    });

    it('refuses to start an admin listener off loopback, naming the keys', () => {
      const create = () => createHttpServer(serverOptions(provider(), { admin: { host: '0.0.0.0', port: 0 } }));
      expect(create).toThrow(SluiceError);
      expect(create).toThrow(/http\.adminHost = "0\.0\.0\.0" \(SLUICE_HTTP_ADMIN_HOST\).*http\.adminToken \(SLUICE_HTTP_ADMIN_TOKEN\) is empty/);
    });
  });

  describe('when http.adminToken is set', () => {
    it('refuses a request to the main listener without the token with 401 and a Bearer challenge, even from loopback', async () => {
      await start({ adminToken: TOKEN });
      const res = await get('127.0.0.1', main, '/v1/status');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="sluice"');
      expect(((await res.json()) as { error: string }).error).toMatch(/Authorization: Bearer/);
    });

    it('refuses a wrong token, one of another length, or another scheme, and never echoes the token', async () => {
      await start({ adminToken: TOKEN });
      for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}x`, `Bearer ${TOKEN}-longer`, 'Bearer ', `Basic ${TOKEN}`, TOKEN]) {
        const res = await get('127.0.0.1', main, '/v1/status', { authorization });
        expect(res.status).toBe(401);
        expect(await res.text()).not.toContain(TOKEN);
      }
    });

    it('answers the right token on the main listener', async () => {
      await start({ adminToken: TOKEN });
      expect((await get('127.0.0.1', main, '/v1/status', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get('127.0.0.1', main, '/v1/quotas', { authorization: `bearer  ${TOKEN}` })).status).toBe(200);
    });

    it('still answers the loopback admin listener without a token', async () => {
      await start({ adminToken: TOKEN });
      expect((await get('127.0.0.1', admin, '/v1/status')).status).toBe(200);
    });

    fromOutside('answers the right token from anywhere, and keeps the probes and /metrics open', async () => {
      await start({ adminToken: TOKEN });
      expect((await get(outsideAddress as string, main, '/v1/status', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get(outsideAddress as string, main, '/v1/status')).status).toBe(401);
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get(outsideAddress as string, main, path)).status).toBe(200);
    });

    it('requires the token on an admin listener bound off loopback', async () => {
      await start({ adminToken: TOKEN, admin: { host: '0.0.0.0', port: 0 } });
      expect((await get('127.0.0.1', admin, '/v1/status')).status).toBe(401);
      expect((await get('127.0.0.1', admin, '/v1/status', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get('127.0.0.1', admin, '/healthz')).status).toBe(200);
    });
  });
});

describe('adminListenerProblem', () => {
  it.each([
    ['127.0.0.1', undefined, false],
    ['::1', undefined, false],
    ['localhost', undefined, false],
    ['0.0.0.0', undefined, true],
    ['0.0.0.0', '', true],
    ['10.1.2.3', undefined, true],
    ['0.0.0.0', TOKEN, false],
  ])('adminHost %s with token %s → refused: %s', (adminHost, adminToken, refused) => {
    expect(adminListenerProblem({ adminHost, adminToken }) !== undefined).toBe(refused);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true], ['127.1.2.3', true], ['::1', true], ['[::1]', true], ['::ffff:127.0.0.1', true], ['localhost', true], ['LocalHost', true],
    ['0.0.0.0', false], ['::', false], ['10.0.0.1', false], ['::ffff:10.0.0.1', false], ['fd00::2', false], ['1127.0.0.1', false], ['localhost.example.com', false], ['', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
