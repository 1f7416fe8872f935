/**
 * The read-only HTTP server of docs/contract.md: /healthz, /readyz, /metrics, /v1/status,
 * /v1/producers/{id}, /v1/producers/{id}/usage, /v1/quotas. Any other method: 405; any
 * other path: 404. Answers are redacted (src/logger.ts) so no secret leaves through here.
 * node:http, no framework. /v1/* is for loopback clients, or for the bearer of
 * http.adminToken (./admin-access.ts); answers about one producer are kept for a second.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { SluiceError } from '../errors';
import { redactSecrets, type Logger } from '../logger';
import { systemClock, type Clock } from '../clock';
import { adminAccess, isAdminPath } from './admin-access';
import { createAnswerCache } from './answer-cache';
import type { StatusProvider } from './status-provider';
import type { UsageQuery } from '../usage/usage-query';
import { matchUsagePath, usageReply } from './usage-route';

export interface HttpServerOptions {
  host: string;
  port: number;
  metricsRegistry: Registry;
  status: StatusProvider;
  /** GET /v1/producers/{id}/usage (./usage-route.ts); absent: that path is 404. */
  usage?: UsageQuery;
  logger: Logger;
  /** literal secrets to mask in answers (the settings' passwords). */
  secrets?: readonly string[];
  /** http.adminToken: /v1/* then requires `Authorization: Bearer <token>`; absent: loopback clients only. */
  adminToken?: string;
  /** how long answers are kept (default the system clock). */
  clock?: Clock;
}

export interface HttpServer {
  /** resolves with the bound address once listening. */
  listen(): Promise<{ host: string; port: number }>;
  /** from now on /readyz answers 503 (call on SIGTERM, before stopping the consumers). */
  shuttingDown(): void;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  body: string;
  type?: string;
}

type Handler = () => Promise<Answer>;
type Route = (path: string, query: URLSearchParams) => Handler | undefined;

const json = (status: number, body: unknown, secrets: readonly string[]): Answer => ({
  status,
  body: `${JSON.stringify(redactSecrets(body, secrets))}\n`,
  type: 'application/json; charset=utf-8',
});

const createRoutes = (options: HttpServerOptions, isShuttingDown: () => boolean): Route[] => {
  const { status, metricsRegistry, secrets = [] } = options;
  const answer = (code: number, body: unknown) => json(code, body, secrets);
  const producerReport = createAnswerCache(async (id) => status.producer(id), { ttlMs: 1000, maxEntries: 10_000, clock: options.clock ?? systemClock });
  const probe = (ok: boolean, reason: string) => answer(ok ? 200 : 503, { status: ok ? 'ok' : reason });
  const exact = (want: string, handler: Handler): Route => (path) => (path === want ? handler : undefined);
  return [
    exact('/healthz', async () => probe(status.alive(), status.illness?.() ?? 'consumer crashed')),
    exact('/readyz', async () => (isShuttingDown() ? probe(false, 'shutting down') : probe(status.ready(), 'not joined'))),
    exact('/metrics', async () => ({ status: 200, body: await metricsRegistry.metrics(), type: metricsRegistry.contentType })),
    exact('/v1/status', async () => answer(200, await status.status())),
    exact('/v1/quotas', async () => answer(200, await status.quotas())),
    (path, query) => {
      const id = matchUsagePath(path);
      const { usage } = options;
      if (id === undefined || !usage) return undefined;
      return async () => {
        const reply = await usageReply(usage, id, query);
        return answer(reply.status, reply.body);
      };
    },
    (path) => {
      const match = /^\/v1\/producers\/([^/]+)$/.exec(path);
      if (!match) return undefined;
      return async () => {
        let id: string;
        try {
          id = decodeURIComponent(match[1]);
        } catch {
          return answer(400, { error: 'producer id is not valid percent-encoding' });
        }
        const report = await producerReport(id);
        return report ? answer(200, report) : answer(404, { error: `no producer ${id}` });
      };
    },
  ];
};

const send = (response: ServerResponse, { status, body, type = 'text/plain; charset=utf-8' }: Answer, head: boolean, extra: Record<string, string> = {}): void => {
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
  response.end(head ? undefined : body);
};

export const createHttpServer = (options: HttpServerOptions): HttpServer => {
  const { logger, secrets = [] } = options;
  let shutting = false;
  const routes = createRoutes(options, () => shutting);
  const refusalOf = adminAccess(options.adminToken);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let path: string;
    let query: URLSearchParams;
    try {
      ({ pathname: path, searchParams: query } = new URL(request.url ?? '/', 'http://sluice'));
    } catch {
      return send(response, json(400, { error: 'bad request target' }, secrets), false);
    }
    const refusal = isAdminPath(path) ? refusalOf(request) : undefined;
    if (refusal) return send(response, json(refusal.status, { error: refusal.error }, secrets), false, refusal.headers);
    const found = routes.map((route) => route(path, query)).find((handler) => handler !== undefined);
    if (!found) return send(response, json(404, { error: `no such path ${path}` }, secrets), false);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return send(response, json(405, { error: `${request.method} not allowed; read-only` }, secrets), false, { allow: 'GET, HEAD' });
    }
    send(response, await found(), request.method === 'HEAD');
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      logger.error({ err: error, path: request.url }, 'HTTP request failed');
      if (!response.headersSent) send(response, json(500, { error: 'internal error' }, secrets), false);
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 5000;

  return {
    listen: () =>
      new Promise((resolve, reject) => {
        const onError = (error: Error) =>
          reject(new SluiceError('ARGUMENT_INVALID', `HTTP server could not listen on ${options.host}:${options.port}: ${error.message}`, { cause: error }));
        server.once('error', onError);
        server.listen(options.port, options.host, () => {
          server.off('error', onError);
          const address = server.address() as AddressInfo;
          logger.info({ host: address.address, port: address.port }, 'HTTP server listening');
          resolve({ host: address.address, port: address.port });
        });
      }),
    shuttingDown: () => {
      shutting = true;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
};
