import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { type Candidate, coalesceDecider, createFetchDecider, createGuardedStore, type RuleView, type StoreErrorPolicy } from '../../../src/decide/fetch-decider';
import { createStoreClock } from '../../../src/decide/store-clock';
import type { DecideRequest, LimiterStore, LimitRule } from '../../../src/limit/types';
import { noMetrics } from '../../../src/metrics/types';
import { SluiceError } from '../../../src/errors';

const rule: LimitRule = {
  algorithm: 'leaky-bucket', intervalMs: 100, capacityMs: 1000, burst: 1, windows: [], labels: { rate: '10/s' }, fingerprint: 'f',
};
const limited: RuleView = { name: 'default', unlimited: false, shadow: false, limit: rule };

/** A fake store on a clock 10 s ahead of ours: admits k messages one interval apart, refuses past `admit`. */
const fakeStore = (admit = Infinity) => {
  const calls: DecideRequest[] = [];
  const started: [string, number][] = [];
  const forgotten: string[] = [];
  const store: LimiterStore & { startAt(producer: string, rule: LimitRule, end: { tat: number; tail: number }): void; forget(producer: string): number } = {
    startAt: (producer, _rule, { tat }) => { started.push([producer, tat]); },
    forget: (producer) => { forgotten.push(producer); return 0; },
    decide: async (req) => {
      calls.push(req);
      const now = 1_010_000;
      return { now, decisions: req.sizes.map((_, i) => (i < admit ? { admitted: true, at: now + i * 2000 } : { admitted: false, at: now + 9000, reason: '1000/h' })) };
    },
    inspect: async () => { throw new Error('unused'); },
    close: async () => undefined,
  };
  return { store, calls, started, forgotten };
};

const failing: LimiterStore = {
  decide: async () => { throw new SluiceError('STORE_UNAVAILABLE', 'down', { retriable: true }); },
  inspect: async () => { throw new Error('unused'); },
  close: async () => undefined,
};

const build = (store: LimiterStore, opts: { policy?: StoreErrorPolicy; local?: ReturnType<typeof fakeStore>['store']; mode?: 'enforce' | 'shadow' } = {}) => {
  const clock = createStoreClock(manualClock(1_000_000));
  const guarded = createGuardedStore({
    store, local: opts.local ?? fakeStore().store, policy: opts.policy ?? 'forward', members: () => 4,
    scaleRule: (r, share) => ({ ...r, intervalMs: r.intervalMs / share }), clock, metrics: noMetrics,
    logger: pino({ level: 'silent' }), parkDelayMs: 5000,
  });
  return { clock, guarded, decider: createFetchDecider({ store: guarded, clock, holdMaxMs: 5000, mode: opts.mode ?? 'enforce', observe: clock.observe }) };
};

const c = (producer: string, rv: RuleView = limited): Candidate => ({ producer, rule: rv, size: 10 });

describe('when a fetch holds messages of several producers', () => {
  it('makes one store call per producer, with that producer\'s sizes in arrival order', async () => {
    const { store, calls } = fakeStore();
    const { decider } = build(store);
    await decider.decide([c('a'), c('b'), c('a'), c('a')]);
    expect(calls.map((x) => [x.producer, x.sizes.length])).toEqual([['a', 3], ['b', 1]]);
  });

  it('never calls the store for an unlimited producer and forwards it now', async () => {
    const { store, calls } = fakeStore();
    const { decider, clock } = build(store);
    const verdicts = await decider.decide([c('internal-1', { name: 'internal-*', unlimited: true, shadow: false })]);
    expect(calls).toEqual([]);
    expect(verdicts).toEqual([{ kind: 'forward', at: clock.now() }]);
  });
});

describe('when the store answers on its own clock', () => {
  // The flow runs on the store's clock (docs/design.md "One clock"): instants stay the store's, and
  // the flow's clock takes the store's offset from the reply (before: instants were converted to local time).
  it('keeps instants on the store clock, moves the flow clock to it, holds waits up to hold.maxMs and parks longer ones as delayed', async () => {
    const { store } = fakeStore(4);
    const { decider, clock } = build(store);
    const v = await decider.decide([c('a'), c('a'), c('a'), c('a'), c('a')]);
    expect(clock.offset()).toBe(10_000);
    expect(clock.now()).toBe(1_010_000);
    expect(v).toEqual([
      { kind: 'forward', at: 1_010_000, spacingMs: 100 },
      { kind: 'forward', at: 1_012_000, spacingMs: 100 },
      { kind: 'forward', at: 1_014_000, spacingMs: 100 },
      { kind: 'park', reason: { kind: 'delayed' }, notBefore: 1_016_000 },
      { kind: 'park', reason: { kind: 'overflow', limit: '1000/h' }, notBefore: 1_019_000 },
    ]);
  });

  it('decides a late retry as of its turn on the store\'s own clock (asOf, never `now`), and the reply still sets the flow clock', async () => {
    const { store, calls } = fakeStore();
    const { decider, clock } = build(store);
    await decider.decide([{ ...c('a'), asOf: 999_000 }, c('a')]);
    expect(calls.map((x) => [x.sizes.length, x.now, x.asOf])).toEqual([[1, undefined, 999_000], [1, undefined, undefined]]);
    expect(clock.offset()).toBe(10_000);
  });
});

describe('when the mode is shadow', () => {
  it('forwards everything now and marks what would have been delayed or refused', async () => {
    const { store } = fakeStore(2);
    const { decider } = build(store, { mode: 'shadow' });
    const v = await decider.decide([c('a'), c('a'), c('a')]);
    expect(v).toEqual([
      { kind: 'forward', at: 1_010_000 },
      { kind: 'forward', at: 1_010_000, shadow: 'delayed' },
      { kind: 'forward', at: 1_010_000, shadow: 'overflowed' },
    ]);
  });
});

describe('when the store fails', () => {
  it('forward: admits now, unspaced (fail open)', async () => {
    const { decider } = build(failing, { policy: 'forward' });
    expect(await decider.decide([c('a'), c('a')])).toEqual([{ kind: 'forward', at: 1_000_000 }, { kind: 'forward', at: 1_000_000 }]);
  });

  it('park: parks store-unavailable with a short notBefore', async () => {
    const { decider } = build(failing, { policy: 'park' });
    expect(await decider.decide([c('a')])).toEqual([{ kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: 1_005_000 }]);
  });

  it('local: decides in memory with the rule divided among the group members', async () => {
    const local = fakeStore();
    const { decider } = build(failing, { policy: 'local', local: local.store });
    await decider.decide([c('a')]);
    expect(local.calls[0].rule.intervalMs).toBe(400);
  });

  it('local: starts a backlogged producer where the store last left its schedule, once, and an idle one as it is', async () => {
    let down = false;
    const ok = fakeStore().store; // admits one message every 2 s from 1_010_000
    const flaky: LimiterStore = { ...ok, decide: (r) => (down ? failing.decide(r) : ok.decide(r)) };
    const local = fakeStore();
    const { decider } = build(flaky, { policy: 'local', local: local.store });
    await decider.decide([c('a'), c('a'), c('a'), c('b')]);
    down = true;
    await decider.decide([c('a'), c('b')]);
    await decider.decide([c('a')]);
    expect(local.started).toEqual([['a', 1_014_100]]); // its last slot 1_014_000, then one interval
    expect(local.calls.map((call) => call.producer)).toEqual(['a', 'b', 'a']);
    down = false;
    await decider.decide([c('b')]);
    expect(local.forgotten).toEqual(['a', 'b', 'b']); // what the store decided, memory no longer holds
  });

  it('counts the fallback active after three consecutive failures and ends it at the first success', async () => {
    let down = true;
    const ok = fakeStore().store;
    const flaky: LimiterStore = { ...ok, decide: (r) => (down ? failing.decide(r) : ok.decide(r)) };
    const { decider, guarded } = build(flaky);
    await decider.decide([c('a')]);
    await decider.decide([c('a')]);
    expect(guarded.fallbackActive()).toBe(false);
    await decider.decide([c('a')]);
    expect(guarded.fallbackActive()).toBe(true);
    down = false;
    await decider.decide([c('a')]);
    expect(guarded.fallbackActive()).toBe(false);
  });
});

describe('when several partitions of one fetch are decided in the same tick', () => {
  it('coalesces them into one store call per producer and hands each caller its own verdicts', async () => {
    const { store, calls } = fakeStore();
    const { decider } = build(store);
    const merged = coalesceDecider(decider);
    const [p0, p1] = await Promise.all([merged.decide([c('a'), c('b')]), merged.decide([c('a')])]);
    expect(calls.map((x) => [x.producer, x.sizes.length])).toEqual([['a', 2], ['b', 1]]);
    expect(p0).toHaveLength(2);
    expect(p1).toEqual([{ kind: 'forward', at: 1_012_000, spacingMs: 100 }]);
  });
});

describe('when one fetch holds more distinct producers than maxProducersPerRound', () => {
  it('decides them in rounds, never more store calls in flight than the bound, every verdict in place', async () => {
    let inFlight = 0;
    let most = 0;
    const store: LimiterStore = {
      decide: async (req) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return { now: 1_000_000, decisions: req.sizes.map(() => ({ admitted: true, at: 1_000_000 + Number(req.producer.slice(1)) })) };
      },
      inspect: async () => { throw new Error('unused'); },
      close: async () => undefined,
    };
    const { guarded, clock } = build(store);
    const decider = createFetchDecider({ store: guarded, clock, holdMaxMs: 5000, mode: 'enforce', maxProducersPerRound: 100 });
    const candidates = Array.from({ length: 1050 }, (_, i) => c(`p${i % 350}`));
    const verdicts = await decider.decide(candidates);
    expect(most).toBe(100);
    expect(verdicts).toHaveLength(1050);
    verdicts.forEach((verdict, i) => expect(verdict).toMatchObject({ kind: 'forward', at: 1_000_000 + (i % 350) }));
  });
});

describe('when the store decides several producers in one call (decideMany)', () => {
  const manyStore = (fail = false) => {
    const calls: DecideRequest[][] = [];
    const { store } = fakeStore();
    const many: LimiterStore = {
      ...store,
      decide: async () => { throw new Error('decide() called beside decideMany'); },
      decideMany: async (requests) => {
        calls.push([...requests]);
        if (fail) throw new SluiceError('STORE_UNAVAILABLE', 'down', { retriable: true });
        return Promise.all(requests.map((r) => store.decide(r)));
      },
    };
    return { store: many, calls };
  };

  it('makes one call per round for every limited producer, and puts each verdict at its message', async () => {
    const { store, calls } = manyStore();
    const { decider } = build(store);
    const free: RuleView = { name: 'internal-*', unlimited: true, shadow: false };
    const verdicts = await decider.decide([c('a'), c('b'), c('x', free), c('a')]);
    expect(calls.map((round) => round.map((r) => [r.producer, r.sizes.length]))).toEqual([[['a', 2], ['b', 1]]]);
    expect(verdicts).toEqual([
      { kind: 'forward', at: 1_010_000, spacingMs: 100 },
      { kind: 'forward', at: 1_010_000, spacingMs: 100 },
      { kind: 'forward', at: 1_000_000 },
      { kind: 'forward', at: 1_012_000, spacingMs: 100 },
    ]);
  });

  it('answers every producer of a failed call by the policy and counts each as a failure', async () => {
    const { store } = manyStore(true);
    const { decider, guarded } = build(store, { policy: 'park' });
    const verdicts = await decider.decide([c('a'), c('b'), c('c')]);
    expect(verdicts).toEqual(['a', 'b', 'c'].map(() => ({ kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: 1_005_000 })));
    expect(guarded.failures()).toBe(3);
    expect(guarded.fallbackActive()).toBe(true);
  });
});

describe('when the store decides a call per producer and one call fails', () => {
  it('answers only that producer by the policy: the others keep what the store decided (and charged)', async () => {
    const { store } = fakeStore();
    const oneFails: LimiterStore = { ...store, decide: (r) => (r.producer === 'b' ? failing.decide(r) : store.decide(r)) };
    const { decider } = build(oneFails, { policy: 'park' });
    const verdicts = await decider.decide([c('a'), c('b')]);
    expect(verdicts).toEqual([
      { kind: 'forward', at: 1_010_000, spacingMs: 100 },
      { kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: 1_005_000 },
    ]);
  });
});
