/**
 * From one producer's pending counts (per second) to the one usage-add.lua call that writes them
 * at every resolution: the keys touched and their arguments. Pure.
 */
import { FIELD_LETTER, USAGE_COUNTERS, type UsageCounts } from './usage-counters';
import { bucketIndex, segmentExpiresAt, segmentOf, usageFieldName, usageKey } from './usage-keys';
import type { Resolution } from './resolutions';

/** Counts of one producer by the epoch ms of the second they were counted in. */
export type PendingCounts = ReadonlyMap<number, UsageCounts>;

export interface FlushCall {
  keys: string[];
  /** usage-add.lua's ARGV: per key, expireAt, n, then n field/increment pairs. */
  args: Array<string | number>;
}

/** key → field → increment, in first-seen order. */
const addUp = (keyPrefix: string, producer: string, resolutions: readonly Resolution[], pending: PendingCounts) => {
  const byKey = new Map<string, { expireAt: number; fields: Map<string, number> }>();
  for (const [second, counts] of pending) {
    for (const resolution of resolutions) {
      const index = bucketIndex(resolution, second);
      const segment = segmentOf(resolution, index);
      const key = usageKey(keyPrefix, producer, resolution, segment);
      const entry = byKey.get(key) ?? { expireAt: segmentExpiresAt(resolution, segment), fields: new Map<string, number>() };
      byKey.set(key, entry);
      for (const counter of USAGE_COUNTERS) {
        if (counts[counter] === 0) continue;
        const field = usageFieldName(resolution, index, FIELD_LETTER[counter]);
        entry.fields.set(field, (entry.fields.get(field) ?? 0) + counts[counter]);
      }
    }
  }
  return byKey;
};

/** The call for one producer, or undefined when there is nothing to add. */
export const flushCall = (keyPrefix: string, producer: string, resolutions: readonly Resolution[], pending: PendingCounts): FlushCall | undefined => {
  const keys: string[] = [];
  const args: Array<string | number> = [];
  for (const [key, { expireAt, fields }] of addUp(keyPrefix, producer, resolutions, pending)) {
    if (fields.size === 0) continue;
    keys.push(key);
    args.push(expireAt, fields.size);
    for (const [field, n] of fields) args.push(field, n);
  }
  return keys.length > 0 ? { keys, args } : undefined;
};
