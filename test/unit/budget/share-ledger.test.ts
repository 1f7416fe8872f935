import fc from 'fast-check';
import { createShareLedger, FLOOR } from '../../../src/budget/share-ledger';

const targets = (entries: Record<string, number>) => new Map(Object.entries(entries));

/** Four cadences of the same targets from `from`: past delayMs, the shares in force are the targets. */
const settle = (ledger: ReturnType<typeof createShareLedger>, entries: Record<string, number>, from = 0): number => {
  for (let k = 0; k < 4; k += 1) ledger.update(from + k * 250, 300, targets(entries), 1);
  return from + 750;
};

describe('share ledger', () => {
  describe('when a share goes down', () => {
    it('applies the decrease at once', () => {
      const ledger = createShareLedger({ delayMs: 500, reserve: 0 });
      settle(ledger, { a: 300 });
      expect(ledger.shareOf('a', 750)).toBe(300);
      ledger.update(1000, 300, targets({ a: 150, b: 150 }), 1);
      expect(ledger.shareOf('a', 1000)).toBe(150);
    });
  });

  describe('when a share goes up', () => {
    it('applies the increase only once it has been the target for delayMs', () => {
      const ledger = createShareLedger({ delayMs: 500, reserve: 0 });
      settle(ledger, { a: 150, b: 150 });
      ledger.update(1250, 300, targets({ a: 300 }), 1);
      expect(ledger.shareOf('a', 1250)).toBe(150);
      ledger.update(1500, 300, targets({ a: 300 }), 1);
      expect(ledger.shareOf('a', 1500)).toBe(150);
      ledger.update(1750, 300, targets({ a: 300 }), 1);
      expect(ledger.shareOf('a', 1750)).toBe(300);
    });
  });

  describe('a newcomer', () => {
    it('is granted half of what is free at once, split between the replicas, and waits for the rest', () => {
      const ledger = createShareLedger({ delayMs: 500, reserve: 0.05 });
      settle(ledger, { a: 200 });
      ledger.update(1000, 300, targets({ a: 200 }), 2);
      // Free: 300 × 1.05 − 200 = 115, this replica's part 57.5, the newcomer half of it.
      expect(ledger.shareOf('b', 10)).toBeCloseTo(28.75, 6);
      expect(ledger.shareOf('c', 20)).toBeCloseTo(14.375, 6);
      expect(ledger.grantable()).toBeCloseTo(14.375, 6);
    });

    it('seen first in the targets is granted too, never its whole target at once', () => {
      const ledger = createShareLedger({ delayMs: 500, reserve: 0 });
      settle(ledger, { a: 300 });
      ledger.update(1000, 300, targets({ a: 150, b: 150 }), 1);
      expect(ledger.shareOf('a', 1000)).toBe(150);
      // a's 300 still counts as given: the smallest grant, a quarter of an equal share (300 ÷ 2).
      expect(ledger.shareOf('b', 1000)).toBe(37.5);
      ledger.update(1250, 300, targets({ a: 150, b: 150 }), 1);
      ledger.update(1500, 300, targets({ a: 150, b: 150 }), 1);
      expect(ledger.shareOf('b', 1500)).toBe(37.5);
      ledger.update(1750, 300, targets({ a: 150, b: 150 }), 1);
      expect(ledger.shareOf('b', 1750)).toBe(150);
    });
  });

  describe('an idle producer', () => {
    it('keeps counting as given for delayMs, then its part is free', () => {
      const ledger = createShareLedger({ delayMs: 500, reserve: 0 });
      settle(ledger, { a: 300 });
      ledger.update(1000, 300, targets({}), 1);
      expect(ledger.grantable()).toBe(0);
      ledger.update(1250, 300, targets({}), 1);
      ledger.update(1500, 300, targets({}), 1);
      expect(ledger.grantable()).toBe(300);
      expect(ledger.inForce().size).toBe(0);
    });
  });

  it('gives producers joining at one update one floor between them: FLOOR of an equal share among all who hold one after it', () => {
    const ledger = createShareLedger({ delayMs: 500, reserve: 0.05 });
    ledger.update(0, 300, targets({}), 1);
    ledger.shareOf('e', 0); // 157.5: half of 315
    ledger.shareOf('f', 0); // 78.75: 78.75 left
    ledger.update(250, 300, targets({ a: 75, b: 37.5, c: 24, d: 18.75 }), 1);
    const joined = ['a', 'b', 'c', 'd'].reduce((sum, p) => sum + (ledger.inForce().get(p) ?? 0), 0);
    // What was left (78.75) and at most FLOOR of the budget (75) above it; each at least 300 × FLOOR ÷ 4.
    expect(joined).toBeLessThanOrEqual(78.75 + 300 * FLOOR);
    for (const p of ['a', 'b', 'c', 'd']) expect(ledger.inForce().get(p)).toBeGreaterThanOrEqual((300 * FLOOR) / 4);
  });

  it('never has the shares in force, with what was given within delayMs before, above the budget plus the reserve and the floors of those who joined', () => {
    const ids = ['a', 'b', 'c', 'd'];
    const step = fc.record({
      budget: fc.constantFrom(100, 300, 1000),
      targets: fc.array(fc.tuple(fc.constantFrom(...ids), fc.double({ min: 0.01, max: 1, noNaN: true })), { maxLength: 4 }),
      newcomers: fc.array(fc.constantFrom(...ids, 'e', 'f'), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        const ledger = createShareLedger({ delayMs: 500, reserve: 0.05 });
        const given: Array<{ at: number; producer: string; share: number }> = [];
        // Each join's floor: FLOOR of an equal share among those holding one then (those joining at one update share it).
        const floors: Array<{ at: number; fraction: number }> = [];
        steps.forEach((s, k) => {
          const now = k * 250;
          // Targets that add up to at most the budget (as water-filling gives them).
          const weights = new Map(s.targets);
          const sum = [...weights.values()].reduce((a, b) => a + b, 0);
          const t = new Map([...weights].map(([p, w]) => [p, (w / Math.max(1, sum)) * s.budget]));
          const before = new Set(ledger.inForce().keys());
          ledger.update(now, s.budget, t, 1);
          const joined = [...ledger.inForce().keys()].filter((p) => !before.has(p));
          for (const _ of joined) floors.push({ at: now, fraction: FLOOR / ledger.inForce().size });
          for (const p of s.newcomers) {
            if (!ledger.inForce().has(p)) floors.push({ at: now, fraction: FLOOR / (ledger.inForce().size + 1) });
            ledger.shareOf(p, now);
          }
          for (const [p, share] of ledger.inForce()) given.push({ at: now, producer: p, share });
          // Reserved at most 250 ms ahead: what each producer got in the last 250 ms still leaves now.
          const recent = new Map<string, number>();
          for (const g of given) if (g.at >= now - 250) recent.set(g.producer, Math.max(recent.get(g.producer) ?? 0, g.share));
          const total = [...recent.values()].reduce((a, b) => a + b, 0);
          // What was given within delayMs counts against the budget: the floors of joins since then may add to it.
          const budget = Math.max(...steps.slice(Math.max(0, k - 3), k + 1).map((x) => x.budget));
          const floorsSince = floors.filter((f) => f.at >= now - 500).reduce((a, f) => a + f.fraction, 0);
          // Shares are floats: a sum exactly at the bound may exceed it by a few ulps.
          expect(total).toBeLessThanOrEqual(budget * (1.05 + floorsSince) * (1 + 1e-12) + 1e-6);
        });
      }),
      { numRuns: 300 },
    );
  });
});
