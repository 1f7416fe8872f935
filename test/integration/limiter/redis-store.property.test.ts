import fc from 'fast-check';
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/decide/fetch-decider';
import { randomKeyPrefix, redisClusterNodes, redisUrl } from '../../helpers/redis';
import { agreeWithOracle, scenarioArb } from '../../contracts/limiter-properties';
import { ready } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

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

describe('Redis store properties', () => {
  describe.each([
    ['Redis', () => redis],
    ['Redis Cluster', () => cluster],
  ])('when random rules meet random arrival sequences on %s', (_name, client) => {
    it('decides exactly as the brute-force oracle (same doubles as the memory store) and never exceeds a bound', async () => {
      const store = createRedisStore({ redis: client(), keyPrefix: randomKeyPrefix('limiter-prop'), timeoutMs: 2000 });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(scenarioArb(25), async (scenario) => {
          run += 1;
          await agreeWithOracle(store, `producer-${run}`, scenario);
        }),
        { numRuns: 150 },
      );
    });
  });
});
