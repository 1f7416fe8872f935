/**
 * The usage recorder: counts per producer in memory, by the second they happened, and once a
 * second writes each producer's counts at every resolution with one script call (usage-add.lua;
 * split only when counts that waited touch more than 8 keys), never a store call per message. All producers' calls of one flush go out together (ioredis
 * auto-pipelining batches them). Memory is bounded: at most `maxPending` (producer, second)
 * cells wait for a flush; past it, a new cell's counts go to `other`'s cell of that second (one
 * more cell per second at most) and are reported, never dropped. A failed call is not retried
 * (it may have run: a retry could count twice); its counts are lost and reported. Errors are
 * logged at most once per `errorLogIntervalMs` and never reach the caller.
 *
 * Only the producers that matter keep a history of their own (detail-selection.ts: a rule of
 * their own, or among the busiest); at each flush the counts of all the others are added up
 * and written with one call under `other`, so ids chosen by clients cost Redis a bounded amount.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { createDetailSelection, OTHER } from './detail-selection';
import { flushCalls, type PendingCounts } from './flush-plan';
import type { Resolution } from '../config/usage-resolutions';
import { defineUsageCommands, usageAdd } from './usage-script';
import { MESSAGE_COUNTERS, type UsageCounter, type UsageCounts, zeroCounts } from './usage-counters';

export interface UsageRecorderOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  resolutions: readonly Resolution[];
  clock: Clock;
  logger: Logger;
  /** default 1000 */
  flushIntervalMs?: number;
  /** most (producer, second) cells held between flushes; default 100000 */
  maxPending?: number;
  /** default 60000 */
  errorLogIntervalMs?: number;
  /** true for a producer with a rule of its own (an exact id in the quota file): always in detail. */
  hasOwnRule?: (producer: string) => boolean;
  /** the busiest producers without a rule of their own kept in detail; default DETAILED_PRODUCERS (100) */
  detailedProducers?: number;
}

export interface UsageRecorder {
  /** adds n messages to a producer's counter, and `bytes` to its forwarded bytes. */
  count(producer: string, counter: UsageCounter, n?: number, bytes?: number): void;
  /** writes what is pending now; resolves when written (or failed, which is logged). */
  flush(): Promise<void>;
  /** stops the timer and flushes what is left. */
  close(): Promise<void>;
  stats(): { pendingCells: number; foldedCounts: number; failedCalls: number };
}

/** Producers whose calls go out together before the next group is sent. */
const FLUSH_GROUP = 1000;

const whole = (x: number): number => (x > 0 ? Math.floor(x) : 0);

const total = (pending: PendingCounts): number => {
  let sum = 0;
  for (const counts of pending.values()) for (const c of MESSAGE_COUNTERS) sum += counts[c];
  return sum;
};

export const createUsageRecorder = (options: UsageRecorderOptions): UsageRecorder => {
  const { redis, keyPrefix, resolutions, clock, logger, flushIntervalMs = 1000, maxPending = 100_000, errorLogIntervalMs = 60_000 } = options;
  defineUsageCommands(redis);
  const selection = createDetailSelection({ hasOwnRule: options.hasOwnRule, size: options.detailedProducers });
  let pending = new Map<string, Map<number, UsageCounts>>();
  let cells = 0;
  const trouble = { foldedCounts: 0, failedCalls: 0, lostCounts: 0, lastError: undefined as unknown, loggedAt: -Infinity };
  const totals = { foldedCounts: 0, failedCalls: 0 };

  const report = (): void => {
    const now = clock.now();
    if (now - trouble.loggedAt < errorLogIntervalMs) return;
    trouble.loggedAt = now;
    logger.warn(
      { err: trouble.lastError, failedCalls: trouble.failedCalls, lostCounts: trouble.lostCounts, foldedCounts: trouble.foldedCounts, maxPending },
      'usage history: some counts could not be written and are missing from it (lostCounts), or came past maxPending producer-seconds between two flushes and were counted in other (foldedCounts)',
    );
    Object.assign(trouble, { foldedCounts: 0, failedCalls: 0, lostCounts: 0, lastError: undefined });
  };

  /** The producer's cell of a second; undefined when it is new and maxPending cells are taken (unless `always`). */
  const cellOf = (producer: string, second: number, always = false): UsageCounts | undefined => {
    const byProducer = pending.get(producer) ?? new Map<number, UsageCounts>();
    let counts = byProducer.get(second);
    if (counts) return counts;
    if (cells >= maxPending && !always) return undefined;
    counts = zeroCounts();
    byProducer.set(second, counts);
    pending.set(producer, byProducer);
    cells += 1;
    return counts;
  };

  const send = async (producer: string, counts: PendingCounts): Promise<void> => {
    const calls = flushCalls(keyPrefix, producer, resolutions, counts);
    const failed = (await Promise.allSettled(calls.map((call) => usageAdd(redis, call.keys, call.args)))).filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length === 0) return;
    totals.failedCalls += failed.length;
    Object.assign(trouble, { failedCalls: trouble.failedCalls + failed.length, lostCounts: trouble.lostCounts + total(counts), lastError: failed[0].reason });
    report();
  };

  const flushBatch = async (): Promise<void> => {
    const { detailed, tail } = selection.split(pending);
    const batch: Array<[string, PendingCounts]> = tail.size > 0 ? [...detailed, [OTHER, tail]] : detailed;
    pending = new Map();
    cells = 0;
    for (let i = 0; i < batch.length; i += FLUSH_GROUP) {
      await Promise.all(batch.slice(i, i + FLUSH_GROUP).map(([producer, counts]) => send(producer, counts)));
    }
  };

  // Flushes run one at a time, in order.
  let last: Promise<void> = Promise.resolve();
  let running = 0;
  const flush = (): Promise<void> => {
    running += 1;
    last = last.then(flushBatch).finally(() => {
      running -= 1;
    });
    return last;
  };

  // A tick while a flush is still out skips: the counts wait for the next tick.
  const timer = setInterval(() => {
    if (running === 0 && cells > 0) void flush();
  }, flushIntervalMs);
  timer.unref();

  return {
    count(producer, counter, n = 1, bytes = 0) {
      if (resolutions.length === 0 || (whole(n) === 0 && whole(bytes) === 0)) return;
      const second = Math.floor(clock.now() / 1000) * 1000;
      let counts = cellOf(producer, second);
      if (!counts) {
        counts = cellOf(OTHER, second, true) as UsageCounts;
        totals.foldedCounts += whole(n);
        trouble.foldedCounts += whole(n);
        report();
      }
      counts[counter] += whole(n);
      counts.forwardedBytes += whole(bytes);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    stats: () => ({ pendingCells: cells, ...totals }),
  };
};
