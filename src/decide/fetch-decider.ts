/**
 * Decides the messages of one fetch: grouped per producer (arrival order kept), ONE store
 * call per producer, calls in parallel (ioredis pipelines them) in rounds of at most
 * `maxCallsInFlight`: Redis answers a pipeline one script at a time (~17 µs each), so a fetch
 * of thousands of distinct producers sent at once would wait past redis.timeoutMs for its last
 * answers; 500 calls are ~9 ms of Redis time, well inside the default 50 ms. `unlimited` producers never
 * touch the store; shadow rules and `mode: shadow` decide (so the store measures) but forward
 * everything at once, marking what would have been delayed or refused.
 */
import type { Clock } from '../clock';
import type { GuardedDecision, GuardedStore } from './guarded-store';
import { Candidate, enforceVerdicts, shadowVerdicts, spacingOf, Verdict } from './verdict';

export type Mode = 'enforce' | 'shadow';

/** Store calls of one fetch sent together, at most (see the file comment). */
export const DEFAULT_MAX_CALLS_IN_FLIGHT = 500;

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
  maxCallsInFlight = DEFAULT_MAX_CALLS_IN_FLIGHT,
  observe,
}: {
  store: GuardedStore;
  /** The flow's clock (the store's time): instants in verdicts are on it. */
  clock: Clock;
  /** Told the store's time of every reply decided on the store's own clock (src/decide/store-clock.ts). */
  observe?: (storeNow: number) => void;
  holdMaxMs: number;
  mode: Mode;
  maxCallsInFlight?: number;
}): FetchDecider => {
  const decideGroup = async (group: Group, candidates: readonly Candidate[]): Promise<Verdict[]> => {
    const { producer, rule, asOf } = group.candidate;
    if (rule.unlimited || !rule.limit) {
      const now = clock.now();
      return group.indexes.map(() => ({ kind: 'forward', at: now }));
    }
    const reply: GuardedDecision = await store.decide({ producer, rule: rule.limit, sizes: group.indexes.map((i) => candidates[i].size), asOf });
    if (!reply.fallback) observe?.(reply.now);
    const now = clock.now();
    return mode === 'shadow' || rule.shadow ? shadowVerdicts(reply, now) : enforceVerdicts(reply, now, holdMaxMs, reply.unpaced ? 0 : spacingOf(rule.limit));
  };

  return {
    async decide(candidates) {
      const groups = groupByProducer(candidates);
      const results: Verdict[][] = [];
      for (let start = 0; start < groups.length; start += maxCallsInFlight) {
        const round = groups.slice(start, start + maxCallsInFlight);
        results.push(...(await Promise.all(round.map((group) => decideGroup(group, candidates)))));
      }
      const verdicts: Verdict[] = new Array(candidates.length);
      groups.forEach((group, g) => group.indexes.forEach((index, k) => (verdicts[index] = results[g][k])));
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
    const all = calls.flatMap((call) => call.candidates);
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
