/**
 * Bounds per-producer metric labels: at most `size` producers carry their own label, the rest
 * share `other`. Membership follows traffic: a Space-Saving sketch (bounded memory, Metwally et
 * al.) estimates the counts of unlabelled producers; one that overtakes the smallest labelled
 * producer takes its place. The evicted producer's series is folded into `other` by the caller,
 * so the sum over all labels never goes down. Pure and synchronous; no prom-client here.
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

/**
 * A Space-Saving sketch of `capacity` counters: a newcomer replaces the smallest counter and
 * inherits its count as possible error. Returns the guaranteed count (count − error), so one-off
 * ids never look heavy however many of them pass.
 */
const createSketch = (capacity: number) => {
  const counters = new Map<string, Counter>();
  return {
    add(key: string, n: number): number {
      const known = counters.get(key);
      if (known !== undefined) {
        known.count += n;
        return known.count - known.error;
      }
      let base = 0;
      if (counters.size >= capacity) {
        const min = minEntry(counters, (c) => c.count);
        if (min) {
          counters.delete(min[0]);
          base = min[1];
        }
      }
      counters.set(key, { count: base + n, error: base });
      return n;
    },
    take(key: string): void {
      counters.delete(key);
    },
  };
};

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
    if (total <= floor) return { label: OTHER };
    const min = minEntry(labelled, (n) => n);
    if (!min) return { label: OTHER };
    floor = min[1];
    if (total <= min[1]) return { label: OTHER };
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
