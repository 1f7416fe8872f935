/**
 * The gate in front of a tier (pure): when a tier message may be taken. Its turn comes when
 * its tier delay is over or when its not-before is within the read-ahead (hold.maxMs), so a
 * `delayed` message is in memory before its slot and leaves on it. A partition is read in
 * order and paused until its head's turn. A head never holds its partition longer than its tier
 * delay plus FUTURE_TOLERANCE_MS from now: a record with a timestamp in the future (written by
 * someone else, or a broker clock ahead of the store's) waits no longer than a fresh park would.
 *
 * A partition paused until its head's turn is read again then, and that read takes, with the
 * head, every message whose not-before is within the read-ahead plus READ_BATCH_MS: a partition
 * whose messages fall due one slot apart is read once per READ_BATCH_MS of slots, not once per
 * slot (each read fetches up to a partition's fetch size, and what it does not take is fetched
 * again by the next one).
 */
import type { Tier } from '../park/tiers';
import { HOP_MARGIN_MS } from './route';

export interface GateInput {
  tier: Tier;
  /** The record's Kafka timestamp (when it was parked). */
  parkedAt: number;
  /** Its not-before, when its headers carry one. */
  notBefore?: number;
}

/** How far ahead of the flow's clock a tier record's timestamp may be and still count in full. */
export const FUTURE_TOLERANCE_MS = 1000;

/**
 * How much earlier than its turn a message is taken by a read that takes its partition's head:
 * the hop margin, so a message taken this early is held in memory, not hopped to another tier.
 */
export const READ_BATCH_MS = HOP_MARGIN_MS;

/** The instant the message may be taken. */
export const turnOf = ({ tier, parkedAt, notBefore }: GateInput, now: number, readAheadMs: number): number => {
  const tierOver = Math.min(parkedAt, now + FUTURE_TOLERANCE_MS) + tier.delayMs;
  return notBefore === undefined ? tierOver : Math.min(tierOver, notBefore - readAheadMs);
};

/**
 * When a read at `now` must leave the message for later: undefined when it is taken now (its
 * not-before within the read-ahead plus READ_BATCH_MS, or its tier delay over), else its turn,
 * when its partition is read again.
 */
export const readLater = (input: GateInput, now: number, readAheadMs: number): number | undefined =>
  turnOf(input, now, readAheadMs + READ_BATCH_MS) <= now ? undefined : turnOf(input, now, readAheadMs);
