/**
 * What one HTTP listener spends on slow or idle clients, bounded so that the probes and
 * /metrics answer within a second while a thousand of them are connected (README, "Health and
 * readiness"; test/integration/security/slow-clients.test.ts):
 * - a connection that sends nothing for `idleTimeoutMs` is closed (also between requests:
 *   `keepAliveTimeoutMs`); one whose headers are not complete `headersTimeoutMs` after their
 *   first byte (slowloris) gets 408 and is closed, checked every `checkIntervalMs`; a request
 *   not fully received after `requestTimeoutMs` likewise; at most `maxHeadersCount` headers are read;
 * - at most `maxConnections` connections: one more closes the oldest connection that is not
 *   being answered (idle, or still sending its headers) rather than refusing the newcomer, so a
 *   full listener still lets a probe in (node's own server.maxConnections would refuse it).
 */
import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

export interface ServerLimits {
  idleTimeoutMs: number;
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  checkIntervalMs: number;
  maxHeadersCount: number;
  maxConnections: number;
}

export const MAIN_LIMITS: ServerLimits = {
  idleTimeoutMs: 5000,
  keepAliveTimeoutMs: 5000,
  headersTimeoutMs: 5000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 500,
  maxHeadersCount: 100,
  maxConnections: 1000,
};

/** The admin listener serves the pod's own processes (loopback) or token bearers: fewer connections. */
export const ADMIN_LIMITS: ServerLimits = { ...MAIN_LIMITS, maxConnections: 100 };

/** The options node:http's createServer takes for these limits. */
export const serverOptionsOf = (limits: ServerLimits): ServerOptions => ({
  requestTimeout: limits.requestTimeoutMs,
  headersTimeout: limits.headersTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  connectionsCheckingInterval: limits.checkIntervalMs,
});

/** Sets the rest on the server: the idle timeout, the header count and the connection cap. */
export const applyLimits = (server: Server, limits: ServerLimits): void => {
  server.timeout = limits.idleTimeoutMs;
  server.maxHeadersCount = limits.maxHeadersCount;
  const open = new Set<Socket>(); // in the order they came: the oldest first
  const answering = new Map<Socket, number>(); // requests in progress per connection
  const oldestIdle = (except: Socket): Socket | undefined => {
    for (const socket of open) if (socket !== except && !answering.has(socket)) return socket;
    return undefined;
  };
  server.on('request', (request, response) => {
    const { socket } = request;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (answering.get(socket) ?? 1) - 1;
      if (left > 0) answering.set(socket, left);
      else answering.delete(socket);
    });
  });
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      answering.delete(socket);
    });
    if (open.size <= limits.maxConnections) return;
    const victim = oldestIdle(socket) ?? socket; // every other one is being answered: the newcomer goes
    open.delete(victim);
    victim.destroy();
  });
};
