/**
 * Leaky bucket (shaping), docs/design.md "Semantics of the limiter": one release time R = max(now, tat_i) for every bucket
 * of the rule; admitted at R while R - now <= capacity, each bucket then at R + cost_i × T_i;
 * otherwise refused from R - capacity by the bucket that set R. A retry decided as of its
 * earlier turn (`from` < now) may take a slot from its turn on that the bucket left free:
 * R = max(from, tat_i), still admitted only while R - now <= capacity.
 */
import type { LimitRule } from '../types';
import type { KeyState } from './key-state';
import { LIMIT_BYTES, LIMIT_RATE, type BucketVerdict } from './verdict';

export const leakyVerdict = (rule: LimitRule, state: KeyState, now: number, size: number, from = now): BucketVerdict => {
  const hasBytes = rule.byteIntervalMs !== undefined;
  const release = Math.max(from, state.tat, hasBytes ? state.btat : 0);
  if (release - now <= rule.capacityMs) return { ok: true, at: release, refusals: [] };
  const bytesSetIt = hasBytes && state.btat > state.tat;
  return {
    ok: false,
    at: release,
    refusals: [
      bytesSetIt
        ? { limit: LIMIT_BYTES, notBefore: release - rule.capacityMs, spread: size * (rule.byteIntervalMs as number) }
        : { limit: LIMIT_RATE, notBefore: release - rule.capacityMs, spread: rule.intervalMs },
    ],
  };
};

export const leakyCharge = (rule: LimitRule, state: KeyState, at: number, size: number): void => {
  state.tat = at + rule.intervalMs;
  if (rule.byteIntervalMs !== undefined) state.btat = at + size * rule.byteIntervalMs;
};
