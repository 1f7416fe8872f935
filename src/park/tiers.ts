/**
 * Retry tiers: one topic per fixed delay (`<retry>.5s`, `<retry>.1m`, …). Every message in a
 * tier waits the same time, so a tier partition is due in append order. A message is parked
 * on the largest tier not longer than its wait and hops down the tiers until it is due.
 */
import { formatDuration } from '../config/units';
import { SluiceError } from '../errors';

export interface Tier {
  topic: string;
  delayMs: number;
  /** The delay as a short label, e.g. "5s", "1m", "10m", "1h", "1500ms". */
  label: string;
}

/** The shortest exact label of a duration (5000 → "5s"): the same spelling the settings use. */
export { formatDuration };

export const tierTopic = (retryBase: string, delayMs: number): string => `${retryBase}.${formatDuration(delayMs)}`;

/** The tiers in ascending order of delay; delays must be positive integers, duplicates are merged. */
export const buildTiers = (retryBase: string, delaysMs: readonly number[]): Tier[] => {
  if (delaysMs.length === 0) {
    throw new SluiceError('CONFIG_INVALID', 'retry.tiers: expected at least one delay, got none');
  }
  const bad = delaysMs.find((d) => !Number.isSafeInteger(d) || d <= 0);
  if (bad !== undefined) {
    throw new SluiceError('CONFIG_INVALID', `retry.tiers: expected positive whole milliseconds, got ${bad}`);
  }
  return [...new Set(delaysMs)]
    .sort((a, b) => a - b)
    .map((delayMs) => ({ topic: tierTopic(retryBase, delayMs), delayMs, label: formatDuration(delayMs) }));
};

/** The largest tier not longer than the wait; the smallest tier when the wait is shorter than all. */
export const chooseTier = (tiers: readonly Tier[], waitMs: number): Tier => {
  let chosen = tiers[0];
  for (const tier of tiers) if (tier.delayMs <= waitMs) chosen = tier;
  return chosen;
};

/** The largest tier not longer than the wait, or undefined when every tier is longer. */
export const tierAtMost = (tiers: readonly Tier[], waitMs: number): Tier | undefined =>
  [...tiers].reverse().find((tier) => tier.delayMs <= waitMs);

/** When a message appended to a tier at `timestampMs` (its Kafka timestamp) is due. */
export const tierDueAt = (tier: Tier, timestampMs: number): number => timestampMs + tier.delayMs;

export const tierOfTopic = (tiers: readonly Tier[], topic: string): Tier | undefined =>
  tiers.find((tier) => tier.topic === topic);
