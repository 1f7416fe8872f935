import { mergeReports, targetsOf, type Claimant } from '../../../src/budget/budget-targets';
import type { DemandReport } from '../../../src/budget/demand-meter';

const report = (producer: string, rate: number, backlogged = true, bytes = 0): DemandReport => ({ producer, rate, bytes, backlogged });
const own = (weight = 1, min = 0, rate = 500): Claimant => ({ rate, bytes: Infinity, weight, min });

describe('budget targets', () => {
  it('adds the replicas\' reports up, backlogged when any replica says so', () => {
    const merged = mergeReports([[report('a', 100, false)], [report('a', 50, true), report('b', 10, false)]]);
    expect(merged.get('a')).toEqual({ producer: 'a', rate: 150, bytes: 0, backlogged: true });
    expect(merged.get('b')?.backlogged).toBe(false);
  });

  it('divides a contended budget by weight among backlogged producers', () => {
    const demands = mergeReports([[report('a', 300), report('b', 300), report('c', 300)]]);
    const weights: Record<string, number> = { a: 1, b: 1, c: 2 };
    const targets = targetsOf({ rate: 300 }, demands, (p) => own(weights[p]));
    expect([...targets.rate.values()].map(Math.round)).toEqual([75, 75, 150]);
  });

  it('asks for what a producer offered plus headroom when it is not backlogged, the rest going to the others', () => {
    const demands = mergeReports([[report('slow', 20, false), report('busy', 300)]]);
    const targets = targetsOf({ rate: 300 }, demands, () => own());
    expect(targets.rate.get('slow')).toBeCloseTo(23, 6);
    expect(targets.rate.get('busy')).toBeCloseTo(277, 6);
  });

  it('leaves out producers without a claim (unlimited, shadow)', () => {
    const targets = targetsOf({ rate: 300 }, mergeReports([[report('free', 300), report('a', 300)]]), (p) => (p === 'free' ? undefined : own()));
    expect([...targets.rate.keys()]).toEqual(['a']);
  });

  it('divides bytes when the budget has bytes', () => {
    const demands = mergeReports([[report('a', 10, true, 1000), report('b', 10, true, 1000)]]);
    const targets = targetsOf({ rate: 300, bytes: 1000 }, demands, () => own());
    expect(targets.bytes.get('a')).toBeCloseTo(500, 6);
  });
});
