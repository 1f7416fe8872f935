/**
 * Bounds per-producer metric labels: at most `size` producers carry their own label, the rest
 * share `other`. Membership follows traffic: a Space-Saving sketch (bounded memory, Metwally et
 * al.) estimates the counts of unlabelled producers; one that overtakes the smallest labelled
 * producer by a tenth (OVERTAKE) takes its place. The evicted producer's series is folded into
 * `other` by the caller, so the sum over all labels never goes down. Pure and synchronous; no
 * prom-client here.
 */
export const OTHER = 'other';

export interface Admission {
  /** the label to count this producer under. */
  label: string;
  /** a producer that lost its label to make room (its series moves into `other`). */
  evicted?: string;
}

export interface TopProducers {
  admit(producer: string, count: number): Admission;
  /** whether a producer holds a label now (nothing is counted). */
  has(producer: string): boolean;
  labelled(): readonly string[];
}

const minEntry = <V>(entries: Map<string, V>, valueOf: (v: V) => number): [string, number] | undefined => {
  let min: [string, number] | undefined;
  for (const [key, v] of entries) if (min === undefined || valueOf(v) < min[1]) min = [key, valueOf(v)];
  return min;
};

interface Counter {
  count: number; // an over-estimate
  error: number; // by at most this much
}

/** Where `x` is or would go in the ascending `sorted` (binary search). */
const indexIn = (sorted: readonly number[], x: number): number => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * A Space-Saving sketch of `capacity` counters: a newcomer replaces the smallest counter and
 * inherits its count as possible error. Returns the guaranteed count (count − error), so one-off
 * ids never look heavy however many of them pass. The smallest counter is found without a scan
 * (a flood of one-off ids replaces it at every id): counters are filed by count, a set per
 * count, and the distinct counts are kept sorted (at most `capacity` of them, a handful in a
 * flood, where every counter holds nearly the same count).
 */
const createSketch = (capacity: number) => {
  const counters = new Map<string, Counter>();
  const byCount = new Map<number, Set<string>>();
  const counts: number[] = []; // the keys of byCount, ascending
  const file = (key: string, count: number): void => {
    let keys = byCount.get(count);
    if (keys === undefined) {
      byCount.set(count, (keys = new Set()));
      counts.splice(indexIn(counts, count), 0, count);
    }
    keys.add(key);
  };
  const unfile = (key: string, count: number): void => {
    const keys = byCount.get(count);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size > 0) return;
    byCount.delete(count);
    counts.splice(indexIn(counts, count), 1);
  };
  const smallest = (): [string, number] | undefined => {
    const keys = counts.length === 0 ? undefined : byCount.get(counts[0]);
    return keys === undefined ? undefined : [keys.values().next().value as string, counts[0]];
  };
  return {
    add(key: string, n: number): number {
      const known = counters.get(key);
      if (known !== undefined) {
        unfile(key, known.count);
        known.count += n;
        file(key, known.count);
        return known.count - known.error;
      }
      let base = 0;
      if (counters.size >= capacity) {
        const min = smallest();
        if (min) {
          counters.delete(min[0]);
          unfile(min[0], min[1]);
          base = min[1];
        }
      }
      counters.set(key, { count: base + n, error: base });
      file(key, base + n);
      return n;
    },
    take(key: string): void {
      const known = counters.get(key);
      if (known === undefined) return;
      counters.delete(key);
      unfile(key, known.count);
    },
  };
};

/**
 * A producer takes the smallest label only once its count passes that label's by this factor:
 * producers sending alike (more of them than labels) would otherwise trade labels at every count
 * (a third of the counts with 100 producers and 50 labels), each trade a series gone and one new.
 */
export const OVERTAKE = 1.1;

export const createTopProducers = ({ size, sketchSize = Math.max(4 * size, 64) }: { size: number; sketchSize?: number }): TopProducers => {
  const labelled = new Map<string, number>(); // producer → estimated total
  const sketch = createSketch(sketchSize);
  let floor = 0; // a lower bound of the smallest labelled total (totals only grow)

  const promote = (producer: string, total: number): Admission => {
    if (size <= 0) return { label: OTHER };
    if (labelled.size < size) {
      labelled.set(producer, total);
      return { label: producer };
    }
    if (total <= floor * OVERTAKE) return { label: OTHER };
    const min = minEntry(labelled, (n) => n);
    if (!min) return { label: OTHER };
    floor = min[1];
    if (total <= min[1] * OVERTAKE) return { label: OTHER };
    labelled.delete(min[0]);
    sketch.add(min[0], min[1]);
    labelled.set(producer, total);
    return { label: producer, evicted: min[0] };
  };

  return {
    admit(producer, count) {
      if (producer === OTHER) return { label: OTHER };
      const total = labelled.get(producer);
      if (total !== undefined) {
        labelled.set(producer, total + count);
        return { label: producer };
      }
      const estimate = sketch.add(producer, count);
      const admission = promote(producer, estimate);
      if (admission.label === producer) sketch.take(producer);
      return admission;
    },
    has: (producer) => labelled.has(producer),
    labelled: () => [...labelled.keys()],
  };
};
