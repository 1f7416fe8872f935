/**
 * The gate in front of a tier (pure): when a tier message may be taken. Its turn comes when
 * its tier delay is over or when its not-before is within the read-ahead (hold.maxMs), so a
 * `delayed` message is in memory before its slot and leaves on it. A partition is read in
 * order and paused until its head's turn. A timestamp more than a second in the future (a
 * record written by someone else, a skewed clock) does not hold its partition: it is taken now.
 */
import type { Tier } from '../park/tiers';

export interface GateInput {
  tier: Tier;
  /** The record's Kafka timestamp (when it was parked). */
  parkedAt: number;
  /** Its not-before, when its headers carry one. */
  notBefore?: number;
}

/** How far ahead of this pod's clock a tier record's timestamp may be before it counts as bogus. */
export const FUTURE_TOLERANCE_MS = 1000;

/** The instant the message may be taken. */
export const turnOf = ({ tier, parkedAt, notBefore }: GateInput, now: number, readAheadMs: number): number => {
  if (parkedAt > now + FUTURE_TOLERANCE_MS) return now;
  const tierOver = parkedAt + tier.delayMs;
  return notBefore === undefined ? tierOver : Math.min(tierOver, notBefore - readAheadMs);
};
