/**
 * What a decision means for one message. Instants are on the store's clock (the flow runs on
 * it: src/decide/store-clock.ts), so a skewed pod clock does not change the spacing.
 */
import type { BatchDecision, Decision, LimitRule } from '../limit/types';

/** The spacing a rule asks between two releases of one producer: its interval for a leaky bucket, none otherwise. */
export const spacingOf = (rule: LimitRule): number => (rule.algorithm === 'leaky-bucket' ? rule.intervalMs : 0);
import type { ParkReason } from '../park/park-headers';

/** The part of a resolved quota rule the pipeline needs (src/rules resolveRule's result). */
export interface RuleView {
  name: string;
  unlimited: boolean;
  shadow: boolean;
  limit?: LimitRule;
}

export interface Candidate {
  producer: string;
  rule: RuleView;
  /** Bytes the byte bucket charges: key + value + headers. */
  size: number;
  /** Decide as of this store instant instead of the store's clock (a retry a little late keeps its turn). */
  asOf?: number;
}

export type Verdict =
  /**
   * Held in memory until `at`, then produced downstream. `spacingMs`: the rule's emission
   * interval for a leaky bucket (releases of one producer are kept at least that far apart).
   */
  | { kind: 'forward'; at: number; shadow?: 'delayed' | 'overflowed'; spacingMs?: number }
  /** Written to a retry tier; may not leave before `notBefore`. */
  | { kind: 'park'; reason: ParkReason; notBefore: number };

export const reasonOf = (decision: Decision): ParkReason =>
  decision.reason === 'store-unavailable' ? { kind: 'store-unavailable' } : { kind: 'overflow', limit: decision.reason ?? 'rate' };

/** Enforcing: admitted within hold.maxMs → forward; admitted later → park `delayed`; refused → park with its reason. */
export const enforceVerdicts = (reply: BatchDecision, now: number, holdMaxMs: number, spacingMs = 0): Verdict[] =>
  reply.decisions.map((decision) => {
    const { at } = decision;
    if (!decision.admitted) return { kind: 'park', reason: reasonOf(decision), notBefore: at };
    if (at - now <= holdMaxMs) return spacingMs > 0 ? { kind: 'forward', at, spacingMs } : { kind: 'forward', at };
    return { kind: 'park', reason: { kind: 'delayed' }, notBefore: at };
  });

/** Shadow: everything forwarded now; what would have been delayed or refused is marked. */
export const shadowVerdicts = (reply: BatchDecision, now: number): Verdict[] =>
  reply.decisions.map((decision) => {
    if (!decision.admitted) return { kind: 'forward', at: now, shadow: 'overflowed' };
    if (decision.at > reply.now) return { kind: 'forward', at: now, shadow: 'delayed' };
    return { kind: 'forward', at: now };
  });
