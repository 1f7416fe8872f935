import fc from 'fast-check';
import { createRedisStore } from '../../../src/limit/redis-store';
import { randomKeyPrefix } from '../../helpers/redis';
import { agreeWithOracle, scenarioArb } from '../../contracts/limiter-properties';
import { bothClients } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const clients = bothClients();

describe('Redis store properties', () => {
  describe.each([
    ['Redis', clients.redis],
    ['Redis Cluster', clients.cluster],
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
