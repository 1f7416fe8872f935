/**
 * Weighted max-min fairness with guaranteed minimums (docs/design.md "The downstream budget"),
 * pure. Each claimant i has a weight w_i > 0, a demand d_i ≥ 0 (already capped at its own rule)
 * and a minimum m_i ≥ 0. Its share is
 *
 *   a_i = clamp(w_i × λ, min(m_i, d_i), d_i)
 *
 * with the one water level λ at which the shares add up to the budget B (or every demand met
 * when Σ d_i ≤ B): minimums first, then the rest by weight, never above a demand. When the
 * minimums alone exceed B, each gets its minimum scaled by B / Σ minimums.
 */

export interface Claim {
  weight: number;
  /** What it would take, at most: its offered rate, or its own rule when backlogged. May be Infinity. */
  demand: number;
  min: number;
}

/** Bisection steps: λ to 2^-80 of its range, far below a message per second. */
const STEPS = 80;

const shareAt = (claim: Claim, level: number): number => {
  const floor = Math.min(claim.min, claim.demand);
  return Math.min(claim.demand, Math.max(floor, claim.weight * level));
};

const total = (claims: readonly Claim[], level: number): number => {
  let sum = 0;
  for (const claim of claims) sum += shareAt(claim, level);
  return sum;
};

/** The shares of `budget` (same order as `claims`). */
export const waterFill = (budget: number, claims: readonly Claim[]): number[] => {
  if (claims.length === 0) return [];
  const floors = claims.map((c) => Math.min(c.min, c.demand));
  const floorSum = floors.reduce((a, b) => a + b, 0);
  if (floorSum >= budget) return floors.map((f) => (floorSum > 0 ? (f * budget) / floorSum : 0));
  const demandSum = claims.reduce((a, c) => a + c.demand, 0);
  if (demandSum <= budget) return claims.map((c) => c.demand);
  // Σ shares(λ) is continuous and non-decreasing; at λ = budget / min weight every share is at least
  // min(budget, demand), so the sum reaches the budget there.
  let lo = 0;
  let hi = budget / Math.min(...claims.map((c) => c.weight));
  for (let step = 0; step < STEPS && hi - lo > 0; step += 1) {
    const mid = (lo + hi) / 2;
    if (total(claims, mid) < budget) lo = mid;
    else hi = mid;
  }
  return claims.map((c) => shareAt(c, lo));
};
