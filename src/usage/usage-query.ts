/**
 * The question both `GET /v1/producers/{id}/usage` and `sluice usage` ask: a producer, a
 * resolution and how far back, as the user wrote them → the rows, with the parameters in force.
 * Bad parameters are SluiceError ARGUMENT_INVALID (HTTP 400, exit 1). A producer with no history
 * of its own in the window is answered with `countedIn: "other"`: only producers with a rule of
 * their own and the busiest keep one (detail-selection.ts); the others' counts are in `other`.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Clock } from '../clock';
import { formatDuration, parseDuration } from '../config/units';
import { SluiceError } from '../errors';
import { OTHER } from './detail-selection';
import { bucketRange, readUsage } from './read-usage';
import { findResolution, type Resolution } from '../config/usage-resolutions';
import { USAGE_COUNTERS, type UsageCounts, type UsageRow, zeroCounts } from './usage-counters';

export interface UsageAnswer {
  producer: string;
  resolution: string;
  /** the window covered: the buckets returned × the bucket size */
  since: string;
  rows: UsageRow[];
  totals: UsageCounts;
  /**
   * "other" when the producer has no history of its own in the window: whatever it sent then is
   * counted in `other` with the long tail (or it sent nothing). Absent otherwise.
   */
  countedIn?: typeof OTHER;
}

/** No count of its own in any row: the producer is in the tail, or was idle. */
const countedInOther = (producer: string, rows: readonly UsageRow[]): boolean =>
  producer !== OTHER && rows.every((row) => USAGE_COUNTERS.every((field) => row[field] === 0));

export type UsageQuery = (producer: string, resolution?: string, since?: string) => Promise<UsageAnswer>;

/** Rows returned when `since` is not given (60 buckets: 1h at 1m), at most the retention. */
export const DEFAULT_BUCKETS = 60;

const invalid = (message: string): SluiceError => new SluiceError('ARGUMENT_INVALID', message);

export const pickResolution = (resolutions: readonly Resolution[], text?: string): Resolution => {
  if (resolutions.length === 0) throw invalid('the usage history is off (usage.resolutions is empty)');
  if (text === undefined || text === '') return findResolution(resolutions, '1m') ?? resolutions[0];
  const found = findResolution(resolutions, text);
  if (!found) throw invalid(`resolution "${text}": expected one of ${resolutions.map((r) => r.label).join(', ')} (usage.resolutions)`);
  return found;
};

export const pickSince = (resolution: Resolution, text?: string): number => {
  if (text === undefined || text === '') return DEFAULT_BUCKETS * resolution.bucketMs;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw invalid(`since "${text}": expected a duration > 0 such as 10m, 1h or 2d`);
  return ms;
};

export const totalsOf = (rows: readonly UsageRow[]): UsageCounts => {
  const totals = zeroCounts();
  for (const row of rows) for (const field of USAGE_COUNTERS) totals[field] += row[field];
  return totals;
};

export const createUsageQuery = (deps: { redis: Pick<Redis | Cluster, 'hgetall'>; keyPrefix: string; resolutions: readonly Resolution[]; clock: Clock }): UsageQuery =>
  async (producer, resolutionText, sinceText) => {
    const resolution = pickResolution(deps.resolutions, resolutionText);
    const since = pickSince(resolution, sinceText);
    const now = deps.clock.now();
    const { first, last } = bucketRange(resolution, since, now);
    const rows = await readUsage({ redis: deps.redis, keyPrefix: deps.keyPrefix, producer, resolution, since, now });
    const answer: UsageAnswer = { producer, resolution: resolution.label, since: formatDuration((last - first + 1) * resolution.bucketMs), rows, totals: totalsOf(rows) };
    return countedInOther(producer, rows) ? { ...answer, countedIn: OTHER } : answer;
  };
