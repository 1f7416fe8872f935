import type Redis from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { redisUrl } from '../../helpers/redis';
import { describeLimiterStoreContract } from '../../contracts/limiter-store.contract';
import { ready, redisStoreFactory } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

let redis: Redis;
beforeAll(async () => {
  redis = createRedisClient({ url: redisUrl(), timeoutMs: 2000 }) as Redis;
  await ready(redis);
});
afterAll(() => redis.quit());

describeLimiterStoreContract('Redis', redisStoreFactory(() => redis));
