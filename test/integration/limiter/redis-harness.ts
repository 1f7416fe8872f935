/** Runs the limiter contract on a real Redis (or Redis Cluster): one client per file, one key prefix per test. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { producerKey } from '../../../src/limit/producer-key';
import { createRedisStore } from '../../../src/decide/fetch-decider';
import { randomKeyPrefix } from '../../helpers/redis';
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
