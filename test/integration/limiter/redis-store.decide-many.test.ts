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

/** The slack of a key's expiry: Redis expires it by the wall clock, after `ttl` ms, while the test reads it. */
const EXPIRING_MS = 50;

/**
 * Both keys hold the same state. A state whose bucket empties within a few ms of the decision's
 * instant is written with a TTL of a few ms, so either copy may be gone by the time it is read:
 * then the other must be about to go too.
 */
const expectSameState = async (a: string, b: string): Promise<void> => {
  const read = await clients.redis().multi().get(a).pttl(a).get(b).pttl(b).exec();
  const [[, valueA], [, ttlA], [, valueB], [, ttlB]] = read as [unknown, unknown][];
  if (valueA !== null && valueB !== null) expect(valueA).toEqual(valueB);
  else expect(Math.max(Number(ttlA), Number(ttlB))).toBeLessThan(EXPIRING_MS);
};

/** Two stores on one Redis, under their own prefixes: one deciding rounds in one call, one a call each. */
const storePair = (name: string) => {
  const prefixes = { many: randomKeyPrefix(name), single: randomKeyPrefix(`${name}-single`) };
  return {
    prefixes,
    many: createRedisStore({ redis: clients.redis(), keyPrefix: prefixes.many, timeoutMs: 2000 }),
    single: createRedisStore({ redis: clients.redis(), keyPrefix: prefixes.single, timeoutMs: 2000 }),
  };
};

/** The round decided in one call answers and leaves each producer's state as one call each, in order, does. */
const expectAgree = async ({ prefixes, many, single }: ReturnType<typeof storePair>, requests: DecideRequest[]): Promise<void> => {
  const together = await many.decideMany?.(requests);
  const alone = [];
  for (const request of requests) alone.push(await single.decide(request));
  expect(together).toEqual(alone);
  for (const { producer } of requests) await expectSameState(producerKey(prefixes.many, producer), producerKey(prefixes.single, producer));
};

describe('when one call decides several producers (standalone Redis)', () => {
  it('decides each as decide() alone would: same replies, same state, for random rules and arrivals', async () => {
    const pair = storePair('many');
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
          await expectAgree(pair, requests);
        }
      }),
      { numRuns: 60 },
    );
  });

  // A round's requests share an instant: one call, each distinct rule sent once, and what each
  // producer has of its own after them (decide-many.lua). Producers share rules here on purpose.
  it('decides producers at one instant in one call as decide() alone would: rules shared or not, byte buckets, as-of instants, leases', async () => {
    const pair = storePair('many-at');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(scenarioArb(12), { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { minLength: 2, maxLength: 8 }), async (scenarios, picks) => {
        run += 1;
        const rules = scenarios.map((s) => compiled(s.spec));
        // Producer j follows scenario picks[j] (several producers on one rule object).
        const followed = picks.map((pick) => pick % scenarios.length);
        let clock = T0;
        const steps = Math.max(...scenarios.map((s) => s.arrivals.length));
        for (let step = 0; step < steps; step += 1) {
          clock += Math.max(0, ...scenarios.map((s) => s.arrivals[step]?.gap ?? 0));
          const requests: DecideRequest[] = [];
          followed.forEach((r, j) => {
            const arrival = scenarios[r].arrivals[step];
            if (!arrival) return;
            // Some as of an earlier turn, some asking for a lease: each field is the producer's own.
            const asOf = picks[j] % 5 === 1 ? clock - (picks[j] % 700) : undefined;
            const lease = picks[j] % 3 === 2 ? 1 + (picks[j] % 7) : undefined;
            // Fresh producers each step: a state left by an earlier step may have a TTL of a few ms
            // (Redis expires by the wall clock, the test's instants are its own), and one copy
            // expired before the next step and the other not decided the same message apart (CI).
            requests.push({ producer: `run-${run}-step-${step}-producer-${j}`, rule: rules[r], sizes: arrival.sizes, now: clock, asOf, lease });
          });
          if (requests.length === 0) continue;
          await expectAgree(pair, requests);
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
