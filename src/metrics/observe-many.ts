/**
 * `count` observations of one value in a histogram without labels, at the cost of one:
 * prom-client observes one value a call (0.5–0.8 µs each, one call a forwarded message: a sixth
 * of the CPU of the sidecar's own code and libraries at 60,000 messages a second,
 * bench/HISTORY.md 2026-12-05), and the messages of a fetch released together share their delay.
 * The first goes through `observe` (it checks the value and makes the series); the others are
 * added to the same series' bucket, sum and count, prom-client 15's fields —
 * test/unit/metrics/observe-many.test.ts holds them to what `count` calls of `observe` give, and
 * should those fields change, every observation goes through `observe`.
 */
import type { Histogram } from 'prom-client';

interface Series {
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

interface Internals {
  hashMap?: Record<string, Series | undefined>;
  upperBounds?: number[];
}

export const observeMany = (histogram: Histogram, value: number, count: number): void => {
  histogram.observe(value);
  if (count <= 1) return;
  const { hashMap, upperBounds } = histogram as unknown as Internals;
  const series = hashMap?.[''];
  const bound = upperBounds?.find((upper) => value <= upper);
  const known = typeof series?.sum === 'number' && typeof series.count === 'number' && (bound === undefined || typeof series.bucketValues?.[bound] === 'number');
  if (!known || series === undefined) {
    for (let i = 1; i < count; i += 1) histogram.observe(value);
    return;
  }
  const more = count - 1;
  series.sum += value * more;
  series.count += more;
  if (bound !== undefined) series.bucketValues[bound] += more;
};
