/** What one limit says about one message. Limits are numbered: 0 rate, 1 bytes, 2 + j window j. */
export const LIMIT_RATE = 0;
export const LIMIT_BYTES = 1;
export const LIMIT_WINDOW_BASE = 2;

export interface Refusal {
  limit: number;
  /** The earliest instant this limit could admit the message (fractional ms). */
  notBefore: number;
  /** How far a refusal by this limit moves the tail: cost × T, or W / N for a window. */
  spread: number;
}

export interface BucketVerdict {
  ok: boolean;
  /** Release instant if admitted (leaky: R; token: now). */
  at: number;
  refusals: Refusal[];
}
