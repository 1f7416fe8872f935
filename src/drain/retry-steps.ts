/**
 * What the drainer does with a retry message once its tier delay is over (pure). DESIGN.md
 * "Kafka mechanics": not due yet → hop to the largest tier not longer than the time left, or
 * hold in memory when that is at most hold.maxMs; due `delayed` → forward without a new
 * decision (its slot is reserved) unless it is more than max(T, 1 s) late; anything else →
 * decide again; too many decisions or too old → dead-letter.
 */
import type { Verdict } from '../decide/verdict';
import type { DeadLetterReason, DecodedPark, ParkInfo } from '../park/park-headers';
import { chooseTier, type Tier, tierAtMost } from '../park/tiers';

export interface RetryPolicy {
  /** Ascending by delay. */
  tiers: readonly Tier[];
  holdMaxMs: number;
  maxAttempts: number;
  maxAgeMs: number;
}

export type DueStep =
  | { kind: 'hop'; tier: Tier }
  | { kind: 'hold'; until: number }
  | { kind: 'forward' }
  | { kind: 'decide' }
  | { kind: 'dead-letter'; reason: DeadLetterReason };

export type DecidedStep =
  /** Admitted: release downstream at `at` (now or within hold.maxMs). */
  | { kind: 'release'; at: number; attempt: number }
  /** Admitted with a long wait (`delayed`) or refused (`overflow:<limit>`): park again. */
  | { kind: 'park'; tier: Tier; info: ParkInfo }
  | { kind: 'dead-letter'; reason: DeadLetterReason; info: ParkInfo }
  /** The store failed under limiter.onStoreError = park: leave the message where it is, pause until `until`. */
  | { kind: 'stall'; until: number };

/** A delayed message processed later than this after its not-before is decided again: its slot went unused. */
export const lateAfterMs = (intervalMs: number | undefined): number => Math.max(intervalMs ?? 0, 1000);

/** Whether deciding once more is still allowed; the dead-letter reason when it is not. */
export const limitReached = (
  info: Pick<ParkInfo, 'attempt' | 'firstSeen'>,
  now: number,
  policy: RetryPolicy,
): DeadLetterReason | undefined => {
  if (now - info.firstSeen > policy.maxAgeMs) return 'max-age';
  if (info.attempt >= policy.maxAttempts) return 'max-attempts';
  return undefined;
};

/** The step for a valid retry message whose tier delay is over, at `now`. */
export const stepWhenTierDue = (
  info: ParkInfo,
  now: number,
  policy: RetryPolicy,
  intervalMs: number | undefined,
): DueStep => {
  const left = info.notBefore - now;
  if (left > policy.holdMaxMs) return { kind: 'hop', tier: tierAtMost(policy.tiers, left) ?? chooseTier(policy.tiers, left) };
  if (left > 0) return { kind: 'hold', until: info.notBefore };
  if (info.reason.kind === 'delayed' && -left <= lateAfterMs(intervalMs)) return { kind: 'forward' };
  const reason = limitReached(info, now, policy);
  return reason ? { kind: 'dead-letter', reason } : { kind: 'decide' };
};

/**
 * A malformed message is due and decided again; what did not parse is filled in so it can be
 * parked or dead-lettered with well-formed headers afterwards.
 */
export const repairMalformed = (
  decoded: Extract<DecodedPark, { kind: 'malformed' }>,
  fallback: { producer: string; timestamp: string; origin: ParkInfo['origin']; now: number },
): ParkInfo => ({
  producer: decoded.partial.producer ?? fallback.producer,
  attempt: decoded.partial.attempt ?? 1,
  notBefore: fallback.now,
  firstSeen: decoded.partial.firstSeen ?? fallback.now,
  timestamp: decoded.partial.timestamp ?? fallback.timestamp,
  origin: decoded.partial.origin ?? fallback.origin,
  reason: decoded.partial.reason ?? { kind: 'store-unavailable' },
});

/**
 * What to do with a message decided again, from the ingress decider's verdict (local instants).
 * A `store-unavailable` refusal (limiter.onStoreError = park while the store fails) stalls the
 * partition instead of burning an attempt.
 */
export const stepAfterVerdict = (info: ParkInfo, verdict: Verdict, now: number, policy: RetryPolicy): DecidedStep => {
  const attempt = info.attempt + 1;
  if (verdict.kind === 'forward') return { kind: 'release', at: Math.max(verdict.at, now), attempt };
  if (verdict.reason.kind === 'store-unavailable') return { kind: 'stall', until: verdict.notBefore };
  const parked: ParkInfo = { ...info, attempt, notBefore: verdict.notBefore, reason: verdict.reason };
  const tier = chooseTier(policy.tiers, verdict.notBefore - now);
  if (verdict.reason.kind === 'delayed') return { kind: 'park', tier, info: parked };
  if (attempt >= policy.maxAttempts) return { kind: 'dead-letter', reason: 'max-attempts', info: parked };
  if (verdict.notBefore - info.firstSeen > policy.maxAgeMs) return { kind: 'dead-letter', reason: 'max-age', info: parked };
  return { kind: 'park', tier, info: parked };
};
