/**
 * What the pipeline reports. The pipeline calls these; src/metrics/prom-metrics.ts implements
 * them with prom-client (names start with `sluice_`), and tests may pass a recording fake.
 * Per-producer labels are bounded by the implementation (top producers plus `other`).
 */
export type Outcome =
  | 'forwarded'
  | 'delayed'
  | 'overflowed'
  | 'dead_lettered'
  | 'shadow_delayed'
  | 'shadow_overflowed';

/**
 * Why a late release heard from another replica was not believed (src/hold/late-message.ts): a
 * whole message too large, not JSON or with too many entries; an entry of the wrong shape, or
 * with a producer id, interval, slot or send instant outside its bounds.
 */
export const LATE_IGNORED_REASONS = ['size', 'json', 'entries', 'shape', 'producer', 'spacing', 'slot', 'sent'] as const;
export type LateIgnoredReason = (typeof LATE_IGNORED_REASONS)[number];

export interface Metrics {
  /** count messages of one producer that reached an outcome. */
  message(outcome: Outcome, producer: string, count?: number): void;
  /** messages of one producer seen on the ingress topic (once each, not again from a retry tier). */
  offered?(producer: string, count: number): void;
  /** bytes (key + value) of one producer's messages written downstream. */
  forwardedBytes?(producer: string, bytes: number): void;
  /** first seen → released, for a forwarded message (`count` forwarded together with that delay; 1 by default). */
  releaseDelay(ms: number, count?: number): void;
  /** one failed store call (timeout, connection). */
  storeError(): void;
  /** whether the store-error fallback is active. */
  fallbackActive(active: boolean): void;
  /** messages and bytes held in memory awaiting their release instant. */
  held(messages: number, bytes: number): void;
  /** inbound `sluice-*` headers dropped on ingress. */
  forgedHeadersDropped(count: number): void;
  /** retry messages whose `sluice-*` headers did not parse (decided again). */
  malformedRetryHeaders(count: number): void;
  /** records that reading threw on (dead-lettered `unreadable`). */
  unreadableRecords(count: number): void;
  /** a quota file reload, good or refused. */
  quotaReload(result: 'ok' | 'error'): void;
  /** a consumer crash; restart false means gone for good. */
  consumerCrash(group: string, restart: boolean): void;
  /** whether the consumer of a group is in it and reads its assignment (what /readyz waits for); false again once it crashed for good. */
  consumerJoined?(group: string, joined: boolean): void;
  /** one failed send to a topic (retried), by the broker's error code or the error's name. */
  sendError?(destination: string, code: string): void;
  /** late releases heard from another replica and ignored (an entry, or a whole message), by reason. */
  lateReleasesIgnored?(reason: LateIgnoredReason, count: number): void;
  /** partitions gained that started when the hand-off bound passed (src/flow/handoff-fence.ts): not released in time, or Redis down. */
  handoffWaitExpired?(group: string, reason: 'timeout' | 'store-error', count: number): void;
}

/** A Metrics that records nothing, for commands that do not serve /metrics (drain, status). */
export const noMetrics: Metrics = {
  message: () => undefined,
  releaseDelay: () => undefined,
  storeError: () => undefined,
  fallbackActive: () => undefined,
  held: () => undefined,
  forgedHeadersDropped: () => undefined,
  malformedRetryHeaders: () => undefined,
  unreadableRecords: () => undefined,
  quotaReload: () => undefined,
  consumerCrash: () => undefined,
};
