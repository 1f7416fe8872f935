import fc from 'fast-check';
import { OTHER, createTopProducers } from '../../../src/metrics/top-producers';

describe('top producers', () => {
  describe('when fewer producers than labels are seen', () => {
    it('gives each its own label', () => {
      const top = createTopProducers({ size: 3 });
      expect(['a', 'b', 'c'].map((p) => top.admit(p, 1).label)).toEqual(['a', 'b', 'c']);
    });
  });

  describe('when the labels are taken', () => {
    it('counts a newcomer as other', () => {
      const top = createTopProducers({ size: 2 });
      top.admit('a', 5);
      top.admit('b', 5);
      expect(top.admit('c', 1)).toEqual({ label: OTHER });
    });

    it('hands the smallest label to a producer that overtakes it, naming the evicted one', () => {
      const top = createTopProducers({ size: 2 });
      top.admit('a', 100);
      top.admit('b', 3);
      const admissions = Array.from({ length: 10 }, () => top.admit('heavy', 1));
      expect(admissions.some((a) => a.label === 'heavy' && a.evicted === 'b')).toBe(true);
      expect([...top.labelled()].sort()).toEqual(['a', 'heavy']);
    });
  });

  describe('when more producers send alike than there are labels', () => {
    it('lets producers sending alike, more of them than labels, keep their labels rather than trade them at every count', () => {
      const top = createTopProducers({ size: 50 });
      let trades = 0;
      for (let i = 0; i < 200_000; i += 1) if (top.admit(`producer-${(i * 7919) % 100}`, 1 + (i % 9)).evicted !== undefined) trades += 1;
      // Without the tenth's margin: 65,349 trades.
      expect(trades).toBeLessThan(1000);
      expect(top.labelled()).toHaveLength(50);
    });
  });

  describe('when a million one-off producer ids pass', () => {
    it('keeps the heavy producers labelled and never labels more than the limit', () => {
      const top = createTopProducers({ size: 5 });
      const heavy = ['h1', 'h2', 'h3', 'h4', 'h5'];
      const labels = new Set<string>();
      for (let i = 0; i < 1_000_000; i += 1) {
        if (i % 100 === 0) for (const h of heavy) labels.add(top.admit(h, 1).label);
        labels.add(top.admit(`one-off-${i}`, 1).label);
      }
      expect([...top.labelled()].sort()).toEqual(heavy);
      expect(labels.size).toBeLessThanOrEqual(5 + 5 + 1); // the first five one-offs, then the heavies, plus other
    });
  });

  describe('whatever the traffic', () => {
    it('never labels more producers than the limit and never labels "other" as a producer', () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'other', 'f'), fc.integer({ min: 1, max: 20 })), { maxLength: 300 }), (events) => {
          const top = createTopProducers({ size: 3, sketchSize: 4 });
          for (const [p, n] of events) {
            const { label } = top.admit(p, n);
            expect([p, OTHER]).toContain(label);
          }
          expect(top.labelled().length).toBeLessThanOrEqual(3);
          expect(top.labelled()).not.toContain(OTHER);
        }),
      );
    });
  });
});
