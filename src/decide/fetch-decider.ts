/**
 * Decides the messages of one fetch: grouped per producer (arrival order kept), each
 * producer's messages in one atomic step, in rounds of at most `maxProducersPerRound`
 * producers: ONE script call for a round on a standalone Redis, a call per producer on a
 * Cluster (ioredis pipelines them). Redis decides one producer after another (~17 µs each), so
 * a fetch of thousands of distinct producers decided at once would wait past redis.timeoutMs
 * for its last answers; 500 are ~9 ms of Redis time, well inside the default 50 ms. `unlimited` producers never
 * touch the store; shadow rules and `mode: shadow` decide (so the store measures) but forward
 * everything at once, marking what would have been delayed or refused.
 *
 * A reply becomes one verdict per message: what a decision means for it. Instants are on the
 * store's clock (the flow runs on it: src/decide/store-clock.ts), so a skewed pod clock does not
 * change the spacing.
 *
 * The guarded store: the store-error policy (limiter.onStoreError) around the shared store.
 * Every call goes to the store first; a call that fails (timeout, connection: never retried,
 * it may have run) is answered by the policy instead:
 *   local   — an in-memory store enforces the rule scaled to 1/members of the ingress group,
 *             each producer's bucket started where its schedule in the store was last seen to
 *             end (./schedule-ends.ts);
 *   park    — every message refused `store-unavailable`, notBefore = now + parkDelayMs;
 *   forward — every message admitted now (fail open).
 * The fallback counts as active after `activateAfter` consecutive failures and ends at the
 * first success (reported through metrics.fallbackActive).
 *
 * The store itself is src/limit/redis-store.ts (shared by every replica) or, for `local`,
 * src/limit/memory-store.ts.
 */
import { leasable } from '../limit/algorithms/decide-batch';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { MemoryStore } from '../limit/memory-store';
import type { BatchDecision, Decision, DecideRequest, LimiterStore, LimitRule } from '../limit/types';
import type { Metrics } from '../metrics/types';
import type { ParkReason } from '../park/park';
import { createScheduleEnds } from './schedule-ends';
import { leaseSize, type SlotLeases, worthLeasing } from './slot-leases';

/** The spacing a rule asks between two releases of one producer: its interval for a leaky bucket, none otherwise. */
export const spacingOf = (rule: LimitRule): number => (rule.algorithm === 'leaky-bucket' ? rule.intervalMs : 0);

/** The part of a resolved quota rule the pipeline needs (src/rules resolveRule's result). */
export interface RuleView {
  name: string;
  unlimited: boolean;
  shadow: boolean;
  limit?: LimitRule;
  /**
   * Set while a contended budget holds the producer below its own rule: a message the budget
   * refuses waits in memory (src/budget/budget-queue.ts) at most `maxWaitMs` (its own queue);
   * `chunk`: how many its share admits in a horizon and a pump.
   */
  waits?: { maxWaitMs: number; chunk: number };
}

export interface Candidate {
  producer: string;
  rule: RuleView;
  /** Bytes the byte bucket charges: key + value + headers. */
  size: number;
  /** Decide as of this store instant instead of the store's clock (a retry a little late keeps its turn). */
  asOf?: number;
}

export type Verdict =
  /**
   * Held in memory until `at`, then produced downstream. `spacingMs`: the rule's emission
   * interval for a leaky bucket (releases of one producer are kept at least that far apart).
   */
  | { kind: 'forward'; at: number; shadow?: 'delayed' | 'overflowed'; spacingMs?: number }
  /** Written to a retry tier; may not leave before `notBefore`. */
  | { kind: 'park'; reason: ParkReason; notBefore: number };

export const reasonOf = (decision: Decision): ParkReason =>
  decision.reason === 'store-unavailable' ? { kind: 'store-unavailable' } : { kind: 'overflow', limit: decision.reason ?? 'rate' };

/** Enforcing: admitted within hold.maxMs → forward; admitted later → park `delayed`; refused → park with its reason. */
export const enforceVerdicts = (reply: BatchDecision, now: number, holdMaxMs: number, spacingMs = 0): Verdict[] =>
  reply.decisions.map((decision) => {
    const { at } = decision;
    if (!decision.admitted) return { kind: 'park', reason: reasonOf(decision), notBefore: at };
    if (at - now <= holdMaxMs) return spacingMs > 0 ? { kind: 'forward', at, spacingMs } : { kind: 'forward', at };
    return { kind: 'park', reason: { kind: 'delayed' }, notBefore: at };
  });

/** Shadow: everything forwarded now; what would have been delayed or refused is marked. */
export const shadowVerdicts = (reply: BatchDecision, now: number): Verdict[] =>
  reply.decisions.map((decision) => {
    if (!decision.admitted) return { kind: 'forward', at: now, shadow: 'overflowed' };
    if (decision.at > reply.now) return { kind: 'forward', at: now, shadow: 'delayed' };
    return { kind: 'forward', at: now };
  });

/** limiter.onStoreError: what answers a store call that failed (see the file comment). */
export type StoreErrorPolicy = 'local' | 'park' | 'forward';

/**
 * A reply; `fallback` when the store-error policy answered (its instants are the flow's clock,
 * not the store's); `unpaced` when the `forward` policy admitted everything at once (fail
 * open: no spacing either).
 */
export type GuardedDecision = BatchDecision & { unpaced?: boolean; fallback?: boolean };

export interface GuardedStore {
  /** One reply per request, in order: the store's (in one call where it can), or, when that call fails, the policy's for each. */
  decideMany(requests: readonly DecideRequest[]): Promise<GuardedDecision[]>;
  fallbackActive(): boolean;
  /** Consecutive failed decisions so far, a request each (0 when the last call succeeded). */
  failures(): number;
}

export interface GuardedStoreOptions {
  store: LimiterStore;
  /** In-memory store used by `local`. */
  local: Pick<MemoryStore, 'decide' | 'startAt' | 'forget'>;
  policy: StoreErrorPolicy;
  /** Current members of the ingress group (≥ 1). */
  members: () => number;
  scaleRule: (rule: LimitRule, share: number) => LimitRule;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  parkDelayMs: number;
  activateAfter?: number;
}

export const createGuardedStore = (options: GuardedStoreOptions): GuardedStore => {
  const { store, policy, clock, metrics, logger, activateAfter = 3 } = options;
  let failures = 0;
  let active = false;
  // Where the store left each backlogged producer's schedule: `local` starts there.
  const ends = policy === 'local' ? createScheduleEnds() : undefined;
  /**
   * The store decided the request: `local` takes its producer from there, not from what it held
   * before, but for refusals made in memory (calls that timed out may have made them in Redis too).
   */
  const decided = (request: DecideRequest, reply: BatchDecision): void => {
    if (ends) ends.note(request.producer, request.rule, reply, options.local.forget(request.producer, reply.now));
  };

  const setActive = (value: boolean): void => {
    if (value === active) return;
    active = value;
    metrics.fallbackActive(value);
    if (value) logger.warn({ policy, failures }, 'limiter store unavailable: store-error fallback active');
    else logger.info('limiter store answers again: store-error fallback ended');
  };

  const fallback = async (request: DecideRequest): Promise<GuardedDecision> => {
    const now = clock.now();
    if (policy === 'forward') {
      return Promise.resolve({ now, unpaced: true, fallback: true, decisions: request.sizes.map(() => ({ admitted: true, at: now })) });
    }
    if (policy === 'park') {
      const at = now + options.parkDelayMs;
      return Promise.resolve({ now, fallback: true, decisions: request.sizes.map(() => ({ admitted: false, at, reason: 'store-unavailable' })) });
    }
    const share = 1 / Math.max(1, options.members());
    const rule = options.scaleRule(request.rule, share);
    const end = ends?.take(request.producer);
    if (end !== undefined) options.local.startAt(request.producer, rule, end, now);
    // No lease from the local store: its slots are not charged where the other replicas look.
    return { ...(await options.local.decide({ ...request, lease: undefined, rule })), fallback: true };
  };

  const succeeded = (): void => {
    failures = 0;
    setActive(false);
  };
  /** A failed store call that decided `requests` decisions. */
  const failed = (error: unknown, requests: number): void => {
    failures += requests;
    metrics.storeError();
    if (failures === requests) logger.warn({ err: error, policy }, 'limiter store call failed; applying limiter.onStoreError');
    if (failures >= activateAfter) setActive(true);
  };
  const decideOne = async (request: DecideRequest): Promise<GuardedDecision> => {
    try {
      const reply = await store.decide(request);
      succeeded();
      decided(request, reply);
      return reply;
    } catch (error) {
      failed(error, 1);
      return fallback(request);
    }
  };

  return {
    // One call where the store decides several at once (it fails as a whole); else a call each, each failing alone.
    async decideMany(requests) {
      if (!store.decideMany || requests.length < 2) return Promise.all(requests.map(decideOne));
      try {
        const replies = await store.decideMany(requests);
        succeeded();
        for (let i = 0; i < requests.length; i += 1) decided(requests[i], replies[i]);
        return replies;
      } catch (error) {
        failed(error, requests.length);
        return Promise.all(requests.map(fallback));
      }
    },
    fallbackActive: () => active,
    failures: () => failures,
  };
};

export type Mode = 'enforce' | 'shadow';

/** Producers of one fetch decided together, at most (see the file comment). */
export const DEFAULT_MAX_PRODUCERS_PER_ROUND = 500;

export interface FetchDecider {
  /** One verdict per candidate, in the same order. */
  decide(candidates: readonly Candidate[]): Promise<Verdict[]>;
}

interface Group {
  candidate: Candidate;
  indexes: number[];
}

const ruleKey = (c: Candidate): string => c.rule.limit?.fingerprint ?? c.rule.name;

/** The group of a producer's groups decided with the candidate's rule and as of its instant. */
const groupOf = (mine: readonly Group[], candidate: Candidate): Group | undefined => {
  for (const group of mine) if (group.candidate.asOf === candidate.asOf && ruleKey(group.candidate) === ruleKey(candidate)) return group;
  return undefined;
};

/** Groups candidates by producer (and rule), keeping arrival order inside each group. */
export const groupByProducer = (candidates: readonly Candidate[]): Group[] => {
  const groups: Group[] = [];
  // By producer first, then (rule, asOf) among that producer's few groups: no key string per message.
  const byProducer = new Map<string, Group[]>();
  for (let index = 0; index < candidates.length; index += 1) {
    const candidate = candidates[index];
    let mine = byProducer.get(candidate.producer);
    if (!mine) byProducer.set(candidate.producer, (mine = []));
    const group = groupOf(mine, candidate);
    if (group) group.indexes.push(index);
    else {
      const made = { candidate, indexes: [index] };
      mine.push(made);
      groups.push(made);
    }
  }
  return groups;
};

export const createFetchDecider = ({
  store,
  clock,
  holdMaxMs,
  mode,
  maxProducersPerRound = DEFAULT_MAX_PRODUCERS_PER_ROUND,
  observe,
  leases,
}: {
  store: GuardedStore;
  /** The flow's clock (the store's time): instants in verdicts are on it. */
  clock: Clock;
  /** Told the store's time of every reply decided on the store's own clock (src/decide/store-clock.ts). */
  observe?: (storeNow: number) => void;
  holdMaxMs: number;
  mode: Mode;
  maxProducersPerRound?: number;
  /** Slots leased ahead for producers far below their rule (./slot-leases.ts); none: every message waits for its round. */
  leases?: SlotLeases;
}): FetchDecider => {
  /** Whether the candidate's messages may leave on leased slots: an enforced leaky bucket of count alone worth leasing, no budget holding it back, no retry's turn. */
  const leasing = (candidate: Candidate): boolean => {
    const { rule } = candidate;
    return leases !== undefined && mode === 'enforce' && !rule.shadow && !rule.waits && candidate.asOf === undefined && rule.limit !== undefined && leasable(rule.limit) && worthLeasing(rule.limit);
  };

  // Renewals of leases taken from, sent together once the code that took them has run.
  const renewals: { producer: string; rule: LimitRule }[] = [];
  const renew = (): void => {
    const batch = renewals.splice(0);
    const answered = (replies?: GuardedDecision[]): void =>
      batch.forEach(({ producer, rule }, i) => leases?.renewalAnswered(producer, rule, replies?.[i].fallback ? undefined : replies?.[i].lease));
    store.decideMany(batch.map(({ producer, rule }) => ({ producer, rule, sizes: [], lease: leaseSize(rule) }))).then((replies) => {
      for (const reply of replies) if (!reply.fallback) observe?.(reply.now);
      answered(replies);
    }, () => answered());
  };
  /** The producer's lease was taken from: renewed off the messages' path when it runs low. */
  const taken = (producer: string, rule: LimitRule, now: number): void => {
    if (!leases?.low(producer, rule, now) || !leases.renewalOut(producer, rule)) return;
    if (renewals.length === 0) setImmediate(renew);
    renewals.push({ producer, rule });
  };

  /** The verdicts of a round of limited producers' groups, into `verdicts` at their candidates' places. */
  const decideRound = async (round: readonly Group[], candidates: readonly Candidate[], verdicts: Verdict[]): Promise<void> => {
    const leased = round.map(({ candidate }) => leasing(candidate));
    round.forEach(({ candidate }, g) => leased[g] && leases?.roundOut(candidate.producer));
    let replies: GuardedDecision[] | undefined;
    try {
      replies = await store.decideMany(round.map(({ candidate, indexes }, g) => {
        const rule = candidate.rule.limit as LimitRule;
        const request = { producer: candidate.producer, rule, sizes: indexes.map((i) => candidates[i].size), asOf: candidate.asOf };
        return leased[g] ? { ...request, lease: leaseSize(rule) } : request;
      }));
    } finally {
      round.forEach(({ candidate }, g) => {
        const reply = replies?.[g];
        if (leased[g]) leases?.roundAnswered(candidate.producer, candidate.rule.limit as LimitRule, reply === undefined || reply.fallback ? undefined : reply.lease);
      });
    }
    for (const reply of replies) if (!reply.fallback) observe?.(reply.now);
    const now = clock.now();
    round.forEach(({ candidate: { rule }, indexes }, g) => {
      const reply = (replies as GuardedDecision[])[g];
      const limit = rule.limit as LimitRule;
      const mine = mode === 'shadow' || rule.shadow ? shadowVerdicts(reply, now) : enforceVerdicts(reply, now, holdMaxMs, reply.unpaced ? 0 : spacingOf(limit));
      indexes.forEach((index, k) => (verdicts[index] = mine[k]));
    });
  };

  /** The group's first messages on leased slots (verdicts set); what is left of it for a round, if anything. */
  const onLease = (group: Group, verdicts: Verdict[], now: number): Group | undefined => {
    const { candidate, indexes } = group;
    const rule = candidate.rule.limit as LimitRule;
    const slots = (leases as SlotLeases).take(candidate.producer, rule, now, indexes.length, Math.min(rule.capacityMs, holdMaxMs));
    if (slots.length === 0) return group;
    const spacingMs = spacingOf(rule);
    slots.forEach((at, k) => (verdicts[indexes[k]] = { kind: 'forward', at, spacingMs }));
    taken(candidate.producer, rule, now);
    return slots.length < indexes.length ? { candidate, indexes: indexes.slice(slots.length) } : undefined;
  };

  return {
    async decide(candidates) {
      const verdicts: Verdict[] = new Array(candidates.length);
      const limited: Group[] = [];
      const now = clock.now();
      leases?.sweep(now, candidates.length + 4);
      for (const group of groupByProducer(candidates)) {
        const { rule } = group.candidate;
        if (!rule.unlimited && rule.limit) {
          const left = leasing(group.candidate) ? onLease(group, verdicts, now) : group;
          if (left) limited.push(left);
          continue;
        }
        for (const index of group.indexes) verdicts[index] = { kind: 'forward', at: now };
      }
      for (let start = 0; start < limited.length; start += maxProducersPerRound) {
        await decideRound(limited.slice(start, start + maxProducersPerRound), candidates, verdicts);
      }
      return verdicts;
    },
  };
};

/**
 * Merges the decide calls made within one tick (the batches of several partitions of one
 * fetch, handled concurrently) into one, so a producer seen on several partitions costs one
 * store call per fetch.
 */
export const coalesceDecider = (inner: FetchDecider): FetchDecider => {
  // One array, emptied at each flush (not replaced): V8 keeps one shape for it.
  const waiting: { candidates: readonly Candidate[]; resolve(v: Verdict[]): void; reject(e: unknown): void }[] = [];
  const flush = (): void => {
    const calls = waiting.splice(0);
    // A loop, not flatMap: V8's flatMap costs about 0.1 µs an element (a fetch's every message).
    const all: Candidate[] = [];
    for (const call of calls) for (const candidate of call.candidates) all.push(candidate);
    inner.decide(all).then(
      (verdicts) => {
        let offset = 0;
        for (const call of calls) {
          call.resolve(verdicts.slice(offset, offset + call.candidates.length));
          offset += call.candidates.length;
        }
      },
      (error) => calls.forEach((call) => call.reject(error)),
    );
  };
  return {
    decide(candidates) {
      return new Promise((resolve, reject) => {
        if (waiting.length === 0) setImmediate(flush);
        waiting.push({ candidates, resolve, reject });
      });
    },
  };
};
