/**
 * The decider with leased slots (src/decide/slot-leases.ts) on one shared in-memory store: a
 * producer far below its rule leaves on leased slots without a store call on its path, and the
 * replicas together still get slots one interval apart, each replica's in its own order.
 */
import fc from 'fast-check';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { type Candidate, createFetchDecider, createGuardedStore, type RuleView, type Verdict } from '../../../src/decide/fetch-decider';
import { createSlotLeases, LEASE_USE_MS } from '../../../src/decide/slot-leases';
import { compileRule } from '../../../src/limit/compile-rule';
import { createMemoryStore } from '../../../src/limit/memory-store';
import type { DecideRequest, LimiterStore, LimitRule } from '../../../src/limit/types';
import { noMetrics } from '../../../src/metrics/types';

const compiled = (rate: string, queue: string | number = '1s'): LimitRule => {
  const result = compileRule({ rate, queue });
  if (!result.ok) throw new Error('rule');
  return result.rule;
};

const viewOf = (limit: LimitRule, extra: Partial<RuleView> = {}): RuleView => ({ name: 'default', unlimited: false, shadow: false, limit, ...extra });

/** The shared store, counting the requests that reach it. */
const sharedStore = (clock: { now(): number }) => {
  const memory = createMemoryStore({ clock });
  const requests: DecideRequest[] = [];
  const store: LimiterStore = { ...memory, decide: (request) => (requests.push(request), memory.decide(request)) };
  return { store, requests };
};

const replica = (store: LimiterStore, clock: { now(): number }, leased = true) => {
  const guarded = createGuardedStore({
    store, local: createMemoryStore({ clock }), policy: 'forward', members: () => 2, scaleRule: (r) => r, clock, metrics: noMetrics,
    logger: pino({ level: 'silent' }), parkDelayMs: 5000,
  });
  return createFetchDecider({ store: guarded, clock, holdMaxMs: 5000, mode: 'enforce', ...(leased ? { leases: createSlotLeases() } : {}) });
};

/** Lets the renewals sent after a take run (they go out once the code that took has run). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const candidates = (n: number, rule: RuleView, producer = 'p'): Candidate[] => Array.from({ length: n }, () => ({ producer, rule, size: 1 }));
const slotsOf = (verdicts: Verdict[]): number[] => verdicts.flatMap((v) => (v.kind === 'forward' ? [v.at] : []));

describe('when a producer is far below its rule', () => {
  it('leaves on a leased slot without a store call on its path, and the lease is renewed off it', async () => {
    const clock = manualClock(1_000_000);
    const { store, requests } = sharedStore(clock);
    const decider = replica(store, clock);
    const rule = viewOf(compiled('100/s'));
    expect(slotsOf(await decider.decide(candidates(1, rule)))).toEqual([1_000_000]);
    expect(requests.map((r) => [r.sizes.length, r.lease])).toEqual([[1, 1]]);
    await settle();
    clock.advance(20);
    let pending = true;
    const answered = decider.decide(candidates(1, rule)).finally(() => (pending = false));
    await Promise.resolve();
    await Promise.resolve();
    // answered before anything reached the store: the leased slot (10 ms ago)
    expect(pending).toBe(false);
    expect(slotsOf(await answered)).toEqual([1_000_010]);
    expect(requests.length).toBe(1);
    await settle();
    expect(requests.map((r) => [r.sizes.length, r.lease])).toEqual([[1, 1], [0, 1]]);
    clock.advance(20);
    expect(slotsOf(await decider.decide(candidates(1, rule)))).toEqual([1_000_020]);
  });

  it('decides in a round what the lease does not cover, after the leased slots', async () => {
    const clock = manualClock(1_000_000);
    const { store } = sharedStore(clock);
    const decider = replica(store, clock);
    const rule = viewOf(compiled('1000/s'));
    await decider.decide(candidates(1, rule));
    clock.advance(2);
    expect(slotsOf(await decider.decide(candidates(8, rule)))).toEqual([1_000_001, 1_000_002, 1_000_003, 1_000_004, 1_000_005, 1_000_006, 1_000_007, 1_000_008]);
  });

  it('does not use a leased slot more than LEASE_USE_MS after it, nor for a rule in shadow, under a budget or slower than 12.5/s', async () => {
    const clock = manualClock(1_000_000);
    const { store, requests } = sharedStore(clock);
    const decider = replica(store, clock);
    const rule = viewOf(compiled('100/s'));
    await decider.decide(candidates(1, rule));
    clock.advance(10 + LEASE_USE_MS + 1);
    await decider.decide(candidates(1, rule));
    expect(requests.length).toBe(2);
    const shadow = viewOf(compiled('100/s'), { shadow: true });
    await decider.decide(candidates(1, shadow, 's'));
    const budget = viewOf(compiled('100/s'), { waits: { maxWaitMs: 1000, chunk: 1 } });
    await decider.decide(candidates(1, budget, 'b'));
    await decider.decide(candidates(1, viewOf(compiled('10/s')), 'slow'));
    expect(requests.slice(2).map((r) => r.lease)).toEqual([undefined, undefined, undefined]);
  });
});

describe('when two replicas lease slots of one producer from one store', () => {
  // Each step: a replica, how long after the step before, how many messages it decides, and what
  // runs before the next step: nothing (its round still out), its answer, or the renewals too.
  const step = fc.record({
    replica: fc.integer({ min: 0, max: 1 }),
    gapMs: fc.integer({ min: 0, max: 60 }),
    count: fc.integer({ min: 1, max: 3 }),
    then: fc.constantFrom('nothing', 'answer', 'renewals'),
  });

  it('gives slots one interval apart across both (each charged once), each replica\'s in the order it decided them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), fc.constantFrom('100/s', '1000/s', '40/s'), async (steps, rate) => {
        const clock = manualClock(1_000_000);
        const { store } = sharedStore(clock);
        const replicas = [replica(store, clock), replica(store, clock)];
        const limit = compiled(rate);
        const rule = viewOf(limit);
        const asked: Promise<Verdict[]>[][] = [[], []];
        for (const { replica: r, gapMs, count, then } of steps) {
          clock.advance(gapMs);
          const answer = replicas[r].decide(candidates(count, rule));
          asked[r].push(answer);
          if (then === 'answer') await answer;
          if (then === 'renewals') await settle();
        }
        const given = await Promise.all(asked.map(async (mine) => (await Promise.all(mine)).flatMap(slotsOf)));
        for (const mine of given) expect(mine).toEqual([...mine].sort((a, b) => a - b));
        const all = [...given[0], ...given[1]].sort((a, b) => a - b);
        // whole-ms slots of a fractional interval may lie up to 1 ms closer
        for (let i = 1; i < all.length; i += 1) expect(all[i] - all[i - 1]).toBeGreaterThanOrEqual(Math.floor(limit.intervalMs) - 1);
      }),
      { numRuns: 200 },
    );
  });
});
