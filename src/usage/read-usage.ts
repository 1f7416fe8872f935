/**
 * Reads a producer's usage history at one resolution: one row per bucket over the last `since`
 * (at most the retention), oldest first, the current (still filling) bucket last. A bucket with
 * no traffic is a row of zeros, never a gap. One HGETALL per segment hash, all in one slot.
 */
import type { Cluster, Redis } from 'ioredis';
import { fieldOfLetter, type UsageRow, zeroCounts } from './usage-counters';
import { bucketIndex, segmentBuckets, segmentOf, usageKey } from './usage-keys';
import type { Resolution } from '../config/usage-resolutions';

export interface ReadUsageOptions {
  redis: Pick<Redis | Cluster, 'hgetall'>;
  keyPrefix: string;
  producer: string;
  resolution: Resolution;
  /** how far back, in ms; clamped to [one bucket, the retention] */
  since: number;
  /** epoch ms */
  now: number;
}

/** The bucket indexes a read covers, first to last. */
export const bucketRange = (resolution: Resolution, since: number, now: number): { first: number; last: number } => {
  const last = bucketIndex(resolution, now);
  const count = Math.min(Math.max(Math.ceil(since / resolution.bucketMs), 1), resolution.buckets);
  return { first: last - count + 1, last };
};

const FIELD = /^(\d+)([a-z])$/;

/** Rows for buckets first..last from the segment hashes read (segment number → field → value). Pure. */
export const rowsOf = (resolution: Resolution, first: number, last: number, hashes: ReadonlyMap<number, Record<string, string>>): UsageRow[] => {
  const size = segmentBuckets(resolution);
  const rows: UsageRow[] = [];
  for (let index = first; index <= last; index += 1) {
    const startMs = index * resolution.bucketMs;
    rows.push({ startMs, start: new Date(startMs).toISOString(), ...zeroCounts() });
  }
  for (const [segment, hash] of hashes) {
    for (const [name, value] of Object.entries(hash)) {
      const match = FIELD.exec(name);
      const field = match ? fieldOfLetter(match[2]) : undefined;
      if (!match || !field) continue;
      const row = rows[segment * size + Number(match[1]) - first];
      if (row) row[field] += Number(value);
    }
  }
  return rows;
};

export const readUsage = async ({ redis, keyPrefix, producer, resolution, since, now }: ReadUsageOptions): Promise<UsageRow[]> => {
  const { first, last } = bucketRange(resolution, since, now);
  const segments: number[] = [];
  for (let s = segmentOf(resolution, first); s <= segmentOf(resolution, last); s += 1) segments.push(s);
  const hashes = await Promise.all(segments.map((s) => redis.hgetall(usageKey(keyPrefix, producer, resolution, s))));
  return rowsOf(resolution, first, last, new Map(segments.map((s, i) => [s, hashes[i]])));
};
