import type { Cluster } from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { redisClusterNodes } from '../../helpers/redis';
import { describeLimiterStoreContract } from '../../contracts/limiter-store.contract';
import { ready, redisStoreFactory } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

let cluster: Cluster;
beforeAll(async () => {
  cluster = createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 }) as Cluster;
  await ready(cluster);
});
afterAll(() => cluster.quit());

describeLimiterStoreContract('Redis Cluster', redisStoreFactory(() => cluster));
