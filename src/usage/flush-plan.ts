/**
 * From one producer's pending counts (per second) to the usage-add.lua calls that write them
 * at every resolution: the keys touched and their arguments. Usually one call; a flush that
 * touches more than MAX_KEYS_PER_CALL keys (counts that waited across many segments) is split.
 * Pure.
 */
import { FIELD_LETTER, USAGE_COUNTERS, type UsageCounts } from './usage-counters';
import { bucketIndex, segmentExpiresAt, segmentOf, usageFieldName, usageKey } from './usage-keys';
import type { Resolution } from '../config/usage-resolutions';

/**
 * The most keys one call carries. ioredis's commands for 1..MAX are all defined when the
 * recorder starts (usage-script.ts): a command defined while an auto-pipeline is being filled
 * is missing from that pipeline, and ioredis then throws outside any promise.
 */
export const MAX_KEYS_PER_CALL = 8;

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

/** The calls for one producer (none when there is nothing to add), each with 1..MAX_KEYS_PER_CALL keys. */
export const flushCalls = (keyPrefix: string, producer: string, resolutions: readonly Resolution[], pending: PendingCounts): FlushCall[] => {
  const calls: FlushCall[] = [];
  for (const [key, { expireAt, fields }] of addUp(keyPrefix, producer, resolutions, pending)) {
    if (fields.size === 0) continue;
    let call = calls[calls.length - 1];
    if (!call || call.keys.length === MAX_KEYS_PER_CALL) calls.push((call = { keys: [], args: [] }));
    call.keys.push(key);
    call.args.push(expireAt, fields.size);
    for (const [field, n] of fields) call.args.push(field, n);
  }
  return calls;
};
