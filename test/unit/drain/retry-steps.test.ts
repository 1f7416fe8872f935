import type { ParkInfo } from '../../../src/park/park-headers';
import { buildTiers } from '../../../src/park/tiers';
import { lateAfterMs, limitReached, RetryPolicy, stepAfterVerdict, stepWhenTierDue } from '../../../src/drain/retry-steps';

const policy: RetryPolicy = { tiers: buildTiers('r', [5000, 60_000, 600_000]), holdMaxMs: 5000, maxAttempts: 3, maxAgeMs: 3_600_000 };
const now = 1_000_000;
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

describe('when a retry message is out of its tier delay', () => {
  it('hops to the largest tier not longer than the time left when that exceeds hold.maxMs', () => {
    expect(stepWhenTierDue(info({ notBefore: now + 120_000 }), now, policy, 50)).toEqual({ kind: 'hop', tier: policy.tiers[1] });
    expect(stepWhenTierDue(info({ notBefore: now + 5001 }), now, policy, 50)).toEqual({ kind: 'hop', tier: policy.tiers[0] });
  });

  it('holds it in memory until its not-before when that is at most hold.maxMs away', () => {
    expect(stepWhenTierDue(info({ notBefore: now + 5000 }), now, policy, 50)).toEqual({ kind: 'hold', until: now + 5000 });
  });

  it('forwards a due delayed message without a new decision', () => {
    expect(stepWhenTierDue(info(), now, policy, 50)).toEqual({ kind: 'forward' });
    expect(stepWhenTierDue(info({ notBefore: now - 1000 }), now, policy, 50)).toEqual({ kind: 'forward' });
  });

  it('decides a delayed message again when it is more than max(T, 1 s) late', () => {
    expect(stepWhenTierDue(info({ notBefore: now - 1001 }), now, policy, 50)).toEqual({ kind: 'decide' });
    expect(stepWhenTierDue(info({ notBefore: now - 1500 }), now, policy, 2000)).toEqual({ kind: 'forward' });
    expect(lateAfterMs(undefined)).toBe(1000);
  });

  it('decides overflow and store-unavailable messages again when due', () => {
    for (const reason of [{ kind: 'overflow', limit: 'rate' }, { kind: 'store-unavailable' }] as const) {
      expect(stepWhenTierDue(info({ reason }), now, policy, 50)).toEqual({ kind: 'decide' });
    }
  });

  it('dead-letters instead of deciding past maxAttempts decisions or maxAge', () => {
    const overflow = { kind: 'overflow', limit: 'rate' } as const;
    expect(stepWhenTierDue(info({ reason: overflow, attempt: 3 }), now, policy, 50)).toEqual({ kind: 'dead-letter', reason: 'max-attempts' });
    expect(stepWhenTierDue(info({ reason: overflow, firstSeen: now - 3_600_001 }), now, policy, 50)).toEqual({ kind: 'dead-letter', reason: 'max-age' });
    expect(limitReached({ attempt: 2, firstSeen: now - 3_600_000 }, now, policy)).toBeUndefined();
  });
});

describe('when a message was decided again', () => {
  it('releases an admitted one at its slot, counting the decision', () => {
    expect(stepAfterVerdict(info(), { kind: 'forward', at: now + 300 }, now, policy)).toEqual({ kind: 'release', at: now + 300, attempt: 2 });
    expect(stepAfterVerdict(info(), { kind: 'forward', at: now - 5 }, now, policy)).toEqual({ kind: 'release', at: now, attempt: 2 });
  });

  it('parks an admitted one with a long wait as delayed with its slot as not-before', () => {
    const step = stepAfterVerdict(info(), { kind: 'park', reason: { kind: 'delayed' }, notBefore: now + 70_000 }, now, policy);
    expect(step).toEqual({ kind: 'park', tier: policy.tiers[1], info: info({ attempt: 2, notBefore: now + 70_000 }) });
  });

  it('re-parks a refused one with attempt + 1 and its limit as reason', () => {
    const reason = { kind: 'overflow', limit: '1000/h' } as const;
    const step = stepAfterVerdict(info(), { kind: 'park', reason, notBefore: now + 2000 }, now, policy);
    expect(step).toEqual({ kind: 'park', tier: policy.tiers[0], info: info({ attempt: 2, notBefore: now + 2000, reason }) });
  });

  it('dead-letters a refused one at its maxAttempts-th decision or when it could only leave past maxAge', () => {
    const reason = { kind: 'overflow', limit: 'rate' } as const;
    const refusal = { kind: 'park', reason, notBefore: now + 2000 } as const;
    expect(stepAfterVerdict(info({ attempt: 2 }), refusal, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-attempts', info: { attempt: 3 } });
    expect(stepAfterVerdict(info({ firstSeen: now - 3_599_000 }), refusal, now, policy)).toMatchObject({ kind: 'dead-letter', reason: 'max-age' });
  });

  it('stalls instead of burning an attempt when the store is unavailable under onStoreError = park', () => {
    const verdict = { kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: now + 1000 } as const;
    expect(stepAfterVerdict(info(), verdict, now, policy)).toEqual({ kind: 'stall', until: now + 1000 });
  });
});
