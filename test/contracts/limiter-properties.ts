/**
 * Property tests of the limiter: random rules and arrival sequences; a store must agree with
 * the brute-force oracle on every decision, and no limit may ever admit more than its bound.
 */
import fc from 'fast-check';
import type { RuleSpec } from '../../src/limit/compile-rule';
import type { BatchDecision, LimiterStore, LimitRule } from '../../src/limit/types';
import { rule as compile, T0 } from './limiter-harness';
import { createOracle } from './limiter-oracle';

export interface Scenario {
  spec: RuleSpec;
  arrivals: Array<{ gap: number; sizes: number[] }>;
}

const windowArb = fc.record({
  max: fc.integer({ min: 1, max: 6 }),
  per: fc.constantFrom('1s', '2s', '500ms', '3s'),
  window: fc.constantFrom('sliding' as const, 'fixed' as const, 'log' as const),
});

const specArb: fc.Arbitrary<RuleSpec> = fc
  .record({
    token: fc.boolean(),
    count: fc.integer({ min: 1, max: 40 }),
    per: fc.constantFrom('s', '2s', '10s', '1500ms'),
    queue: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom('0s', '250ms', '1s', '3s')),
    burst: fc.integer({ min: 1, max: 6 }),
    bytes: fc.option(fc.constantFrom('1000B/s', '2KiB/s', '512B/s', '10KB/s'), { nil: undefined }),
    limits: fc.array(windowArb, { maxLength: 2 }),
  })
  .map(({ token, count, per, queue, burst, bytes, limits }) => ({
    algorithm: token ? ('token-bucket' as const) : ('leaky-bucket' as const),
    rate: `${count}/${per}`,
    ...(token ? { burst } : { queue }),
    ...(bytes === undefined ? {} : { bytes }),
    limits,
  }));

export const scenarioArb = (maxArrivals: number): fc.Arbitrary<Scenario> =>
  fc.record({
    spec: specArb,
    arrivals: fc.array(
      fc.record({
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1500 })),
        sizes: fc.array(fc.integer({ min: 1, max: 1500 }), { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: maxArrivals },
    ),
  });

const codeOf = (rule: LimitRule, reason: string | undefined): number => {
  if (reason === undefined) return 0;
  if (reason === 'rate') return 1;
  if (reason === 'bytes') return 2;
  return 3 + rule.windows.findIndex((w) => w.label === reason);
};

/** Runs the scenario on the store (under `producer`) and on the oracle; returns the admitted decision instants. */
export const agreeWithOracle = async (store: LimiterStore, producer: string, scenario: Scenario): Promise<number[]> => {
  const rule = compile(scenario.spec);
  const oracle = createOracle(rule);
  let now = T0;
  for (const { gap, sizes } of scenario.arrivals) {
    now += gap;
    const got: BatchDecision = await store.decide({ producer, rule, sizes, now });
    const expected = oracle.decide(now, sizes);
    expect(got.decisions.map((d) => [codeOf(rule, d.reason), d.at])).toEqual(expected.map((e) => [e.code, e.at]));
  }
  checkBounds(rule, oracle.admitted());
  return oracle.admitted().map((a) => a.decidedAt);
};

/** No window ever holds more than its bound; the leaky bucket's releases keep their spacing and queue (to the precision of doubles at epoch scale, ~0.0002 ms). */
export const checkBounds = (rule: LimitRule, admitted: Array<{ decidedAt: number; release: number }>): void => {
  for (const w of rule.windows) {
    const bound = w.kind === 'fixed' ? 2 * w.max : w.max;
    for (let i = 0; i < admitted.length; i += 1) {
      const inWindow = admitted.filter((a) => a.decidedAt >= admitted[i].decidedAt && a.decidedAt < admitted[i].decidedAt + w.windowMs);
      expect(inWindow.length).toBeLessThanOrEqual(bound);
    }
  }
  if (rule.algorithm === 'leaky-bucket') {
    for (let i = 1; i < admitted.length; i += 1) {
      expect(admitted[i].release - admitted[i - 1].release).toBeGreaterThanOrEqual(rule.intervalMs - 1e-3);
      expect(admitted[i].release - admitted[i].decidedAt).toBeLessThanOrEqual(rule.capacityMs + 1e-3);
    }
  } else {
    // GCRA: any span [t_i, t_j] holds at most burst + (t_j - t_i) / T admitted messages
    for (let i = 0; i < admitted.length; i += 1) {
      for (let j = i; j < admitted.length; j += 1) {
        const span = admitted[j].decidedAt - admitted[i].decidedAt;
        expect(j - i + 1).toBeLessThanOrEqual(rule.burst + span / rule.intervalMs + 1e-6);
      }
    }
  }
};
