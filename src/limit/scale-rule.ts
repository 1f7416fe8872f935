import { fingerprintOf } from './fingerprint';
import type { LimitRule } from './types';

/**
 * The same rule at `share` (0 < share <= 1) of its rates and window maxima: the `local`
 * store-error fallback gives each replica quota ÷ replicas. Intervals grow by 1/share; the
 * queue keeps its length in time (capacityMs unchanged) for a leaky bucket; a token bucket's
 * burst is scaled like the windows. Window maxima are rounded down but never below 1.
 */
export const scaleRule = (rule: LimitRule, share: number): LimitRule => {
  if (!(share > 0 && share <= 1)) throw new RangeError(`scaleRule: share must be in (0, 1], got ${share}`);
  const intervalMs = rule.intervalMs / share;
  const burst = rule.algorithm === 'token-bucket' ? Math.max(1, Math.floor(rule.burst * share)) : rule.burst;
  const body = {
    ...rule,
    intervalMs,
    burst,
    capacityMs: rule.algorithm === 'token-bucket' ? (burst - 1) * intervalMs : rule.capacityMs,
    ...(rule.byteIntervalMs === undefined ? {} : { byteIntervalMs: rule.byteIntervalMs / share }),
    windows: rule.windows.map((w) => ({ ...w, max: Math.max(1, Math.floor(w.max * share)) })),
  };
  return { ...body, fingerprint: fingerprintOf(body) };
};
