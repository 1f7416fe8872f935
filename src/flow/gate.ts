/**
 * The gate in front of a tier (pure): when a tier message may be taken. Its turn comes when
 * its tier delay is over or when its not-before is within the read-ahead (hold.maxMs), so a
 * `delayed` message is in memory before its slot and leaves on it. A partition is read in
 * order and paused until its head's turn. A head never holds its partition longer than its tier
 * delay plus FUTURE_TOLERANCE_MS from now: a record with a timestamp in the future (written by
 * someone else, or a broker clock ahead of the store's) waits no longer than a fresh park would.
 */
import type { Tier } from '../park/tiers';

export interface GateInput {
  tier: Tier;
  /** The record's Kafka timestamp (when it was parked). */
  parkedAt: number;
  /** Its not-before, when its headers carry one. */
  notBefore?: number;
}

/** How far ahead of the flow's clock a tier record's timestamp may be and still count in full. */
export const FUTURE_TOLERANCE_MS = 1000;

/** The instant the message may be taken. */
export const turnOf = ({ tier, parkedAt, notBefore }: GateInput, now: number, readAheadMs: number): number => {
  const tierOver = Math.min(parkedAt, now + FUTURE_TOLERANCE_MS) + tier.delayMs;
  return notBefore === undefined ? tierOver : Math.min(tierOver, notBefore - readAheadMs);
};
