/** Runs the limiter contract on a real Redis (or Redis Cluster): one client per file, one key prefix per test. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { producerKey } from '../../../src/limit/producer-key';
import { createRedisStore } from '../../../src/limit/redis-store';
import { createRedisClient } from '../../../src/limit/redis-client';
import { randomKeyPrefix, redisClusterNodes, redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import type { StoreFactory } from '../../contracts/limiter-harness';

export const redisStoreFactory = (client: () => Redis | Cluster): StoreFactory => async () => {
  const keyPrefix = randomKeyPrefix('limiter');
  const redis = client();
  const store = createRedisStore({ redis, keyPrefix, timeoutMs: 2000 });
  return {
    store,
    forgetsAfter: async (producer) => {
      const ttl = await redis.pttl(producerKey(keyPrefix, producer));
      return ttl < 0 ? undefined : ttl;
    },
  };
};

/** Resolves once the client can take commands (no offline queue); throws after 10 s. */
export const ready = (client: Redis | Cluster): Promise<unknown> =>
  waitFor(() => client.status === 'ready', { timeoutMs: 10_000, intervalMs: 20, message: 'the Redis client to be ready' });

/** A standalone Redis client and a Cluster client for the whole file (jest's beforeAll and afterAll), each ready before the first test. */
export const bothClients = (): { redis(): Redis; cluster(): Cluster } => {
  let redis: Redis;
  let cluster: Cluster;
  beforeAll(async () => {
    redis = createRedisClient({ url: redisUrl(), timeoutMs: 2000 }) as Redis;
    cluster = createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 }) as Cluster;
    await Promise.all([ready(redis), ready(cluster)]);
  });
  afterAll(async () => {
    await Promise.all([redis.quit(), cluster.quit()]);
  });
  return { redis: () => redis, cluster: () => cluster };
};
