import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { observeMany } from '../../../src/metrics/observe-many';
import { RELEASE_DELAY_BUCKETS } from '../../../src/metrics/prom-metrics';

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

const histogram = (): Histogram => new Histogram({ name: 'h_seconds', help: 'h', buckets: RELEASE_DELAY_BUCKETS, registers: [new Registry()] });
const samples = async (h: Histogram): Promise<Sample[]> => (await h.get()).values as Sample[];

describe('observeMany', () => {
  it('gives what as many calls of observe give: every bucket and the count exactly, the sum to rounding', async () => {
    const value = fc.oneof(fc.constantFrom(0, ...RELEASE_DELAY_BUCKETS), fc.double({ min: 0, max: 100_000, noNaN: true }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(value, fc.integer({ min: 1, max: 500 })), { maxLength: 20 }), async (runs) => {
        const many = histogram();
        const one = histogram();
        for (const [v, count] of runs) {
          observeMany(many, v, count);
          for (let i = 0; i < count; i += 1) one.observe(v);
        }
        const [got, want] = [await samples(many), await samples(one)];
        expect(got.map((s) => s.metricName)).toEqual(want.map((s) => s.metricName));
        got.forEach((s, i) => {
          expect(s.labels).toEqual(want[i].labels);
          if (s.metricName?.endsWith('_sum')) expect(Math.abs(s.value - want[i].value)).toBeLessThanOrEqual(1e-12 * Math.max(1, want[i].value));
          else expect(s.value).toBe(want[i].value);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('observes one at a time when the histogram is not as it expects (another prom-client)', () => {
    const seen: number[] = [];
    const other = { observe: (v: number) => void seen.push(v) } as unknown as Histogram;
    observeMany(other, 0.25, 4);
    expect(seen).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it('refuses a value observe refuses', () => {
    expect(() => observeMany(histogram(), Number.NaN, 3)).toThrow(/not a valid number/);
  });
});
