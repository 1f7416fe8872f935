import type Redis from 'ioredis';
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import type { BatchDecision } from '../../../src/limit/types';
import { randomKeyPrefix, redisUrl } from '../../helpers/redis';
import { checkBounds } from '../../contracts/limiter-properties';
import { createOracle } from '../../contracts/limiter-oracle';
import { rule } from '../../contracts/limiter-harness';
import { ready } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const CONNECTIONS = 8;
const DURATION_MS = 5000;

describe('Redis store under concurrent replicas', () => {
  const clients: Redis[] = [];
  beforeAll(async () => {
    for (let i = 0; i < CONNECTIONS; i += 1) clients.push(createRedisClient({ url: redisUrl(), timeoutMs: 2000 }) as Redis);
    await Promise.all(clients.map(ready));
  });
  afterAll(() => Promise.all(clients.map((c) => c.quit())));

  describe(`when ${CONNECTIONS} connections hammer one producer for ${DURATION_MS / 1000} s on Redis time`, () => {
    it("admits exactly as many as the oracle replaying the same calls, never more than the rule's bound", async () => {
      const spec = rule({ rate: '200/s', queue: '100ms', limits: ['300/s', '900/3s log'] });
      const keyPrefix = randomKeyPrefix('limiter-hammer');
      const calls: Array<{ sizes: number[]; result: BatchDecision }> = [];
      const deadline = Date.now() + DURATION_MS;
      await Promise.all(
        clients.map(async (redis, c) => {
          const store = createRedisStore({ redis, keyPrefix, timeoutMs: 2000 });
          for (let i = 0; Date.now() < deadline; i += 1) {
            const sizes = Array.from({ length: 1 + ((i + c) % 4) }, () => 100);
            calls.push({ sizes, result: await store.decide({ producer: 'hot', rule: spec, sizes }) });
          }
        }),
      );
      const oracle = createOracle(spec);
      const sorted = [...calls].sort((a, b) => a.result.now - b.result.now);
      const expected = sorted.flatMap(({ sizes, result }) => oracle.decide(result.now, sizes)).filter((d) => d.code === 0).length;
      const admitted = calls.flatMap((c) => c.result.decisions).filter((d) => d.admitted).length;
      const span = sorted[sorted.length - 1].result.now - sorted[0].result.now;
      expect(calls.length).toBeGreaterThan(1000);
      expect(admitted).toBe(expected);
      expect(admitted).toBeLessThanOrEqual(Math.floor(span / spec.intervalMs) + 1 + spec.capacityMs / spec.intervalMs);
      checkBounds(spec, oracle.admitted());
    }, 30_000);
  });
});
