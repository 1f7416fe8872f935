import { compileRule, DEFAULT_QUEUE } from '../../../src/limit/compile-rule';
import { scaleRule } from '../../../src/limit/scale-rule';
import type { LimitRule } from '../../../src/limit/types';

const compiled = (spec: Parameters<typeof compileRule>[0]): LimitRule => {
  const result = compileRule(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.rule;
};

describe('compileRule', () => {
  describe('when a leaky bucket has no queue', () => {
    it(`uses the default queue of ${DEFAULT_QUEUE}`, () => {
      expect(compiled({ rate: '20/s' })).toMatchObject({ algorithm: 'leaky-bucket', intervalMs: 50, capacityMs: 60_000, burst: 1 });
    });
  });

  describe('when the queue is a count', () => {
    it('turns it into time: queue × T', () => {
      expect(compiled({ rate: '10/s', queue: 2 }).capacityMs).toBe(200);
      expect(compiled({ rate: '10/s', queue: 0 }).capacityMs).toBe(0);
    });
  });

  describe('when the rule is a token bucket', () => {
    it('has capacity (burst - 1) × T and burst 1 by default', () => {
      expect(compiled({ algorithm: 'token-bucket', rate: '10/s', burst: 100 })).toMatchObject({ burst: 100, capacityMs: 9900 });
      expect(compiled({ algorithm: 'token-bucket', rate: '10/s' })).toMatchObject({ burst: 1, capacityMs: 0 });
    });
  });

  describe('when fields do not fit the algorithm', () => {
    it('refuses burst on a leaky bucket and queue on a token bucket', () => {
      expect(compileRule({ rate: '1/s', burst: 3 })).toEqual({
        ok: false,
        errors: [{ path: ['burst'], message: expect.stringMatching(/^burst: a leaky bucket has no burst/) }],
      });
      expect(compileRule({ algorithm: 'token-bucket', rate: '1/s', queue: '1m' })).toEqual({
        ok: false,
        errors: [{ path: ['queue'], message: expect.stringMatching(/^queue: a token bucket never delays/) }],
      });
    });
  });

  describe('when several fields are wrong', () => {
    it('reports each with its path relative to the rule', () => {
      const result = compileRule({ rate: '10/x', bytes: '5 kilobytes/s', limits: ['5/h', { max: 2, per: 'x' }, 'lots'] });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors.map((e) => e.path)).toEqual([['rate'], ['bytes'], ['limits', 1, 'per'], ['limits', 2]]);
    });

    it('reports a missing rate and an unknown algorithm', () => {
      const result = compileRule({ algorithm: 'fast' as never } as never);
      expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([['algorithm'], ['rate']]);
    });
  });

  describe('when a rule has bytes and windows', () => {
    const rule = compiled({ rate: '5/s', queue: 0, bytes: '512KiB/s', limits: ['1000/h', { max: 20000, per: '1d', window: 'fixed' }] });

    it('keeps every limit with the label the user wrote', () => {
      expect(rule.byteIntervalMs).toBeCloseTo(1000 / 524288, 15);
      expect(rule.windows.map((w) => w.label)).toEqual(['1000/h', '20000/1d fixed']);
      expect(rule.labels).toEqual({ rate: '5/s', bytes: '512KiB/s' });
    });

    it('changes its fingerprint when any number changes', () => {
      const other = compiled({ rate: '5/s', queue: 0, bytes: '512KiB/s', limits: ['1001/h', { max: 20000, per: '1d', window: 'fixed' }] });
      expect(other.fingerprint).not.toBe(rule.fingerprint);
      expect(compiled({ rate: '5/s', queue: 0, bytes: '512KiB/s', limits: ['1000/h', '20000/1d fixed'] }).fingerprint).toBe(rule.fingerprint);
    });
  });

  describe('scaleRule', () => {
    it('gives a share of every rate and window, with a new fingerprint', () => {
      const rule = compiled({ rate: '30/s', queue: '10s', bytes: '3MB/s', limits: ['900/h', '2/s'] });
      const third = scaleRule(rule, 1 / 3);
      expect(third.intervalMs).toBeCloseTo(100, 9);
      expect(third.byteIntervalMs).toBeCloseTo(1000 / 1_000_000, 12);
      expect(third.capacityMs).toBe(10_000);
      expect(third.windows.map((w) => w.max)).toEqual([300, 1]);
      expect(third.fingerprint).not.toBe(rule.fingerprint);
    });

    it('scales a token bucket burst and refuses a share outside (0, 1]', () => {
      const rule = compiled({ algorithm: 'token-bucket', rate: '10/s', burst: 10 });
      expect(scaleRule(rule, 0.5)).toMatchObject({ burst: 5, intervalMs: 200, capacityMs: 800 });
      expect(() => scaleRule(rule, 0)).toThrow(RangeError);
      expect(() => scaleRule(rule, 1.5)).toThrow(RangeError);
    });
  });
});
