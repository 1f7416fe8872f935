/**
 * The ioredis client of the limiter, configured to fail fast: the store fails a call after
 * timeoutMs counted from its write (answer-timeout.ts); ioredis's own commandTimeout is only a
 * backstop for a command nobody waits for (max(1 s, 4 × timeoutMs)). Nothing waits in an
 * offline queue, no command is retried or resent after a reconnect by the client (a decision
 * that may have run must not run twice), the reconnect back-off is short, and auto-pipelining batches the decisions of one tick. Creating
 * it never throws while Redis is down (it keeps reconnecting); its `error` events are handled
 * here (passed to `onError`, by default dropped) so they never crash the process.
 * Every connection (the standalone server, each cluster node) authenticates with `password`
 * and speaks TLS when asked: redisClientOptionsOf(config) reads both from the settings.
 */
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config/types';

export interface RedisClientOptions {
  url?: string;
  /** "host:port,host:port" or a list: a Redis Cluster instead of `url`. */
  clusterNodes?: string | Array<{ host: string; port: number }>;
  /** AUTH password of every connection (standalone and cluster nodes); wins over one inside `url`. */
  password?: string;
  /** TLS (system CAs) on every connection; a rediss:// `url` turns it on by itself. */
  tls?: boolean;
  timeoutMs: number;
  onError?: (error: Error) => void;
}

/** What createRedisClient needs from the settings: `createRedisClient({ ...redisClientOptionsOf(config), onError })`. */
export const redisClientOptionsOf = (config: Pick<Config, 'redis'>): Omit<RedisClientOptions, 'onError'> => {
  const { url, clusterNodes, password, tls, timeoutMs } = config.redis;
  return {
    url,
    ...(clusterNodes.length > 0 ? { clusterNodes: clusterNodes.map(({ host, port }) => ({ host, port })) } : {}),
    ...(password !== undefined && password !== '' ? { password } : {}),
    tls,
    timeoutMs,
  };
};

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

/** Password and TLS as ioredis options (ioredis reads `tls` as the options of tls.connect). */
export const connectionOptions = ({ password, tls }: Pick<RedisClientOptions, 'password' | 'tls'>): RedisOptions => ({
  ...(password !== undefined && password !== '' ? { password } : {}),
  ...(tls === true ? { tls: {} } : {}),
});

/**
 * ioredis takes the first value it sees of an option: the URL's password would win over
 * the options' one. redis.password is documented to win, so it comes first.
 */
const standalone = (url: string, options: RedisOptions): Redis =>
  new (Redis as unknown as new (options: RedisOptions, url: string) => Redis)(options, url);

export const createRedisClient = ({ url, clusterNodes, password, tls, timeoutMs, onError }: RedisClientOptions): Redis | Cluster => {
  const options = { ...redisOptions(timeoutMs), ...connectionOptions({ password, tls }) };
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
      : standalone(url ?? 'redis://127.0.0.1:6379', options);
  client.on('error', (error: Error) => onError?.(error));
  return client;
};

