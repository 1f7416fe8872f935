/**
 * What the usage history counts per producer and bucket, and the one-letter field suffix each
 * counter has in Redis (short fields keep the hashes small).
 */
export const USAGE_COUNTERS = ['offered', 'forwarded', 'delayed', 'overflowed', 'deadLettered', 'forwardedBytes', 'budgetShare'] as const;

export type UsageField = (typeof USAGE_COUNTERS)[number];

/**
 * The counters of messages that passed (what ranks the busiest producers). `budgetShare` is what
 * a contended downstream budget gave the producer: its share in force summed over the bucket's
 * seconds (messages its share allowed; each replica adds its part), so `forwarded` against it
 * says how much of its part it used.
 */
export const MESSAGE_COUNTERS = ['offered', 'forwarded', 'delayed', 'overflowed', 'deadLettered'] as const;
/** A message counter (`forwardedBytes` is added through `count`'s bytes argument). */
export type UsageCounter = Exclude<UsageField, 'forwardedBytes'>;

/** offered o, forwarded f, delayed d, overflowed v, dead-lettered x, forwarded bytes b, budget share s. */
export const FIELD_LETTER: Readonly<Record<UsageField, string>> = {
  offered: 'o',
  forwarded: 'f',
  delayed: 'd',
  overflowed: 'v',
  deadLettered: 'x',
  forwardedBytes: 'b',
  budgetShare: 's',
};

export const fieldOfLetter = (letter: string): UsageField | undefined =>
  USAGE_COUNTERS.find((field) => FIELD_LETTER[field] === letter);

export type UsageCounts = Record<UsageField, number>;

export const zeroCounts = (): UsageCounts => ({ offered: 0, forwarded: 0, delayed: 0, overflowed: 0, deadLettered: 0, forwardedBytes: 0, budgetShare: 0 });

/** One bucket of the history: its start (epoch ms and ISO 8601) and the counts in it. */
export interface UsageRow extends UsageCounts {
  startMs: number;
  start: string;
}
