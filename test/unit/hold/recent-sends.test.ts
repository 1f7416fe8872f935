import { createRecentSends } from '../../../src/hold/recent-sends';

describe('the process\'s count of each producer\'s recent sends', () => {
  it('counts at least every send of the last second, and forgets what is two seconds old', () => {
    const recent = createRecentSends();
    for (const at of [10_100, 10_500, 10_900, 11_200]) recent.add('p', at);
    expect(recent.inLastSecond('p', 11_250)).toBe(4); // 10,100 lies more than a second back: counted all the same (the second before)
    expect(recent.inLastSecond('p', 11_999)).toBe(4);
    expect(recent.inLastSecond('p', 12_000)).toBe(1); // the second of 11,200 is the one before now
    expect(recent.inLastSecond('p', 13_000)).toBe(0);
    expect(recent.inLastSecond('q', 11_250)).toBe(0);
  });

  it('keeps the second before when a new one begins, and drops it when a second was skipped', () => {
    const recent = createRecentSends();
    recent.add('p', 1_000);
    recent.add('p', 1_500);
    recent.add('p', 2_100);
    expect(recent.inLastSecond('p', 2_100)).toBe(3);
    recent.add('p', 4_000);
    expect(recent.inLastSecond('p', 4_000)).toBe(1);
  });

  it('counts at most maxProducers, and for two seconds after one was refused a producer it has no count of is unknown', () => {
    const recent = createRecentSends({ maxProducers: 2 });
    recent.add('a', 1_000);
    recent.add('b', 1_000);
    recent.add('c', 1_100); // no room: refused
    expect(recent.size()).toBe(2);
    expect(recent.inLastSecond('c', 1_100)).toBeUndefined();
    expect(recent.inLastSecond('d', 2_900)).toBeUndefined();
    expect(recent.inLastSecond('a', 1_100)).toBe(1); // those counted stay known
    // Three seconds on, the old counts are dropped as a new producer comes: room again.
    recent.add('c', 3_000);
    expect(recent.size()).toBe(1);
    expect(recent.inLastSecond('d', 3_000)).toBe(0);
    expect(recent.inLastSecond('c', 3_000)).toBe(1);
  });

  it('does not answer for a producer counted from the second after one was refused until that second is past (it may have been the one refused)', () => {
    const recent = createRecentSends({ maxProducers: 1 });
    recent.add('a', 1_000);
    recent.add('b', 1_500); // refused
    recent.add('b', 2_200); // room again (a's count is a second old only at 3,000: still kept) — refused again
    expect(recent.inLastSecond('b', 2_300)).toBeUndefined();
    recent.add('b', 3_100); // a's count dropped: counted from here, but its sends of 2,200 were not
    expect(recent.inLastSecond('b', 3_200)).toBeUndefined();
    recent.add('b', 4_100);
    expect(recent.inLastSecond('b', 4_200)).toBe(2);
  });
});
