import { schema } from '../../../src/config/schema';
import { parseDuration } from '../../../src/config/units';
import type { RuleView, Verdict } from '../../../src/decide/fetch-decider';
import { turnOf } from '../../../src/flow/partition-pauser';
import { afterVerdict, AS_OF_MS, firstStep, HOP_MARGIN_MS, hopTier, limitReached, OUTAGE_MS, parkTier, RoutePolicy } from '../../../src/flow/flow-item';
import type { LimitRule } from '../../../src/limit/types';
import { buildTiers, type ParkInfo, type Tier } from '../../../src/park/park';

const policy: RoutePolicy = { tiers: buildTiers('r', [5000, 60_000, 600_000]), holdMaxMs: 5000, maxAttempts: 3, maxAgeMs: 3_600_000, hop: true };
const [s5, m1, m10] = policy.tiers;
const now = 1_000_000;
const leaky: LimitRule = {
  algorithm: 'leaky-bucket', intervalMs: 50, capacityMs: 1000, burst: 1, windows: [], labels: { rate: '20/s' }, fingerprint: 'f',
};
const rule: RuleView = { name: 'p', unlimited: false, shadow: false, limit: leaky };
const info = (change: Partial<ParkInfo> = {}): ParkInfo => ({
  producer: 'p',
  attempt: 1,
  notBefore: now,
  firstSeen: now - 10_000,
  timestamp: '1',
  origin: { topic: 'in', partition: 0, offset: '1' },
  reason: { kind: 'delayed' },
  ...change,
});
const parked = (change: Partial<ParkInfo> = {}) => ({ fromTier: true, info: info(change) });
const overflow = { kind: 'overflow', limit: 'rate' } as const;

describe('firstStep: a message taken from its topic', () => {
  it('decides an ingress message, whatever its park info says', () => {
    expect(firstStep({ fromTier: false, info: info({ attempt: 0, notBefore: now + 60_000 }) }, now, policy, rule)).toEqual({ kind: 'decide' });
  });

  describe('a `delayed` tier message', () => {
    it('hops when its not-before is more than hold.maxMs away, to the tier that brings it within hold.maxMs of it', () => {
      // Changed on purpose: the old router hopped to the largest tier not longer than the time left
      // (1m here), from which it could have to hop again; a hop now takes the shortest tier at least
      // `left − hold.maxMs` long (read ahead by hold.maxMs), so a parked message is written at most twice.
      expect(firstStep(parked({ notBefore: now + 120_000 }), now, policy, rule)).toEqual({ kind: 'park', tier: m10, info: info({ notBefore: now + 120_000 }), moved: true });
      // The largest tier not longer than the time left, when that already brings it within hold.maxMs.
      expect(firstStep(parked({ notBefore: now + 6001 }), now, policy, rule)).toEqual({ kind: 'park', tier: s5, info: info({ notBefore: now + 6001 }), moved: true });
      expect(firstStep(parked({ notBefore: now + 61_000 }), now, policy, rule)).toMatchObject({ kind: 'park', tier: m1, moved: true });
    });

    it('is kept in memory, not hopped, within hold.maxMs + HOP_MARGIN_MS of its not-before', () => {
      // Changed on purpose: a message found 5.07 s before its slot (parked with a wait just over
      // 10 s, taken on its tier's delay) was hopped to the 5 s tier, read back behind records
      // whose turn was that tier's delay after the hop, and left ~100 ms after its slot — after
      // its producer's next message (a CI run's order test on Kafka 4.3.1).
      expect(HOP_MARGIN_MS).toBe(1000);
      expect(firstStep(parked({ notBefore: now + 5070 }), now, policy, rule)).toEqual({ kind: 'release', at: now + 5070, attempt: 1, spacingMs: 50 });
      expect(firstStep(parked({ notBefore: now + 6000 }), now, policy, rule)).toMatchObject({ kind: 'release', at: now + 6000 });
      expect(firstStep(parked({ notBefore: now + 6000, reason: overflow }), now, policy, rule)).toEqual({ kind: 'wait', until: now + 6000 });
      expect(firstStep(parked({ notBefore: now + 6001 }), now, policy, rule)).toMatchObject({ kind: 'park', moved: true });
    });

    it('is dead-lettered past maxAge instead of hopped, held or released, in sluice drain too (every write path checks maxAge)', () => {
      const old = parked({ notBefore: now + 120_000, firstSeen: now - 3_600_001 });
      expect(firstStep(old, now, policy, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
      expect(firstStep(old, now, { ...policy, hop: false }, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
      expect(firstStep(parked({ notBefore: now, firstSeen: now - 3_600_001 }), now, policy, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
      expect(firstStep(parked({ notBefore: now + 120_000, firstSeen: now - 3_600_000 }), now, policy, rule)).toMatchObject({ kind: 'park', moved: true });
    });

    it('is released on its slot with the rule\'s spacing when the slot is at most hold.maxMs away, without a new decision', () => {
      // Was `hold until notBefore`, then `forward`: a release at a later instant is held by the dispatcher.
      expect(firstStep(parked({ notBefore: now + 5000 }), now, policy, rule)).toEqual({ kind: 'release', at: now + 5000, attempt: 1, spacingMs: 50 });
      expect(firstStep(parked(), now, policy, rule)).toEqual({ kind: 'release', at: now, attempt: 1, spacingMs: 50 });
    });

    it('carries no spacing for a token bucket or an unlimited producer', () => {
      expect(firstStep(parked(), now, policy, { ...rule, limit: { ...leaky, algorithm: 'token-bucket' } })).toMatchObject({ kind: 'release', spacingMs: 0 });
      expect(firstStep(parked(), now, policy, { ...rule, unlimited: true })).toMatchObject({ kind: 'release', spacingMs: 0 });
    });

    it('is released now when it is late by at most OUTAGE_MS', () => {
      // Changed on purpose: the old limit was max(T, 1 s); a slot is now kept through a short outage (5 s).
      expect(OUTAGE_MS).toBe(5000);
      expect(firstStep(parked({ notBefore: now - 1000 }), now, policy, rule)).toEqual({ kind: 'release', at: now, attempt: 1, spacingMs: 50 });
      expect(firstStep(parked({ notBefore: now - OUTAGE_MS }), now, policy, rule)).toEqual({ kind: 'release', at: now, attempt: 1, spacingMs: 50 });
    });

    it('is decided again (not as of its slot) when it is later than OUTAGE_MS, or dead-lettered past its limits', () => {
      expect(firstStep(parked({ notBefore: now - OUTAGE_MS - 1 }), now, policy, rule)).toEqual({ kind: 'decide' });
      expect(firstStep(parked({ notBefore: now - OUTAGE_MS - 1, attempt: 3 }), now, policy, rule)).toEqual({ kind: 'dead-letter', reason: 'max-attempts', info: info({ notBefore: now - OUTAGE_MS - 1, attempt: 3 }) });
    });
  });

  describe('an `overflow` or `store-unavailable` tier message', () => {
    it('waits in memory until its not-before when that is at most hold.maxMs away', () => {
      for (const reason of [overflow, { kind: 'store-unavailable' }] as const) {
        expect(firstStep(parked({ reason, notBefore: now + 3000 }), now, policy, rule)).toEqual({ kind: 'wait', until: now + 3000 });
      }
    });

    it('hops when it is further away, unless it is already past maxAge', () => {
      expect(firstStep(parked({ reason: overflow, notBefore: now + 120_000 }), now, policy, rule)).toMatchObject({ kind: 'park', tier: m10, moved: true });
      expect(firstStep(parked({ reason: overflow, notBefore: now + 120_000, firstSeen: now - 3_600_001 }), now, policy, rule))
        .toEqual({ kind: 'dead-letter', reason: 'max-age', info: info({ reason: overflow, notBefore: now + 120_000, firstSeen: now - 3_600_001 }) });
    });

    it('is decided as of its not-before when taken at most AS_OF_MS after it, and plainly later', () => {
      for (const reason of [overflow, { kind: 'store-unavailable' }] as const) {
        expect(firstStep(parked({ reason }), now, policy, rule)).toEqual({ kind: 'decide', asOf: now });
        expect(firstStep(parked({ reason, notBefore: now - AS_OF_MS }), now, policy, rule)).toEqual({ kind: 'decide', asOf: now - AS_OF_MS });
        expect(firstStep(parked({ reason, notBefore: now - AS_OF_MS - 1 }), now, policy, rule)).toEqual({ kind: 'decide' });
      }
    });

    it('is dead-lettered instead of decided past maxAttempts decisions or maxAge', () => {
      expect(firstStep(parked({ reason: overflow, attempt: 3 }), now, policy, rule)).toEqual({ kind: 'dead-letter', reason: 'max-attempts', info: info({ reason: overflow, attempt: 3 }) });
      expect(firstStep(parked({ reason: overflow, firstSeen: now - 3_600_001 }), now, policy, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
      expect(limitReached({ attempt: 2, firstSeen: now - 3_600_000 }, now, policy)).toBeUndefined();
      expect(limitReached({ attempt: 3, firstSeen: now - 3_600_001 }, now, policy)).toBe('max-age');
    });
  });

  describe('a malformed message, or a dead-lettered one redriven by sluice drain', () => {
    it('is decided again at once, wherever its not-before is, or dead-lettered past its limits', () => {
      for (const flag of [{ malformed: ['sluice-attempt: not a number'] }, { decideAgain: true }]) {
        expect(firstStep({ ...parked({ notBefore: now + 120_000 }), ...flag }, now, policy, rule)).toEqual({ kind: 'decide' });
        expect(firstStep({ ...parked({ notBefore: now - 60_000 }), ...flag }, now, policy, rule)).toEqual({ kind: 'decide' });
        expect(firstStep({ ...parked({ attempt: 3 }), ...flag }, now, policy, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-attempts' });
        expect(firstStep({ ...parked({ firstSeen: now - 3_600_001 }), ...flag }, now, policy, rule)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
      }
    });
  });

  describe('when the flow does not hop (sluice drain)', () => {
    it('waits in memory for a message not due within hold.maxMs instead of parking it again', () => {
      const noHop = { ...policy, hop: false };
      expect(firstStep(parked({ notBefore: now + 120_000 }), now, noHop, rule)).toEqual({ kind: 'wait', until: now + 120_000 });
      expect(firstStep(parked({ reason: overflow, notBefore: now + 120_000, firstSeen: now - 3_600_000 }), now, noHop, rule)).toEqual({ kind: 'wait', until: now + 120_000 });
    });
  });
});

describe('afterVerdict: what a decision means', () => {
  const forward = (at: number, spacingMs?: number): Verdict => ({ kind: 'forward', at, ...(spacingMs === undefined ? {} : { spacingMs }) });

  it('releases an admitted one at its slot with its spacing, counting the decision', () => {
    expect(afterVerdict(parked(), forward(now + 300, 50), now, policy)).toEqual({ kind: 'release', at: now + 300, attempt: 2, spacingMs: 50 });
    // Decided after its slot (a slow round): released now, the slot kept for its lane.
    expect(afterVerdict(parked(), forward(now - 5), now, policy)).toEqual({ kind: 'release', at: now, attempt: 2, spacingMs: 0, slot: now - 5 });
    expect(afterVerdict({ fromTier: false, info: info({ attempt: 0 }) }, forward(now), now, policy)).toMatchObject({ kind: 'release', attempt: 1 });
  });

  it('parks an admitted one with a long wait as delayed, its slot as not-before, on the largest tier not longer than the wait', () => {
    const step = afterVerdict(parked(), { kind: 'park', reason: { kind: 'delayed' }, notBefore: now + 70_000 }, now, policy);
    expect(step).toEqual({ kind: 'park', tier: m1, info: info({ attempt: 2, notBefore: now + 70_000 }), moved: false });
    expect(step).toMatchObject({ tier: parkTier(policy.tiers, 70_000) });
  });

  it('parks a delayed one even at maxAttempts (its slot is reserved), but not when it could only leave past maxAge', () => {
    const verdict = { kind: 'park', reason: { kind: 'delayed' }, notBefore: now + 70_000 } as const;
    expect(afterVerdict(parked({ attempt: 5, firstSeen: now - 3_500_000 }), verdict, now, policy)).toMatchObject({ kind: 'park', info: { attempt: 6 } });
    expect(afterVerdict(parked({ attempt: 5, firstSeen: now - 3_600_000 }), verdict, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
  });

  it('re-parks a refused one with attempt + 1 and its limit as reason', () => {
    const reason = { kind: 'overflow', limit: '1000/h' } as const;
    const step = afterVerdict(parked(), { kind: 'park', reason, notBefore: now + 2000 }, now, policy);
    expect(step).toEqual({ kind: 'park', tier: s5, info: info({ attempt: 2, notBefore: now + 2000, reason }), moved: false });
  });

  it('dead-letters a refused one at its maxAttempts-th decision or when it could only leave past maxAge', () => {
    const refusal = { kind: 'park', reason: overflow, notBefore: now + 2000 } as const;
    expect(afterVerdict(parked({ attempt: 2 }), refusal, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-attempts', info: { attempt: 3 } });
    expect(afterVerdict(parked({ firstSeen: now - 3_599_000 }), refusal, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-age', info: { notBefore: now + 2000 } });
    expect(afterVerdict(parked({ firstSeen: now - 3_598_000 }), refusal, now, policy)).toMatchObject({ kind: 'park' });
  });

  it('while a budget holds its producer back, a refusal by the rate or the bytes waits for the budget (parking it only if the room is full); a window\'s refusal is parked as always', () => {
    const waits = { maxWaitMs: 60_000, chunk: 20 };
    const ingress = { fromTier: false, info: info({ attempt: 0, firstSeen: now }) };
    for (const limit of ['rate', 'bytes']) {
      const step = afterVerdict(ingress, { kind: 'park', reason: { kind: 'overflow', limit }, notBefore: now + 2000 }, now, policy, waits);
      expect(step).toMatchObject({ kind: 'wait-budget', maxWaitMs: 60_000, chunk: 20, otherwise: { kind: 'park', info: { attempt: 1 } } });
    }
    expect(afterVerdict(ingress, { kind: 'park', reason: { kind: 'overflow', limit: '1000/h' }, notBefore: now + 2000 }, now, policy, waits)).toMatchObject({ kind: 'park' });
    expect(afterVerdict(ingress, { kind: 'park', reason: { kind: 'overflow', limit: 'rate' }, notBefore: now + 2000 }, now, policy)).toMatchObject({ kind: 'park' });
    expect(afterVerdict(ingress, forward(now), now, policy, waits)).toMatchObject({ kind: 'release' });
  });

  it('dead-letters on the first park too when the not-before is past maxAge', () => {
    const ingress = { fromTier: false, info: info({ attempt: 0, firstSeen: now }) };
    expect(afterVerdict(ingress, { kind: 'park', reason: overflow, notBefore: now + 3_600_001 }, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-age', info: { attempt: 1 } });
    expect(afterVerdict(ingress, { kind: 'park', reason: overflow, notBefore: now + 3_600_000 }, now, policy)).toMatchObject({ kind: 'park', tier: m10, info: { attempt: 1 } });
  });

  it('parks an ingress message when the store is unavailable under onStoreError = park', () => {
    const verdict = { kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: now + 1000 } as const;
    expect(afterVerdict({ fromTier: false, info: info({ attempt: 0 }) }, verdict, now, policy))
      .toEqual({ kind: 'park', tier: s5, info: info({ attempt: 1, notBefore: now + 1000, reason: { kind: 'store-unavailable' } }), moved: false });
  });

  it('stalls a tier message instead of burning an attempt when the store is unavailable under onStoreError = park', () => {
    const verdict = { kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: now + 1000 } as const;
    expect(afterVerdict(parked(), verdict, now, policy)).toEqual({ kind: 'stall', until: now + 1000 });
  });
});

describe('parkTier and hopTier', () => {
  it('parks on the largest tier not longer than the wait (the smallest when every tier is longer)', () => {
    expect(parkTier(policy.tiers, 1000)).toBe(s5);
    expect(parkTier(policy.tiers, 59_999)).toBe(s5);
    expect(parkTier(policy.tiers, 60_000)).toBe(m1);
    expect(parkTier(policy.tiers, 86_400_000)).toBe(m10);
  });

  it('hops to the largest tier not longer than the time left when that is within hold.maxMs, else the shortest at least left − hold.maxMs long', () => {
    expect(hopTier(policy.tiers, 10_000, 5000)).toBe(s5);
    expect(hopTier(policy.tiers, 10_001, 5000)).toBe(m1);
    expect(hopTier(policy.tiers, 65_000, 5000)).toBe(m1);
    expect(hopTier(policy.tiers, 65_001, 5000)).toBe(m10);
    expect(hopTier(policy.tiers, 10_000_000, 5000)).toBe(m10); // longer than every tier: the longest
  });

  describe('with the default tiers and hold.maxMs', () => {
    const delays = String(schema.retry.tiers.default).split(',').map((d) => parseDuration(d) as number);
    const tiers = buildTiers('r', delays);
    const holdMaxMs = schema.hold.maxMs.default;
    const maxAgeMs = parseDuration(schema.retry.maxAge.default) as number;
    const defaults: RoutePolicy = { tiers, holdMaxMs, maxAttempts: 10, maxAgeMs, hop: true };

    /**
     * A message parked at 0 with not-before `wait`; each tier record is fetched as soon as it is
     * written and taken at its turn (the gate: src/flow/partition-pauser.ts), then routed (firstStep) — a hop is written
     * again. Returns how often it was written and where it ends.
     */
    const simulate = (wait: number, reason: ParkInfo['reason']) => {
      const first = afterVerdict({ fromTier: false, info: info({ attempt: 0, firstSeen: 0, notBefore: 0 }) }, { kind: 'park', reason, notBefore: wait }, 0, defaults);
      if (first.kind !== 'park') throw new Error(`not parked: ${first.kind}`);
      let writes = 1;
      let tier: Tier = first.tier;
      let parkedAt = 0;
      for (;;) {
        const takenAt = Math.max(parkedAt, turnOf({ tier, parkedAt, notBefore: wait }, parkedAt, holdMaxMs));
        const step = firstStep({ fromTier: true, info: first.info }, takenAt, defaults, rule);
        if (step.kind !== 'park' || writes > 5) return { writes, step, takenAt };
        writes += 1;
        tier = step.tier;
        parkedAt = takenAt;
      }
    };

    it('are 5s,15s,1m,5m,15m,1h,6h,1d with hold.maxMs 5 s and maxAge 1 d', () => {
      expect(tiers.map((t) => t.label)).toEqual(['5s', '15s', '1m', '5m', '15m', '1h', '6h', '1d']);
      expect(holdMaxMs).toBe(5000);
      expect(maxAgeMs).toBe(86_400_000);
    });

    it.each([
      // wait, first park, writes
      [6_000, '5s', 1],
      [10_000, '5s', 1],
      [12_000, '5s', 2], // 7 s left after 5 s: hop to 5s again, read 5 s ahead of the not-before
      [20_000, '15s', 1],
      [59_000, '15s', 2],
      [61_000, '1m', 1],
      [299_000, '1m', 2],
      [3_000_000, '15m', 2],
      [3_600_000, '1h', 1],
      [21_000_000, '1h', 2],
      [21_605_000, '6h', 1],
      [80_000_000, '6h', 2],
      [86_400_000, '1d', 1],
    ])('a wait of %i ms is parked on %s and written %i time(s), then leaves within hold.maxMs of its not-before', (wait, firstTier, writes) => {
      expect(parkTier(tiers, wait).label).toBe(firstTier);
      for (const reason of [{ kind: 'delayed' }, overflow] as const) {
        const end = simulate(wait, reason);
        expect(end.writes).toBe(writes);
        expect(wait - end.takenAt).toBeLessThanOrEqual(holdMaxMs + HOP_MARGIN_MS);
        expect(end.step).toEqual(reason.kind === 'delayed'
          ? { kind: 'release', at: wait, attempt: 1, spacingMs: 50 }
          : end.takenAt === wait ? { kind: 'decide', asOf: wait } : { kind: 'wait', until: wait });
      }
    });

    it('writes every wait up to maxAge at most twice (a sweep, every tier boundary ± 1 ms)', () => {
      const waits = new Set<number>();
      for (let w = 5001; w <= maxAgeMs; w += 9973) waits.add(w);
      for (const d of delays) for (const h of [0, holdMaxMs, 2 * holdMaxMs]) for (const e of [-1, 0, 1]) waits.add(d + h + e);
      const bad: number[] = [];
      for (const wait of [...waits].filter((w) => w > holdMaxMs && w <= maxAgeMs)) {
        for (const reason of [{ kind: 'delayed' }, overflow] as const) {
          const end = simulate(wait, reason);
          if (end.writes > 2 || wait - end.takenAt > holdMaxMs + HOP_MARGIN_MS || end.step.kind === 'dead-letter') bad.push(wait);
        }
      }
      expect(bad).toEqual([]);
    });
  });
});
