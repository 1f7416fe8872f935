/**
 * Redis for integration tests, from the environment `npm run services -- up` (or the global
 * setup) fills: `createRedis()` (SLUICE_REDIS_URL) and `createRedisCluster()`
 * (SLUICE_REDIS_CLUSTER_NODES). Use a `randomKeyPrefix()` per test; `quit` clients in afterAll.
 */
import Redis, { Cluster, RedisOptions } from 'ioredis';

export { randomKeyPrefix } from './names';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\` or export what \`npm run services -- up --redis-cluster\` prints`);
  return value;
};

export const redisUrl = (): string => required('SLUICE_REDIS_URL');

/** `host:port` pairs of the Redis Cluster. */
export const redisClusterNodes = (): Array<{ host: string; port: number }> =>
  required('SLUICE_REDIS_CLUSTER_NODES')
    .split(',')
    .map((node) => {
      const [host, port] = node.trim().split(':');
      return { host: host ?? '127.0.0.1', port: Number(port) };
    });

export const createRedis = (options: RedisOptions = {}): Redis =>
  new Redis(redisUrl(), { maxRetriesPerRequest: 2, ...options });

export const createRedisCluster = (options: RedisOptions = {}): Cluster =>
  new Cluster(redisClusterNodes(), { redisOptions: { maxRetriesPerRequest: 2, ...options } });
