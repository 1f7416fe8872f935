import fc from 'fast-check';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createGuardedStore } from '../../../src/decide/fetch-decider';
import { createMemoryStore } from '../../../src/limit/memory-store';
import { scaleRule } from '../../../src/limit/scale-rule';
import type { BatchDecision, DecideRequest, LimiterStore, LimitRule } from '../../../src/limit/types';
import { noMetrics } from '../../../src/metrics/types';

/**
 * One replica, `limiter.onStoreError: local`, against a shared store (the in-memory one standing
 * in for Redis) whose calls sometimes time out after they ran: the slots Redis charged for such a
 * call are the ones the fallback hands out, and messages decided in memory never leave beside
 * ones Redis granted before, whatever the order of answered and timed-out calls.
 */
const leaky = (intervalMs: number, capacityMs: number): LimitRule => ({
  algorithm: 'leaky-bucket', intervalMs, capacityMs, burst: 1, windows: [], labels: { rate: 'test' }, fingerprint: `lb:${intervalMs}:${capacityMs}`,
});

const setup = (many: boolean) => {
  const clock = manualClock(1_000_000);
  const shared = createMemoryStore({ clock });
  let timeOut = false;
  const ran = async <T>(reply: Promise<T>): Promise<T> => {
    const value = await reply;
    if (timeOut) throw new Error('Redis decide failed: no answer within 50 ms');
    return value;
  };
  const store: LimiterStore = {
    decide: (request) => ran(shared.decide(request)),
    ...(many ? { decideMany: (requests: readonly DecideRequest[]) => ran(Promise.all(requests.map((r) => shared.decide(r)))) } : {}),
    inspect: shared.inspect,
    close: shared.close,
  };
  const guarded = createGuardedStore({
    store, local: createMemoryStore({ clock }), policy: 'local', members: () => 1, scaleRule, clock, metrics: noMetrics,
    logger: pino({ level: 'silent' }), parkDelayMs: 5000,
  });
  return { clock, guarded, timesOut: (value: boolean) => (timeOut = value) };
};

const granted = (replies: BatchDecision[]): number[] => replies.flatMap((reply) => reply.decisions.filter((d) => d.admitted).map((d) => d.at));

describe('the local fallback after a call that timed out but ran', () => {
  it('hands out the slots Redis charged for it: the backlog goes on at the rate, nothing early', async () => {
    const { clock, guarded, timesOut } = setup(false);
    const rule = leaky(100, 10_000);
    const first = granted(await guarded.decideMany([{ producer: 'p', rule, sizes: [1, 1, 1, 1, 1] }]));
    expect(first).toEqual([1_000_000, 1_000_100, 1_000_200, 1_000_300, 1_000_400]);
    clock.advance(50);
    timesOut(true);
    const [reply] = await guarded.decideMany([{ producer: 'p', rule, sizes: [1, 1, 1] }]);
    expect(reply.fallback).toBe(true);
    expect(granted([reply])).toEqual([1_000_500, 1_000_600, 1_000_700]);
    timesOut(false);
    expect(granted(await guarded.decideMany([{ producer: 'p', rule, sizes: [1] }]))).toEqual([1_000_800]);
  });

  it('lets a producer past its rate by at most one message an outage, its first in memory when nothing of it was queued (fast-check)', async () => {
    const step = fc.record({
      advanceMs: fc.integer({ min: 0, max: 400 }),
      producers: fc.array(fc.record({ producer: fc.constantFrom('a', 'b', 'c'), count: fc.integer({ min: 1, max: 12 }) }), { minLength: 1, maxLength: 3 }),
      timesOut: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 5, max: 120 }), fc.integer({ min: 0, max: 3000 }), fc.boolean(), fc.array(step, { minLength: 1, maxLength: 25 }), async (intervalMs, capacityMs, many, steps) => {
        const { clock, guarded, timesOut } = setup(many);
        const rule = leaky(intervalMs, capacityMs);
        const slots = new Map<string, number[]>();
        // Outages (runs of calls that timed out) each producer was decided in.
        const outages = new Map<string, number>();
        let inOutage = new Set<string>();
        for (const { advanceMs, producers, timesOut: fails } of steps) {
          clock.advance(advanceMs);
          timesOut(fails);
          const requests = producers.map(({ producer, count }) => ({ producer, rule, sizes: new Array<number>(count).fill(1) }));
          const replies = await guarded.decideMany(requests);
          replies.forEach((reply, i) => slots.set(requests[i].producer, [...(slots.get(requests[i].producer) ?? []), ...granted([reply])]));
          if (!fails) inOutage = new Set();
          for (const { producer } of producers) {
            if (!fails || inOutage.has(producer)) continue;
            inOutage.add(producer);
            outages.set(producer, (outages.get(producer) ?? 0) + 1);
          }
        }
        for (const [producer, at] of slots) {
          const sorted = [...at].sort((x, y) => x - y);
          // Any run of its slots holds at most what its rate allows over that span, plus one an outage.
          let excess = 0;
          for (let i = 0; i < sorted.length; i += 1) {
            for (let j = i + 1; j < sorted.length; j += 1) excess = Math.max(excess, j - i - Math.floor((sorted[j] - sorted[i]) / intervalMs));
          }
          expect(excess).toBeLessThanOrEqual(outages.get(producer) ?? 0);
        }
      }),
      { numRuns: 30000 },
    );
  });
});
