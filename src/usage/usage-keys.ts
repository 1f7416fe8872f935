/**
 * Where the usage history lives in Redis. Buckets are aligned to the epoch (a 1m bucket starts
 * on the minute, UTC). A producer's buckets of one resolution are spread over hashes of
 * SEGMENT_BUCKETS consecutive buckets each (fewer when the retention keeps fewer buckets):
 *
 *   <keyPrefix>{<producer>}:usage:<resolution>:<segment>   field <offset><letter>  →  count
 *
 * e.g. `sluice:{billing}:usage:1m:24681234` field `7f` = messages forwarded in the 8th minute of
 * that segment. The hash tag is the limiter's (src/limit/producer-key.ts), so every key of one
 * producer sits in one Redis Cluster slot and one script call writes them all. A segment holds at
 * most 20 × 6 fields, below Redis's listpack limit (hash-max-listpack-entries, 128 by default), so
 * each hash stays in the compact encoding; it expires as a whole, `retention` after its last
 * bucket ends, so no bucket is kept much past its retention and nothing needs trimming.
 */
import { encodeProducerId } from '../limit/producer-key';
import type { Resolution } from '../config/usage-resolutions';

export const SEGMENT_BUCKETS = 20;

/** Buckets per segment: a segment never spans more than the retention. */
export const segmentBuckets = (resolution: Resolution): number => Math.min(SEGMENT_BUCKETS, resolution.buckets);

export const bucketIndex = (resolution: Resolution, t: number): number => Math.floor(t / resolution.bucketMs);

export const segmentOf = (resolution: Resolution, index: number): number => Math.floor(index / segmentBuckets(resolution));

export const usageKey = (keyPrefix: string, producer: string, resolution: Resolution, segment: number): string =>
  `${keyPrefix}{${encodeProducerId(producer)}}:usage:${resolution.label}:${segment}`;

/** When a segment's hash expires: `retention` after the end of its last bucket (epoch ms). */
export const segmentExpiresAt = (resolution: Resolution, segment: number): number =>
  (segment + 1) * segmentBuckets(resolution) * resolution.bucketMs + resolution.retentionMs;

/** The field of a bucket's counter inside its segment: offset in the segment, then the counter's letter. */
export const usageFieldName = (resolution: Resolution, index: number, letter: string): string =>
  `${index % segmentBuckets(resolution)}${letter}`;
