/**
 * What the usage history counts per producer and bucket, and the one-letter field suffix each
 * counter has in Redis (short fields keep the hashes small).
 */
export const USAGE_COUNTERS = ['offered', 'forwarded', 'delayed', 'overflowed', 'deadLettered', 'forwardedBytes'] as const;

export type UsageField = (typeof USAGE_COUNTERS)[number];
/** A message counter (`forwardedBytes` is added through `count`'s bytes argument). */
export type UsageCounter = Exclude<UsageField, 'forwardedBytes'>;

/** offered o, forwarded f, delayed d, overflowed v, dead-lettered x, forwarded bytes b. */
export const FIELD_LETTER: Readonly<Record<UsageField, string>> = {
  offered: 'o',
  forwarded: 'f',
  delayed: 'd',
  overflowed: 'v',
  deadLettered: 'x',
  forwardedBytes: 'b',
};

export const fieldOfLetter = (letter: string): UsageField | undefined =>
  USAGE_COUNTERS.find((field) => FIELD_LETTER[field] === letter);

export type UsageCounts = Record<UsageField, number>;

export const zeroCounts = (): UsageCounts => ({ offered: 0, forwarded: 0, delayed: 0, overflowed: 0, deadLettered: 0, forwardedBytes: 0 });

/** One bucket of the history: its start (epoch ms and ISO 8601) and the counts in it. */
export interface UsageRow extends UsageCounts {
  startMs: number;
  start: string;
}
