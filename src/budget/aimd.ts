/**
 * The followed budget (`total.follow`): additive increase, multiplicative decrease, as TCP's
 * congestion window and Netflix's concurrency-limits. Once per FOLLOW_MS across all replicas
 * (budget-exchange-2.lua takes the step; this is its reference, unit-tested): while the
 * downstream group lags beyond maxLag and its lag is not shrinking the budget is multiplied by
 * DECREASE; beyond maxLag but shrinking it holds (the consumer is catching up: shrinking further
 * would only overshoot below what it reads, as a lag built up before a decrease takes seconds to
 * drain); within maxLag it grows by INCREASE × the configured rate, up to it; never below FLOOR ×
 * the configured rate.
 */

/** Lag is read and one step taken at most this often. */
export const FOLLOW_MS = 1000;
/** ×0.8 per second while lagging: a tenth of the budget's rate gone in about 10 s. */
export const DECREASE = 0.8;
/** +5 % of the configured rate per second while not lagging: full rate back in 20 s from nothing. */
export const INCREASE = 0.05;
/** Never below 1 % of the configured rate (a rate must stay above zero). */
export const FLOOR = 0.01;

/** The step a lag reading asks for: true shrink, false grow, undefined hold (`previous`: the reading before). */
export const followSignal = (lag: number, previous: number | undefined, maxLag: number): boolean | undefined => {
  if (lag <= maxLag) return false;
  return previous === undefined || lag >= previous ? true : undefined;
};

export const aimdStep = (current: number, lagging: boolean, rate: number): number =>
  lagging ? Math.max(rate * FLOOR, current * DECREASE) : Math.min(rate, current + rate * INCREASE);
