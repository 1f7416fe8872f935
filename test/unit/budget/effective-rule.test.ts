import { effectiveRule, HORIZON_MS } from '../../../src/budget/effective-rule';
import { compileRule } from '../../../src/limit/compile-rule';
import type { LimitRule } from '../../../src/limit/types';

const rule = (spec: Parameters<typeof compileRule>[0]): LimitRule => {
  const compiled = compileRule(spec);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return compiled.rule;
};

describe('a producer rule under the budget', () => {
  it('is decided at its share when the share is below its own rate, with the own fingerprint kept', () => {
    const own = rule({ rate: '500/s' });
    const shared = effectiveRule(own, { rate: 75 });
    expect(shared.intervalMs).toBeCloseTo(1000 / 75, 9);
    expect(shared.fingerprint).toBe(own.fingerprint);
    expect(shared.capacityMs).toBe(HORIZON_MS);
  });

  it('keeps its own rate as its cap when the share is larger', () => {
    const own = rule({ rate: '50/s', queue: '100ms' });
    const shared = effectiveRule(own, { rate: 300 });
    expect(shared.intervalMs).toBe(own.intervalMs);
    expect(shared.capacityMs).toBe(100);
  });

  it('takes the byte share when it is below its own byte rule, or adds one', () => {
    expect(effectiveRule(rule({ rate: '500/s' }), { rate: 1000, bytes: 1000 }).byteIntervalMs).toBe(1);
    expect(effectiveRule(rule({ rate: '500/s', bytes: '1KB/s' }), { rate: 1000, bytes: 10_000 }).byteIntervalMs).toBe(1);
  });

  it('keeps its windows as written', () => {
    const own = rule({ rate: '500/s', limits: ['1000/h'] });
    expect(effectiveRule(own, { rate: 10 }).windows).toEqual(own.windows);
  });

  it('bounds a token bucket\'s burst to the horizon at its share', () => {
    const shared = effectiveRule(rule({ algorithm: 'token-bucket', rate: '100/s', burst: 100 }), { rate: 40 });
    expect(shared.burst).toBe(11);
    expect(shared.capacityMs).toBe(250);
  });
});
