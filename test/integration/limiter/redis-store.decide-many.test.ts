import fc from 'fast-check';
import { createRedisStore } from '../../../src/limit/redis-store';
import { compileRule } from '../../../src/limit/compile-rule';
import { producerKey } from '../../../src/limit/producer-key';
import type { DecideRequest, LimitRule } from '../../../src/limit/types';
import { randomKeyPrefix } from '../../helpers/redis';
import { scenarioArb } from '../../contracts/limiter-properties';
import { T0 } from '../../contracts/limiter-harness';
import { bothClients } from './redis-harness';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const clients = bothClients();

const compiled = (spec: Parameters<typeof compileRule>[0]): LimitRule => {
  const result = compileRule(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.rule;
};

describe('when one call decides several producers (standalone Redis)', () => {
  it('decides each as decide() alone would: same replies, same state, for random rules and arrivals', async () => {
    const prefixes = { many: randomKeyPrefix('many'), single: randomKeyPrefix('single') };
    const many = createRedisStore({ redis: clients.redis(), keyPrefix: prefixes.many, timeoutMs: 2000 });
    const single = createRedisStore({ redis: clients.redis(), keyPrefix: prefixes.single, timeoutMs: 2000 });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(scenarioArb(12), { minLength: 2, maxLength: 6 }), async (scenarios) => {
        run += 1;
        const rules = scenarios.map((s) => compiled(s.spec));
        const clocks = scenarios.map(() => T0);
        const steps = Math.max(...scenarios.map((s) => s.arrivals.length));
        for (let step = 0; step < steps; step += 1) {
          const requests: DecideRequest[] = [];
          scenarios.forEach((s, j) => {
            const arrival = s.arrivals[step];
            if (!arrival) return;
            clocks[j] += arrival.gap;
            requests.push({ producer: `run-${run}-producer-${j}`, rule: rules[j], sizes: arrival.sizes, now: clocks[j] });
          });
          const together = await many.decideMany?.(requests);
          const alone = [];
          for (const request of requests) alone.push(await single.decide(request));
          expect(together).toEqual(alone);
          for (const { producer } of requests) expect(await clients.redis().get(producerKey(prefixes.many, producer))).toEqual(await clients.redis().get(producerKey(prefixes.single, producer)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('fails as a whole with STORE_UNAVAILABLE when it runs past its deadline, changing nothing', async () => {
    const keyPrefix = randomKeyPrefix('late');
    const rule = compiled({ rate: '10/s', queue: '1s' });
    // A store clock far behind Redis's: every call's "not after" lies in Redis's past.
    const store = createRedisStore({ redis: clients.redis(), keyPrefix, timeoutMs: 2000, clock: { now: () => Date.now() - 60_000, observe: () => undefined } });
    await expect(store.decideMany?.([{ producer: 'a', rule, sizes: [1] }, { producer: 'b', rule, sizes: [1] }])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await clients.redis().keys(`${keyPrefix}*`)).toEqual([]);
  });

  it('is not offered on a Cluster, whose producers live in different hash slots', () => {
    const store = createRedisStore({ redis: clients.cluster(), keyPrefix: randomKeyPrefix('cluster'), timeoutMs: 2000 });
    expect(store.decideMany).toBeUndefined();
  });
});
