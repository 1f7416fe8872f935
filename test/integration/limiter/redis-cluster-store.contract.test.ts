import type { Cluster } from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { redisClusterNodes } from '../../helpers/redis';
import { describeLimiterStoreContract } from '../../contracts/limiter-store.contract';
import { ready, redisStoreFactory } from './redis-harness';

let cluster: Cluster;
beforeAll(async () => {
  cluster = createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 }) as Cluster;
  await ready(cluster);
});
afterAll(() => cluster.quit());

describeLimiterStoreContract('Redis Cluster', redisStoreFactory(() => cluster));
