/**
 * The pipeline's Metrics (./types.ts) as Prometheus metrics, every name starting with `sluice_`.
 * Per-producer series are bounded: the top `topProducers` producers by traffic keep their own
 * label, everybody else counts as `other` (./top-producers.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { observeMany } from './observe-many';
import { LATE_IGNORED_REASONS, type Metrics, type Outcome } from './types';
import { OTHER, createTopProducers } from './top-producers';

export const OUTCOMES: readonly Outcome[] = [
  'forwarded',
  'delayed',
  'overflowed',
  'dead_lettered',
  'shadow_delayed',
  'shadow_overflowed',
];

/** release delays in seconds: 1 ms … 1 day (retry tiers reach hours). */
export const RELEASE_DELAY_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 21600, 86400];

export interface PromMetricsOptions {
  registry?: Registry;
  /** how many producers keep their own label (default 50); the rest count as `other`. */
  topProducers?: number;
  /**
   * prom-client's process metrics too, prefixed `sluice_` (CPU, memory, and the event loop's
   * delay: `sluice_nodejs_eventloop_lag_p99_seconds` tells a store timeout caused by a blocked
   * process from one caused by Redis). `sluice run` turns them on.
   */
  processMetrics?: boolean;
}

export type PromMetrics = Metrics & { registry: Registry };

/** What the two message counters add when they are collected (a scrape, or `registry.metrics()`). */
interface Collect {
  messages(this: Counter<'outcome'>): void;
  producerMessages(this: Counter<'producer' | 'outcome'>): void;
}

const createInstruments = (registry: Registry, collect: Collect) => {
  const registers = [registry];
  return {
    messages: new Counter({ name: 'sluice_messages_total', help: 'Messages by outcome.', labelNames: ['outcome'], registers, collect: collect.messages }),
    producerMessages: new Counter({
      name: 'sluice_producer_messages_total',
      help: 'Messages by producer (the top producers by traffic; the rest as "other") and outcome.',
      labelNames: ['producer', 'outcome'],
      registers,
      collect: collect.producerMessages,
    }),
    releaseDelay: new Histogram({
      name: 'sluice_release_delay_seconds',
      help: 'First seen to released, for forwarded messages.',
      buckets: RELEASE_DELAY_BUCKETS,
      registers,
    }),
    storeErrors: new Counter({ name: 'sluice_store_errors_total', help: 'Failed limiter store calls (timeouts, connection errors).', registers }),
    fallback: new Gauge({ name: 'sluice_store_fallback_active', help: '1 while the limiter.onStoreError policy is in force.', registers }),
    heldMessages: new Gauge({ name: 'sluice_held_messages', help: 'Messages held in memory awaiting their release instant.', registers }),
    heldBytes: new Gauge({ name: 'sluice_held_bytes', help: 'Bytes of the messages held in memory.', registers }),
    forged: new Counter({ name: 'sluice_forged_headers_dropped_total', help: 'Inbound sluice-* headers dropped on the ingress topic.', registers }),
    malformed: new Counter({
      name: 'sluice_malformed_retry_headers_total',
      help: 'Retry-tier messages whose sluice-* headers did not parse (decided again).',
      registers,
    }),
    unreadable: new Counter({ name: 'sluice_unreadable_records_total', help: 'Records that could not be read (dead-lettered unreadable; their partition goes on).', registers }),
    quotaReloads: new Counter({ name: 'sluice_quota_reloads_total', help: 'Quota file reloads by result (ok, error).', labelNames: ['result'], registers }),
    crashes: new Counter({
      name: 'sluice_consumer_crashes_total',
      help: 'Consumer crashes by group and whether kafkajs restarts the consumer.',
      labelNames: ['group', 'restart'],
      registers,
    }),
    joined: new Gauge({
      name: 'sluice_consumer_joined',
      help: '1 while the consumer of the group is in it and reads its assignment (what /readyz waits for); 0 before, and after a crash it does not recover from.',
      labelNames: ['group'],
      registers,
    }),
    sendErrors: new Counter({
      name: 'sluice_send_errors_total',
      help: 'Failed sends (retried, never skipped) by destination topic and error code.',
      labelNames: ['destination', 'code'],
      registers,
    }),
    lateIgnored: new Counter({
      name: 'sluice_late_releases_ignored_total',
      help: 'Late releases heard from another replica and not believed (an entry, or a whole message), by reason.',
      labelNames: ['reason'],
      registers,
    }),
    handoffExpired: new Counter({
      name: 'sluice_handoff_waits_expired_total',
      help: 'Partitions gained in a rebalance that started when the hand-off bound passed, by group and reason (timeout: the previous owner did not release the fence; store-error: Redis did not answer).',
      labelNames: ['group', 'reason'],
      registers,
    }),
  };
};

/**
 * Counts by outcome (and by label), kept in plain maps on the messages' path and added to
 * prom-client's counter when it is collected: prom-client hashes the labels of every `inc` into
 * a string, and a fetch counts once per producer and outcome (with 100 producers, the main
 * thread's 2.3 → 2.1 µs a message in bench/micro/path.ts).
 */
const createPending = () => {
  const byLabel = new Map<string, Map<Outcome, number>>();
  return {
    add(label: string, outcome: Outcome, count: number): void {
      let mine = byLabel.get(label);
      if (mine === undefined) byLabel.set(label, (mine = new Map()));
      mine.set(outcome, (mine.get(outcome) ?? 0) + count);
    },
    drop: (label: string): void => void byLabel.delete(label),
    /** Each label's counts since the last take, and forgets them. */
    take(each: (label: string, outcome: Outcome, count: number) => void): void {
      for (const [label, mine] of byLabel) for (const [outcome, count] of mine) each(label, outcome, count);
      byLabel.clear();
    },
  };
};

/**
 * Per-producer counting with bounded labels. Keeps the counts of the labelled producers (at most
 * `size` × outcomes numbers) so an evicted producer's series can be folded into `other` at once:
 * its series leaves the counter, its counts (shown and pending) are added to `other`'s pending
 * ones, so sums over producers never go down.
 */
const createProducerCounter = (counter: Counter<'producer' | 'outcome'>, size: number, pending: ReturnType<typeof createPending>) => {
  const top = createTopProducers({ size });
  const counts = new Map<string, Map<Outcome, number>>();
  const fold = (producer: string): void => {
    for (const [outcome, value] of counts.get(producer) ?? []) {
      pending.add(OTHER, outcome, value);
      counter.remove({ producer, outcome });
    }
    counts.delete(producer);
    pending.drop(producer);
  };
  return (outcome: Outcome, producer: string, count: number): void => {
    const admission = top.admit(producer, count);
    if (admission.evicted !== undefined) fold(admission.evicted);
    const { label } = admission;
    pending.add(label, outcome, count);
    if (label === OTHER) return;
    let byOutcome = counts.get(label);
    if (byOutcome === undefined) counts.set(label, (byOutcome = new Map()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + count);
  };
};

export const createPromMetrics = ({ registry = new Registry(), topProducers = 50, processMetrics = false }: PromMetricsOptions = {}): PromMetrics => {
  const messages = createPending();
  const producers = createPending();
  const m = createInstruments(registry, {
    messages() {
      messages.take((_, outcome, count) => this.inc({ outcome }, count));
    },
    producerMessages() {
      producers.take((producer, outcome, count) => this.inc({ producer, outcome }, count));
    },
  });
  const countProducer = createProducerCounter(m.producerMessages, topProducers, producers);
  if (processMetrics) collectDefaultMetrics({ register: registry, prefix: 'sluice_', eventLoopMonitoringPrecision: 10 });
  for (const outcome of OUTCOMES) m.messages.inc({ outcome }, 0);
  for (const result of ['ok', 'error']) m.quotaReloads.inc({ result }, 0);
  for (const reason of LATE_IGNORED_REASONS) m.lateIgnored.inc({ reason }, 0);
  m.fallback.set(0);

  return {
    registry,
    message(outcome, producer, count = 1) {
      messages.add('', outcome, count); // one label set: the outcome alone
      countProducer(outcome, producer, count);
    },
    releaseDelay: (ms, count = 1) => observeMany(m.releaseDelay, Math.max(0, ms) / 1000, count),
    storeError: () => m.storeErrors.inc(),
    fallbackActive: (active) => m.fallback.set(active ? 1 : 0),
    held(messages, bytes) {
      m.heldMessages.set(messages);
      m.heldBytes.set(bytes);
    },
    forgedHeadersDropped: (count) => m.forged.inc(count),
    malformedRetryHeaders: (count) => m.malformed.inc(count),
    unreadableRecords: (count) => m.unreadable.inc(count),
    quotaReload: (result) => m.quotaReloads.inc({ result }),
    consumerCrash: (group, restart) => m.crashes.inc({ group, restart: String(restart) }),
    consumerJoined: (group, joined) => m.joined.set({ group }, joined ? 1 : 0),
    sendError: (destination, code) => m.sendErrors.inc({ destination, code }),
    lateReleasesIgnored: (reason, count) => m.lateIgnored.inc({ reason }, count),
    handoffWaitExpired: (group, reason, count) => m.handoffExpired.inc({ group, reason }, count),
  };
};
