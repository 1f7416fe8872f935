/**
 * The resolutions of the usage history (`usage.resolutions`): `<bucket>:<retention>` pairs,
 * comma-separated, e.g. `1s:10m,1m:48h,1h:30d` — one-second buckets kept ten minutes,
 * one-minute buckets kept two days, one-hour buckets kept thirty days. Pure.
 */
import { formatDuration, parseDuration } from '../config/units';

export interface Resolution {
  /** The bucket size as users write it ("1s", "1m"): the `--resolution` value. */
  label: string;
  bucketMs: number;
  retentionMs: number;
  /** retentionMs / bucketMs: how many buckets are kept. */
  buckets: number;
}

/** A bucket is at least one second (the recorder flushes once a second) and a whole number of seconds. */
const MIN_BUCKET_MS = 1000;
/** At most this many buckets per resolution, so one read stays small. */
export const MAX_BUCKETS = 100_000;

const parsePair = (text: string): Resolution | undefined => {
  const [size, retention, extra] = text.split(':').map((part) => part.trim());
  if (extra !== undefined || retention === undefined) return undefined;
  const bucketMs = parseDuration(size);
  const retentionMs = parseDuration(retention);
  if (bucketMs === undefined || retentionMs === undefined) return undefined;
  if (bucketMs < MIN_BUCKET_MS || bucketMs % 1000 !== 0) return undefined;
  if (retentionMs < bucketMs || retentionMs % bucketMs !== 0 || retentionMs / bucketMs > MAX_BUCKETS) return undefined;
  return { label: formatDuration(bucketMs), bucketMs, retentionMs, buckets: retentionMs / bucketMs };
};

/** The resolutions, finest first; [] for an empty setting (no history); undefined when it does not parse. */
export const parseResolutions = (value: unknown): Resolution[] | undefined => {
  if (typeof value !== 'string') return undefined;
  const parts = value.split(',').map((part) => part.trim()).filter((part) => part !== '');
  const parsed = parts.map(parsePair);
  if (parsed.some((r) => r === undefined)) return undefined;
  const sorted = (parsed as Resolution[]).sort((a, b) => a.bucketMs - b.bucketMs);
  return new Set(sorted.map((r) => r.bucketMs)).size === sorted.length ? sorted : undefined;
};

/** The settings format (src/config/formats.ts registers it with convict). */
export const resolutionsFormat = {
  name: 'sluice-usage-resolutions',
  expected:
    'a comma-separated list of bucket:retention with distinct buckets of whole seconds, each retention a multiple of its bucket and at most 100000 buckets, e.g. 1s:10m,1m:48h,1h:30d (empty: no usage history)',
  parse: (value: unknown): { value: unknown } | undefined => {
    const resolutions = parseResolutions(value);
    return resolutions ? { value: resolutions } : undefined;
  },
};

/** The configured resolution a user names ("1m", "60s" or "60000"), or undefined. */
export const findResolution = (resolutions: readonly Resolution[], text: string): Resolution | undefined => {
  const ms = parseDuration(text);
  return ms === undefined ? undefined : resolutions.find((r) => r.bucketMs === ms);
};

export const formatResolutions = (resolutions: readonly Resolution[]): string =>
  resolutions.map((r) => `${r.label}:${formatDuration(r.retentionMs)}`).join(',');
