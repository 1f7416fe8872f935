/**
 * The read-only HTTP server of docs/contract.md "HTTP", on two listeners (node:http, no framework):
 * - main (http.host:http.port, 0.0.0.0:9464): /healthz, /readyz, /metrics for kubelet and
 *   Prometheus; /v1/* only for the bearer of http.adminToken;
 * - admin (http.adminHost:http.adminPort, 127.0.0.1:9465): /v1/* too, without a token when
 *   bound to loopback (./admin-access.ts).
 * The paths and answers are ./routes.ts; any other method: 405; any other path: 404. Each
 * listener bounds what slow or idle clients cost (./server-limits.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SluiceError } from '../errors';
import type { Logger } from '../logger';
import { adminAccess, adminListenerProblem, isAdminPath, type Listener } from './admin-access';
import { createRoutes, json, type Answer, type RouteOptions } from './routes';
import { ADMIN_LIMITS, MAIN_LIMITS, applyLimits, serverOptionsOf } from './server-limits';

export interface ListenAddress {
  host: string;
  port: number;
}

export interface HttpServerOptions extends RouteOptions {
  /** The main listener (http.host, http.port; port 0: any free port). */
  host: string;
  port: number;
  /** The admin listener (http.adminHost, http.adminPort); absent: none. Off loopback it needs adminToken. */
  admin?: ListenAddress;
  logger: Logger;
  /** http.adminToken: /v1/* on the main listener (and on an admin listener off loopback) requires `Authorization: Bearer <token>`. */
  adminToken?: string;
}

export interface Bound extends ListenAddress {
  admin?: ListenAddress;
}

export interface HttpServer {
  /** resolves with the bound addresses once both listeners listen. */
  listen(): Promise<Bound>;
  /** from now on /readyz answers 503 (call on SIGTERM, before stopping the consumers). */
  shuttingDown(): void;
  close(): Promise<void>;
}

const send = (response: ServerResponse, { status, body, type = 'text/plain; charset=utf-8' }: Answer, head: boolean, extra: Record<string, string> = {}): void => {
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
  response.end(head ? undefined : body);
};

const listenOn = (server: Server, { host, port }: ListenAddress, name: string): Promise<ListenAddress> =>
  new Promise((resolve, reject) => {
    const onError = (error: Error) =>
      reject(new SluiceError('ARGUMENT_INVALID', `${name} could not listen on ${host}:${port}: ${error.message}`, { cause: error }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address() as AddressInfo;
      resolve({ host: address.address, port: address.port });
    });
  });

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });

export const createHttpServer = (options: HttpServerOptions): HttpServer => {
  const { logger, secrets = [], admin, adminToken } = options;
  const problem = admin ? adminListenerProblem({ adminHost: admin.host, adminToken }) : undefined;
  if (problem) throw new SluiceError('CONFIG_INVALID', problem);
  let shutting = false;
  const routes = createRoutes(options, () => shutting);

  const handle = async (refusalOf: ReturnType<typeof adminAccess>, request: IncomingMessage, response: ServerResponse): Promise<void> => {
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

  const serverOf = (listener: Listener): Server => {
    const limits = listener === 'main' ? MAIN_LIMITS : ADMIN_LIMITS;
    const refusalOf = adminAccess({ listener, adminHost: admin?.host ?? '', adminToken });
    const server = createServer(serverOptionsOf(limits), (request, response) => {
      handle(refusalOf, request, response).catch((error: unknown) => {
        logger.error({ err: error, path: request.url }, 'HTTP request failed');
        if (!response.headersSent) send(response, json(500, { error: 'internal error' }, secrets), false);
        else response.destroy();
      });
    });
    applyLimits(server, limits);
    return server;
  };
  const main = serverOf('main');
  const adminServer = admin ? serverOf('admin') : undefined;
  const close = async (): Promise<void> => {
    await Promise.all([main, adminServer].map((server) => server && closeServer(server)));
  };

  return {
    listen: async () => {
      const bound: Bound = await listenOn(main, options, 'HTTP server');
      if (admin && adminServer) {
        try {
          bound.admin = await listenOn(adminServer, admin, 'HTTP admin listener');
        } catch (error) {
          await close();
          throw error;
        }
      }
      logger.info(bound, 'HTTP server listening');
      return bound;
    },
    shuttingDown: () => {
      shutting = true;
    },
    close,
  };
};
