import { createRangeProgress } from '../../../src/drain/range-progress';

const ranges = [
  { topic: 't', partition: 0, from: 2, end: 5 },
  { topic: 't', partition: 1, from: 0, end: 0 },
];

describe('when a drain consumes fixed ranges', () => {
  it('takes messages below the end offset seen at start only', () => {
    const p = createRangeProgress(ranges);
    expect(p.accept('t', 0, 4)).toBe(true);
    expect(p.accept('t', 0, 5)).toBe(false);
    expect(p.accept('t', 1, 0)).toBe(false);
    expect(p.accept('other', 0, 0)).toBe(false);
  });

  it('is done once every assigned partition is resolved to its end and nothing is in flight', () => {
    const p = createRangeProgress(ranges);
    expect(p.done(0)).toBe(false);
    p.assigned([{ topic: 't', partitions: [0, 1] }]);
    expect(p.done(0)).toBe(false);
    p.resolved('t', 0, 4);
    expect(p.done(1)).toBe(false);
    expect(p.done(0)).toBe(true);
  });

  it('stops at max messages, counting a message fetched again once', () => {
    const p = createRangeProgress(ranges, 2);
    p.assigned([{ topic: 't', partitions: [0] }]);
    expect(p.accept('t', 0, 2)).toBe(true);
    expect(p.accept('t', 0, 2)).toBe(true);
    expect(p.accept('t', 0, 3)).toBe(true);
    expect(p.accept('t', 0, 4)).toBe(false);
    expect(p.done(0)).toBe(true);
  });

  it('names the ranges other members own (drain --force beside sidecars)', () => {
    const p = createRangeProgress(ranges);
    p.assigned([{ topic: 't', partitions: [1] }]);
    expect(p.notOurs()).toEqual(['t/0']);
    expect(p.done(0)).toBe(true);
  });
});
