/**
 * The ioredis client of the limiter, configured to fail fast: the store fails a call after
 * timeoutMs counted from its write (answer-timeout.ts); ioredis's own commandTimeout is only a
 * backstop for a command nobody waits for (max(1 s, 4 × timeoutMs)). Nothing waits in an
 * offline queue, no command is retried or resent after a reconnect by the client (a decision
 * that may have run must not run twice), the reconnect back-off is short, and auto-pipelining batches the decisions of one tick. Creating
 * it never throws while Redis is down (it keeps reconnecting); its `error` events are handled
 * here (passed to `onError`, by default dropped) so they never crash the process.
 */
import Redis, { Cluster, type RedisOptions } from 'ioredis';

export interface RedisClientOptions {
  url?: string;
  /** "host:port,host:port" or a list: a Redis Cluster instead of `url`. */
  clusterNodes?: string | Array<{ host: string; port: number }>;
  timeoutMs: number;
  onError?: (error: Error) => void;
}

/** Reconnect after 50 ms, growing to at most 1 s. */
const retryStrategy = (times: number): number => Math.min(50 * 2 ** Math.min(Math.max(times - 1, 0), 5), 1000);

const parseNodes = (nodes: string | Array<{ host: string; port: number }>): Array<{ host: string; port: number }> =>
  typeof nodes !== 'string'
    ? nodes
    : nodes
        .split(',')
        .map((node) => node.trim())
        .filter((node) => node !== '')
        .map((node) => {
          const at = node.lastIndexOf(':');
          return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
        });

export const redisOptions = (timeoutMs: number): RedisOptions => ({
  // A backstop only: counted from queueing, it would fail calls while the event loop is busy.
  commandTimeout: Math.max(1000, 4 * timeoutMs),
  connectTimeout: Math.max(timeoutMs, 1000),
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  // a command sent before a disconnect may have run: never send it again after reconnecting
  autoResendUnfulfilledCommands: false,
  enableAutoPipelining: true,
  lazyConnect: false,
  retryStrategy,
});

export const createRedisClient = ({ url, clusterNodes, timeoutMs, onError }: RedisClientOptions): Redis | Cluster => {
  const options = redisOptions(timeoutMs);
  const client =
    clusterNodes !== undefined && parseNodes(clusterNodes).length > 0
      ? new Cluster(parseNodes(clusterNodes), {
          redisOptions: options,
          enableOfflineQueue: false,
          enableAutoPipelining: true,
          lazyConnect: false,
          clusterRetryStrategy: retryStrategy,
          slotsRefreshTimeout: Math.max(timeoutMs, 1000),
        })
      : new Redis(url ?? 'redis://127.0.0.1:6379', options);
  client.on('error', (error: Error) => onError?.(error));
  return client;
};
