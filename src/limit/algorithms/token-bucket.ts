/**
 * Token bucket (policing) as GCRA: each bucket admits while tat - now <= (burst - 1) × T
 * (capacityMs), then tat = max(tat, now) + cost × T; a refusal may come back at tat -
 * capacity. Admitted messages go at once: a token bucket never delays. A retry decided as of
 * its earlier turn (`from` < now) is charged from its turn: tat = max(tat, from) + cost × T.
 */
import type { LimitRule } from '../types';
import type { KeyState } from './key-state';
import { LIMIT_BYTES, LIMIT_RATE, type BucketVerdict, type Refusal } from './verdict';

export const tokenVerdict = (rule: LimitRule, state: KeyState, now: number, size: number, from = now): BucketVerdict => {
  const refusals: Refusal[] = [];
  if (state.tat - now > rule.capacityMs) {
    refusals.push({ limit: LIMIT_RATE, notBefore: state.tat - rule.capacityMs, spread: rule.intervalMs });
  }
  const byteT = rule.byteIntervalMs;
  if (byteT !== undefined && state.btat - now > rule.capacityMs) {
    refusals.push({ limit: LIMIT_BYTES, notBefore: state.btat - rule.capacityMs, spread: size * byteT });
  }
  return { ok: refusals.length === 0, at: from, refusals };
};

export const tokenCharge = (rule: LimitRule, state: KeyState, now: number, size: number): void => {
  state.tat = Math.max(state.tat, now) + rule.intervalMs;
  if (rule.byteIntervalMs !== undefined) state.btat = Math.max(state.btat, now) + size * rule.byteIntervalMs;
};
