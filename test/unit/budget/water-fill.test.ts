import fc from 'fast-check';
import { waterFill, type Claim } from '../../../src/budget/water-fill';

/**
 * Brute-force oracle: the shares are clamp(w × λ, min(m, d), d) at the water level λ where they add
 * up to the budget. Σ over λ is piecewise linear with breakpoints at floor/w and demand/w: walk
 * every breakpoint, find the segment that holds the budget, solve it exactly.
 */
const oracle = (budget: number, claims: readonly Claim[]): number[] => {
  const floors = claims.map((c) => Math.min(c.min, c.demand));
  const floorSum = floors.reduce((a, b) => a + b, 0);
  if (floorSum >= budget) return floors.map((f) => (floorSum > 0 ? (f * budget) / floorSum : 0));
  if (claims.reduce((a, c) => a + c.demand, 0) <= budget) return claims.map((c) => c.demand);
  const at = (level: number) => claims.map((c, i) => Math.min(c.demand, Math.max(floors[i], c.weight * level)));
  const sum = (level: number) => at(level).reduce((a, b) => a + b, 0);
  const points = [0, ...claims.flatMap((c, i) => [floors[i] / c.weight, c.demand / c.weight])].filter(Number.isFinite).sort((a, b) => a - b);
  for (let k = 1; k < points.length; k += 1) {
    const [lo, hi] = [points[k - 1], points[k]];
    const [slo, shi] = [sum(lo), sum(hi)];
    if (shi >= budget && shi > slo) return at(lo + ((budget - slo) * (hi - lo)) / (shi - slo));
  }
  // Past the last finite breakpoint only infinite demands grow: linear in λ from there.
  const last = points[points.length - 1];
  const slope = claims.filter((c) => c.demand === Infinity).reduce((a, c) => a + c.weight, 0);
  return at(last + (budget - sum(last)) / slope);
};

const claimArb: fc.Arbitrary<Claim> = fc.record({
  weight: fc.oneof(fc.constantFrom(1, 2, 4), fc.double({ min: 0.01, max: 100, noNaN: true })),
  demand: fc.oneof(fc.constant(Infinity), fc.constantFrom(0, 75, 150, 300), fc.double({ min: 0, max: 5000, noNaN: true })),
  min: fc.oneof(fc.constant(0), fc.constantFrom(50, 200), fc.double({ min: 0, max: 1000, noNaN: true })),
});

describe('waterFill (weighted max-min with minimums)', () => {
  it('gives three backlogged producers of weights 1, 1, 2 a budget of 300 as 75, 75, 150', () => {
    const backlogged = (weight: number): Claim => ({ weight, demand: 500, min: 0 });
    expect(waterFill(300, [backlogged(1), backlogged(1), backlogged(2)]).map((s) => Math.round(s * 1e6) / 1e6)).toEqual([75, 75, 150]);
  });

  it('gives every demand when the demands fit', () => {
    expect(waterFill(300, [{ weight: 1, demand: 50, min: 0 }, { weight: 4, demand: 100, min: 0 }])).toEqual([50, 100]);
  });

  it('never gives more than a demand, and shares what one leaves by weight', () => {
    const shares = waterFill(300, [{ weight: 1, demand: 20, min: 0 }, { weight: 1, demand: 500, min: 0 }, { weight: 2, demand: 500, min: 0 }]);
    expect(shares[0]).toBeCloseTo(20, 6);
    expect(shares[1]).toBeCloseTo(280 / 3, 6);
    expect(shares[2]).toBeCloseTo(560 / 3, 6);
  });

  it('gives a minimum first, then the rest by weight', () => {
    const shares = waterFill(300, [{ weight: 1, demand: 500, min: 200 }, { weight: 1, demand: 500, min: 0 }, { weight: 1, demand: 500, min: 0 }]);
    expect(shares.map((s) => Math.round(s * 1e6) / 1e6)).toEqual([200, 50, 50]);
  });

  it('scales the minimums down when they alone exceed the budget', () => {
    expect(waterFill(300, [{ weight: 1, demand: 500, min: 400 }, { weight: 1, demand: 500, min: 200 }])).toEqual([200, 100]);
  });

  it('agrees with the brute-force oracle and is feasible and max-min fair on random claims', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 10_000, noNaN: true }), fc.array(claimArb, { minLength: 1, maxLength: 12 }), (budget, claims) => {
        const shares = waterFill(budget, claims);
        const expected = oracle(budget, claims);
        const tolerance = 1e-6 * budget;
        shares.forEach((share, i) => expect(Math.abs(share - expected[i])).toBeLessThanOrEqual(tolerance));
        const sum = shares.reduce((a, b) => a + b, 0);
        expect(sum).toBeLessThanOrEqual(budget + tolerance);
        const floors = claims.map((c) => Math.min(c.min, c.demand));
        const floorsFit = floors.reduce((a, b) => a + b, 0) < budget;
        claims.forEach((c, i) => {
          expect(shares[i]).toBeLessThanOrEqual(c.demand + tolerance);
          if (floorsFit) expect(shares[i]).toBeGreaterThanOrEqual(floors[i] - tolerance);
        });
        // Max-min: one held below its demand has at least the weighted level of anyone above their floor.
        if (floorsFit) {
          claims.forEach((ci, i) => claims.forEach((cj, j) => {
            if (shares[i] < ci.demand - tolerance && shares[j] > floors[j] + tolerance) {
              expect(shares[j] / cj.weight).toBeLessThanOrEqual(shares[i] / ci.weight + tolerance);
            }
          }));
          // Work-conserving: the budget is used up unless every demand is met.
          const demandSum = claims.reduce((a, c) => a + c.demand, 0);
          expect(sum).toBeGreaterThanOrEqual(Math.min(budget, demandSum) - tolerance);
        }
      }),
      { numRuns: 500 },
    );
  });
});
