import type Redis from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { redisUrl } from '../../helpers/redis';
import { describeLimiterStoreContract } from '../../contracts/limiter-store.contract';
import { ready, redisStoreFactory } from './redis-harness';

let redis: Redis;
beforeAll(async () => {
  redis = createRedisClient({ url: redisUrl(), timeoutMs: 2000 }) as Redis;
  await ready(redis);
});
afterAll(() => redis.quit());

describeLimiterStoreContract('Redis', redisStoreFactory(() => redis));
