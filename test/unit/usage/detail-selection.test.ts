/**
 * Which producers keep a usage history of their own (src/usage/detail-selection.ts): those with a
 * rule of their own and the busiest up to a bound; everyone else is added up under `other`.
 */
import fc from 'fast-check';
import { createDetailSelection, type CountsBySecond, OTHER } from '../../../src/usage/detail-selection';
import { USAGE_COUNTERS, type UsageCounts, zeroCounts } from '../../../src/usage/usage-counters';

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);

/** One producer's counts: `offered` messages (each forwarded, 10 bytes) in the second at T0 + `second` s. */
const sent = (offered: number, second = 0): CountsBySecond =>
  new Map([[T0 + second * 1000, { ...zeroCounts(), offered, forwarded: offered, forwardedBytes: 10 * offered }]]);

const flush = (entries: Array<[string, number]>): Array<[string, CountsBySecond]> => entries.map(([p, n]) => [p, sent(n)]);

const names = (split: { detailed: Array<[string, CountsBySecond]> }): string[] => split.detailed.map(([p]) => p).sort();

const sum = (maps: Iterable<CountsBySecond>): UsageCounts => {
  const total = zeroCounts();
  for (const map of maps) for (const counts of map.values()) for (const f of USAGE_COUNTERS) total[f] += counts[f];
  return total;
};

describe('choosing the producers kept in detail', () => {
  describe('when fewer producers than the bound are seen', () => {
    it('keeps every one in detail and the tail empty', () => {
      const selection = createDetailSelection({ size: 3 });
      const split = selection.split(flush([['a', 1], ['b', 2], ['c', 3]]));
      expect(names(split)).toEqual(['a', 'b', 'c']);
      expect(split.tail.size).toBe(0);
      expect(split.tailProducers).toBe(0);
    });
  });

  describe('when more producers than the bound send', () => {
    it('keeps the busiest in detail and adds the others up per second under other', () => {
      const selection = createDetailSelection({ size: 2 });
      const split = selection.split([['q1', sent(1)], ['big', sent(50)], ['q2', sent(1, 1)], ['bigger', sent(80)], ['q3', sent(2, 1)]]);
      expect(names(split)).toEqual(['big', 'bigger']);
      expect(split.tailProducers).toBe(3);
      expect([...split.tail.keys()]).toEqual([T0, T0 + 1000]);
      expect(split.tail.get(T0)).toMatchObject({ offered: 1, forwarded: 1, forwardedBytes: 10 });
      expect(split.tail.get(T0 + 1000)).toMatchObject({ offered: 3, forwarded: 3, forwardedBytes: 30 });
    });

    it('keeps a producer in detail from flush to flush until a busier one overtakes it', () => {
      const selection = createDetailSelection({ size: 1 });
      expect(names(selection.split(flush([['steady', 10]])))).toEqual(['steady']);
      expect(names(selection.split(flush([['steady', 1], ['once', 5]])))).toEqual(['steady']);
      // the newcomer's total (5 + 20) passes steady's (11): it takes the place
      expect(names(selection.split(flush([['steady', 1], ['once', 20]])))).toEqual(['once']);
    });

    it('counts a producer overtaken later in the same flush in the tail, never in both', () => {
      const selection = createDetailSelection({ size: 1 });
      const split = selection.split(flush([['first', 1], ['second', 5]]));
      expect(names(split)).toEqual(['second']);
      expect(split.tail.get(T0)).toMatchObject({ offered: 1 });
    });
  });

  describe('when a producer has a rule of its own', () => {
    it('keeps it in detail whatever its traffic, without taking a place of the busiest', () => {
      const selection = createDetailSelection({ size: 1, hasOwnRule: (p) => p === 'billing' });
      const split = selection.split(flush([['busy', 100], ['billing', 1], ['quiet', 2]]));
      expect(names(split)).toEqual(['billing', 'busy']);
      expect(split.tailProducers).toBe(1);
    });
  });

  describe('when a producer is called other', () => {
    it('counts it with the tail, even with a rule of its own', () => {
      const selection = createDetailSelection({ size: 5, hasOwnRule: (p) => p === OTHER });
      const split = selection.split(flush([[OTHER, 3], ['a', 1]]));
      expect(names(split)).toEqual(['a']);
      expect(split.tail.get(T0)).toMatchObject({ offered: 3 });
    });
  });

  describe('when a flood of one-off ids passes', () => {
    it('keeps at most the bound in detail per flush, and no one-off id once the places are taken', () => {
      const selection = createDetailSelection({ size: 100 });
      const first = selection.split(Array.from({ length: 20_000 }, (_, i): [string, CountsBySecond] => [`flood-${i}`, sent(1)]));
      expect(first.detailed).toHaveLength(100);
      expect(first.tailProducers).toBe(19_900);
      expect(first.tail.get(T0)!.offered).toBe(19_900);
      const second = selection.split(Array.from({ length: 20_000 }, (_, i): [string, CountsBySecond] => [`flood2-${i}`, sent(1)]));
      expect(second.detailed).toHaveLength(0);
      expect(second.tail.get(T0)!.offered).toBe(20_000);
    });

    it('still finds a producer busy every second among them', () => {
      const selection = createDetailSelection({ size: 10 });
      let last: string[] = [];
      for (let s = 0; s < 30; s += 1) {
        const batch = Array.from({ length: 2000 }, (_, i): [string, CountsBySecond] => [`flood-${s}-${i}`, sent(1, s)]);
        batch.push(['steady', sent(200, s)]);
        last = names(selection.split(batch));
      }
      expect(last).toContain('steady');
    });
  });

  describe('whatever the traffic', () => {
    it('writes every count once, in detail or in the tail, and at most the bound without a rule of their own', () => {
      const producer = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', OTHER, 'own');
      const batch = fc.uniqueArray(fc.tuple(producer, fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 3 })), { selector: ([p]) => p, maxLength: 9 });
      fc.assert(
        fc.property(fc.array(batch, { maxLength: 8 }), (flushes) => {
          const selection = createDetailSelection({ size: 3, hasOwnRule: (p) => p === 'own' });
          for (const entries of flushes) {
            const input = entries.map(([p, n, s]): [string, CountsBySecond] => [p, sent(n, s)]);
            const split = selection.split(input);
            expect(sum([...split.detailed.map(([, c]) => c), split.tail])).toEqual(sum(input.map(([, c]) => c)));
            expect(split.detailed.length + split.tailProducers).toBe(input.length);
            expect(split.detailed.filter(([p]) => p !== 'own').length).toBeLessThanOrEqual(3);
            expect(names(split)).not.toContain(OTHER);
          }
        }),
      );
    });
  });
});
