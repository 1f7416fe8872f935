import { buildTiers, chooseTier, tierAtMost, tierDueAt, tierOfTopic } from '../../../src/park/tiers';

describe('when tiers are built from the config', () => {
  const tiers = buildTiers('orders.retry', [3_600_000, 5000, 60_000, 600_000, 5000]);

  it('names one topic per delay, in ascending order, without duplicates', () => {
    expect(tiers.map((t) => t.topic)).toEqual(['orders.retry.5s', 'orders.retry.1m', 'orders.retry.10m', 'orders.retry.1h']);
  });

  it('refuses an empty list and non-positive delays', () => {
    expect(() => buildTiers('r', [])).toThrow('retry.tiers: expected at least one delay');
    expect(() => buildTiers('r', [0])).toThrow('retry.tiers: expected positive whole milliseconds, got 0');
  });

  it('chooses the largest tier not longer than the wait', () => {
    expect(chooseTier(tiers, 59_999).label).toBe('5s');
    expect(chooseTier(tiers, 60_000).label).toBe('1m');
    expect(chooseTier(tiers, 7_200_000).label).toBe('1h');
  });

  it('chooses the smallest tier when the wait is shorter than every tier', () => {
    expect(chooseTier(tiers, 100).label).toBe('5s');
    expect(tierAtMost(tiers, 100)).toBeUndefined();
    expect(tierAtMost(tiers, 700_000)?.label).toBe('10m');
  });

  it('makes a tier message due its delay after its timestamp', () => {
    expect(tierDueAt(tiers[1], 1000)).toBe(61_000);
    expect(tierOfTopic(tiers, 'orders.retry.10m')?.delayMs).toBe(600_000);
    expect(tierOfTopic(tiers, 'orders')).toBeUndefined();
  });
});
