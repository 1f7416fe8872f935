/**
 * Slow and idle clients cannot starve the probes (issue 27): with 1,000 idle connections and
 * 200 slowloris ones (headers sent one byte a second) open on the main listener, more than its
 * connection cap, /healthz and /metrics still answer a new connection within a second; a
 * slowloris connection gets 408 and is closed within the headers timeout (which the server
 * checks every half second), an idle one within the idle timeout. The real server (src/http/http-server.ts) with a
 * stub StatusProvider: no Kafka or Redis. Client and server share one event loop, so the
 * latencies include the clients' own work.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createHttpServer, type HttpServer } from '../../../src/http/http-server';
import type { StatusProvider } from '../../../src/http/status-provider';
import { MAIN_LIMITS } from '../../../src/http/server-limits';
import { createLogger } from '../../../src/logger';
import { createPromMetrics } from '../../../src/metrics/prom-metrics';
import { waitFor } from '../../helpers/wait';

const IDLE = 1000;
const SLOW = 200;
/** the server checks its header and request timeouts this often: a slowloris connection may live this much longer. */
const SLACK_MS = MAIN_LIMITS.checkIntervalMs + 1000;

/** Both ends of every connection are in this process: twice as many descriptors, and some to spare. */
const DESCRIPTORS_NEEDED = 2 * (IDLE + SLOW) + 200;

/** The soft limit on open files (node raises it to the hard limit at start), where Linux tells it. */
const openFileLimit = (): number | undefined => {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
};

const provider: StatusProvider = {
  alive: () => true,
  ready: () => true,
  status: () => ({ mode: 'enforce', store: { healthy: true }, fallbackActive: false, onStoreError: 'local', groups: [], held: { messages: 0, bytes: 0 } }),
  producer: async () => undefined,
  quotas: () => ({ file: 'q.yaml', loadedAt: 0, default: {}, producers: [] }),
};

interface Client {
  socket: Socket;
  openedAt: number;
  firstByteAt?: number;
  closedAt?: number;
  answer: string;
}

const open = (port: number): Promise<Client> =>
  new Promise((resolve, reject) => {
    const client: Client = { socket: connect(port, '127.0.0.1'), openedAt: 0, answer: '' };
    client.socket.on('data', (chunk: Buffer) => (client.answer += chunk.toString()));
    client.socket.on('close', () => (client.closedAt = Date.now()));
    client.socket.on('error', () => undefined); // reset by the server: what is measured is when it closed
    client.socket.once('connect', () => {
      client.openedAt = Date.now();
      resolve(client);
    });
    client.socket.once('error', reject);
  });

/** in batches: a burst of a thousand connects would overflow the listen backlog (511). */
const openMany = async (port: number, count: number): Promise<Client[]> => {
  const clients: Client[] = [];
  while (clients.length < count) clients.push(...(await Promise.all(Array.from({ length: Math.min(100, count - clients.length) }, () => open(port)))));
  return clients;
};

/** Sends a request's head one byte a second, never finishing it (slowloris). */
const dribble = (clients: Client[]): (() => void) => {
  const head = `GET /healthz HTTP/1.1\r\nHost: sluice\r\n${'X-Slow: yes\r\n'.repeat(50)}`;
  let at = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    for (const client of clients) {
      if (client.closedAt !== undefined || client.socket.destroyed) continue;
      client.firstByteAt ??= now;
      client.socket.write(head[at % head.length]);
    }
    at += 1;
  }, 1000);
  return () => clearInterval(timer);
};

/** One GET on a new connection: its status and how long the answer took, to its last byte. */
const timedGet = (port: number, path: string): Promise<{ status: number; ms: number }> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer within 5 s`)));
    req.on('error', reject);
    req.end();
  });

describe('when a thousand idle and hundreds of slowloris connections are open', () => {
  let server: HttpServer;
  let clients: Client[] = [];
  let stopDribbling = (): void => undefined;

  afterAll(async () => {
    stopDribbling();
    for (const client of clients) client.socket.destroy();
    await server?.close();
  });

  it('answers the probes and /metrics within a second, and closes the slow connections within their timeouts', async () => {
    const limit = openFileLimit();
    if (limit !== undefined && limit < DESCRIPTORS_NEEDED) throw new Error(`this test needs ${DESCRIPTORS_NEEDED} open files; ulimit -n is ${limit}: raise it (ulimit -n ${DESCRIPTORS_NEEDED})`);
    server = createHttpServer({
      host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 }, metricsRegistry: createPromMetrics().registry, status: provider,
      logger: createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) }),
    });
    const { port } = await server.listen();
    const idle = await openMany(port, IDLE);
    const slow = await openMany(port, SLOW);
    clients = [...idle, ...slow];
    stopDribbling = dribble(slow);

    const latencies: number[] = [];
    const deadline = Date.now() + 4000;
    while (Date.now() < deadline) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const { status, ms } = await timedGet(port, path);
        expect(status).toBe(200);
        latencies.push(ms);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(Math.max(...latencies)).toBeLessThan(1000);

    await waitFor(() => slow.every((c) => c.closedAt !== undefined), { timeoutMs: MAIN_LIMITS.headersTimeoutMs + 2 * SLACK_MS, intervalMs: 50, message: 'the slowloris connections to be closed' });
    for (const client of slow) {
      expect(client.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect((client.closedAt as number) - (client.firstByteAt as number)).toBeLessThanOrEqual(MAIN_LIMITS.headersTimeoutMs + SLACK_MS);
    }
    await waitFor(() => idle.every((c) => c.closedAt !== undefined), { timeoutMs: 2 * SLACK_MS, intervalMs: 50, message: 'the idle connections to be closed' });
    for (const client of idle) expect((client.closedAt as number) - client.openedAt).toBeLessThanOrEqual(MAIN_LIMITS.idleTimeoutMs + SLACK_MS);
  }, 30_000);
});
