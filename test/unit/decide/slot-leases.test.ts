import { createSlotLeases, LEASE_MAX_SLOTS, LEASE_USE_MS, leaseSize, worthLeasing } from '../../../src/decide/slot-leases';
import { COUNTED_LATE_MS } from '../../../src/hold/second-rule';
import type { LimitRule } from '../../../src/limit/types';

const ruleOf = (intervalMs: number, capacityMs = 1000, fingerprint = 'f'): LimitRule => ({
  algorithm: 'leaky-bucket', intervalMs, capacityMs, burst: 1, windows: [], labels: { rate: 'x' }, fingerprint,
});
const slow = ruleOf(10); // 100/s
const fast = ruleOf(1); // 1000/s

describe('the size of a lease', () => {
  it('spans at most 5 ms of the bucket, at least one slot, at most LEASE_MAX_SLOTS', () => {
    expect(leaseSize(slow)).toBe(1);
    expect(leaseSize(fast)).toBe(5);
    expect(leaseSize(ruleOf(0.001))).toBe(LEASE_MAX_SLOTS);
  });

  it('is asked only for a rule of at least 12.5/s (a slower producer cannot use one, and an unused one would delay its next message)', () => {
    expect(worthLeasing(ruleOf(LEASE_USE_MS))).toBe(true);
    expect(worthLeasing(ruleOf(LEASE_USE_MS + 1))).toBe(false);
  });

  it('is used within less than the lanes count as on time (a leased message leaves as one on its slot)', () => {
    expect(LEASE_USE_MS).toBeLessThan(COUNTED_LATE_MS);
  });
});

describe('taking leased slots', () => {
  it('gives them oldest first, one interval apart, each once', () => {
    const leases = createSlotLeases();
    leases.roundOut('p');
    leases.roundAnswered('p', fast, { start: 1000, count: 5 });
    expect(leases.take('p', fast, 1000, 2, 1000)).toEqual([1000, 1001]);
    expect(leases.take('p', fast, 1001, 9, 1000)).toEqual([1002, 1003, 1004]);
    expect(leases.take('p', fast, 1002, 1, 1000)).toEqual([]);
  });

  it('drops a slot LEASE_USE_MS after it, and takes none further ahead than the queue', () => {
    const leases = createSlotLeases();
    leases.roundOut('p');
    leases.roundAnswered('p', fast, { start: 1000, count: 5 });
    expect(leases.take('p', fast, 1002 + LEASE_USE_MS, 9, 1000)).toEqual([1002, 1003, 1004]);
    leases.roundOut('q');
    leases.roundAnswered('q', fast, { start: 2000, count: 3 });
    expect(leases.take('q', fast, 2000, 3, 0)).toEqual([2000]);
    expect(leases.take('q', fast, 2001, 3, 1)).toEqual([2001, 2002]);
  });

  it('gives none while a round of the producer is out, and a round answered drops the older lease', () => {
    const leases = createSlotLeases();
    leases.roundOut('p');
    leases.roundAnswered('p', fast, { start: 1000, count: 5 });
    leases.roundOut('p');
    expect(leases.take('p', fast, 1000, 1, 1000)).toEqual([]);
    leases.roundAnswered('p', fast, undefined);
    expect(leases.take('p', fast, 1000, 1, 1000)).toEqual([]);
    expect(leases.size()).toBe(0);
  });

  it('adds a renewal after what is held, and none under another rule', () => {
    const leases = createSlotLeases();
    leases.roundOut('p');
    leases.roundAnswered('p', fast, { start: 1000, count: 2 });
    expect(leases.renewalOut('p', fast)).toBe(true);
    expect(leases.renewalOut('p', fast)).toBe(false);
    leases.renewalAnswered('p', fast, { start: 1010, count: 2 });
    expect(leases.take('p', fast, 1010, 9, 1000)).toEqual([1000, 1001, 1010, 1011]);
    expect(leases.take('p', ruleOf(1, 1000, 'g'), 1010, 1, 1000)).toEqual([]);
  });
});

describe('when a renewal is due', () => {
  it('is due with fewer than half a lease left, or when the newest slot is within half of LEASE_USE_MS of its end', () => {
    const leases = createSlotLeases();
    expect(leases.low('p', fast, 1000)).toBe(true);
    leases.roundOut('p');
    leases.roundAnswered('p', fast, { start: 1000, count: 5 });
    expect(leases.low('p', fast, 1000)).toBe(false);
    leases.take('p', fast, 1000, 3, 1000);
    expect(leases.low('p', fast, 1000)).toBe(true);
    leases.roundOut('q');
    leases.roundAnswered('q', fast, { start: 1000, count: 5 });
    expect(leases.low('q', fast, 1004 + LEASE_USE_MS / 2)).toBe(false);
    expect(leases.low('q', fast, 1005 + LEASE_USE_MS / 2)).toBe(true);
  });
});

describe('sweeping', () => {
  it('forgets a producer whose slots are past use and who has nothing out', () => {
    const leases = createSlotLeases();
    for (const p of ['a', 'b', 'c']) {
      leases.roundOut(p);
      leases.roundAnswered(p, slow, { start: 1000, count: 1 });
    }
    leases.roundOut('d');
    leases.sweep(1000 + LEASE_USE_MS + 1, 10);
    expect(leases.size()).toBe(1);
  });
});
