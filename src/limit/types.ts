/**
 * The limiter's contract with the rest of sluice. A rule is compiled once from the quota
 * file (compile-rule.ts) into plain numbers; a store decides ordered batches of one
 * producer's messages against it in one atomic step (memory-store.ts, redis-store.ts).
 * All instants are integer epoch milliseconds on the store's clock (Redis TIME for Redis).
 */

export type Algorithm = 'leaky-bucket' | 'token-bucket';
export type WindowKind = 'sliding' | 'fixed' | 'log';

export interface WindowLimit {
  max: number; // N
  windowMs: number; // W
  kind: WindowKind;
  label: string; // as the user wrote it, e.g. "1000/h" or "20000/1d fixed"
}

export interface LimitRule {
  algorithm: Algorithm;
  /** Emission interval T of the message bucket, ms per message (may be fractional). */
  intervalMs: number;
  /** Leaky bucket: how far R may run ahead of now (queue as time, or queue × T). */
  capacityMs: number;
  /** Token bucket: burst size (messages admitted at once). 1 for the leaky bucket. */
  burst: number;
  /** Byte-rate bucket: ms per byte (fractional), or undefined when the rule has none. */
  byteIntervalMs?: number;
  windows: WindowLimit[];
  /** How refusals name each bucket: e.g. { rate: "20/s", bytes: "512KiB/s" }. */
  labels: { rate: string; bytes?: string };
  /** Changes whenever any number above changes; state written under another rule restarts its tail. */
  fingerprint: string;
}

export interface Decision {
  admitted: boolean;
  /** Admitted: the release instant R. Refused: notBefore. */
  at: number;
  /** Refused only: the limit that refused, as the user wrote it ("rate", "bytes" or a window label). */
  reason?: string;
}

/**
 * Slots charged ahead for a producer far below its rule (docs/design.md "Leased slots"):
 * `count` slots from `start` (whole ms), one interval apart, charged when granted.
 */
export interface Lease {
  start: number;
  count: number;
}

export interface BatchDecision {
  /** The store's clock when it decided (Redis TIME), so callers can convert `at` to local time. */
  now: number;
  decisions: Decision[]; // one per size, in order
  /** Granted when the request asked for one and the producer's bucket held nothing beyond its messages. */
  lease?: Lease;
}

export interface DecideRequest {
  producer: string;
  rule: LimitRule;
  /** Message sizes in bytes, in arrival order. */
  sizes: number[];
  /** Tests only: the store's clock reads this instant. */
  now?: number;
  /**
   * A retry's earlier turn (decided a little late, it keeps its turn's time): its buckets'
   * slots are counted from this instant, so a slot the bucket left free since can be taken.
   * Everything else is on the store's clock: the state is read and clamped at it and every
   * limit admits at it, so no reservation made since is taken back.
   */
  asOf?: number;
  /**
   * Slots to lease after the messages (a leaky bucket of count alone, no windows): granted only
   * when nothing was refused and the bucket's next free slot lies at most one interval ahead.
   */
  lease?: number;
}

export interface ProducerState {
  producer: string;
  /** Next free slot of the message bucket (R), or undefined when idle. */
  nextFreeAt?: number;
  /** How far behind the producer is: max(0, R - now) in ms. */
  backlogMs: number;
  now: number;
}

export interface LimiterStore {
  /** Decides k ordered messages of one producer in ONE atomic step. Throws SluiceError STORE_UNAVAILABLE (retriable) on timeout or connection trouble; never retries a timed-out call. */
  decide(request: DecideRequest): Promise<BatchDecision>;
  /**
   * Several producers' decide() in one call, one reply per request in order; each decided as
   * decide() alone would (the Redis store: one script call on a standalone Redis). Fails as a
   * whole, like decide(). Without it, the decider makes one decide() per request.
   */
  decideMany?(requests: readonly DecideRequest[]): Promise<BatchDecision[]>;
  /** Read-only view of a producer's state (sluice status). */
  inspect(producer: string, rule: LimitRule, now?: number): Promise<ProducerState>;
  close(): Promise<void>;
}
