import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { loadConfig } from '../../../src/config';
import { createRedisClient, redisClientOptionsOf, redisOptions } from '../../../src/limit/redis-client';

const topics = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out' };
const optionsFrom = (env: Record<string, string>) => redisClientOptionsOf(loadConfig({ env: { ...topics, ...env } }));

/** the options ioredis got (read before any connection completes: port 1 refuses at once). */
const ioredisOptionsOf = (client: Redis | Cluster): RedisOptions => {
  client.disconnect();
  return 'redisOptions' in client.options ? client.options.redisOptions ?? {} : (client.options as RedisOptions);
};

describe('the limiter Redis client options', () => {
  describe('when Redis is slow or gone', () => {
    it('fails fast: a backstop command timeout, no offline queue, no retry, no resend after a reconnect, short back-off', () => {
      const options = redisOptions(50);
      expect(options).toMatchObject({
        commandTimeout: 1000,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        enableAutoPipelining: true,
        lazyConnect: false,
      });
      const backOff = options.retryStrategy as (times: number) => number;
      expect([1, 2, 3, 10, 1000].map(backOff)).toEqual([50, 100, 200, 1000, 1000]);
      expect(redisOptions(500).commandTimeout).toBe(2000);
    });
  });

  describe('when read from the settings', () => {
    it('takes the URL, the password and the timeout of a standalone Redis, TLS for rediss://', () => {
      expect(optionsFrom({ SLUICE_REDIS_URL: 'rediss://redis:6380', SLUICE_REDIS_PASSWORD: 'pw-1', SLUICE_REDIS_TIMEOUT_MS: '80' })).toEqual({
        url: 'rediss://redis:6380', password: 'pw-1', tls: true, timeoutMs: 80,
      });
      expect(optionsFrom({})).toEqual({ url: 'redis://127.0.0.1:6379', tls: false, timeoutMs: 50 });
    });

    it('takes the nodes, the password and redis.tls of a Redis Cluster', () => {
      expect(optionsFrom({ SLUICE_REDIS_CLUSTER_NODES: 'r-0:6379,r-1:6379', SLUICE_REDIS_PASSWORD: 'pw-2', SLUICE_REDIS_TLS: 'true' })).toMatchObject({
        clusterNodes: [{ host: 'r-0', port: 6379 }, { host: 'r-1', port: 6379 }], password: 'pw-2', tls: true,
      });
    });
  });

  describe('when a password and TLS are asked for', () => {
    it('gives every cluster node connection the password and TLS', () => {
      const cluster = createRedisClient({ clusterNodes: '127.0.0.1:1', password: 'pw-3', tls: true, timeoutMs: 50 });
      expect(ioredisOptionsOf(cluster)).toMatchObject({ password: 'pw-3', tls: {} });
    });

    it('gives a standalone connection the password (over the URL\'s) and TLS', () => {
      const redis = createRedisClient({ url: 'redis://:url-pw@127.0.0.1:1', password: 'pw-4', tls: true, timeoutMs: 50 });
      expect(ioredisOptionsOf(redis)).toMatchObject({ host: '127.0.0.1', port: 1, password: 'pw-4', tls: {} });
    });

    it('leaves them out when not set', () => {
      const redis = createRedisClient({ url: 'redis://127.0.0.1:1', timeoutMs: 50 });
      const options = ioredisOptionsOf(redis);
      expect(options.password ?? undefined).toBeUndefined();
      expect(options.tls).toBeUndefined();
    });
  });
});
