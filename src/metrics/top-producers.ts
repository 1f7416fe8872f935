/**
 * Bounds per-producer metric labels: at most `size` producers carry their own label, the rest
 * share `other`. Membership follows traffic: a Space-Saving sketch (bounded memory, Metwally et
 * al.) estimates the counts of unlabelled producers; one that overtakes the smallest labelled
 * producer takes its place. The evicted producer's series is folded into `other` by the caller,
 * so the sum over all labels never goes down. Pure and synchronous; no prom-client here.
 */
import { type HeapEntry, MinHeap } from '../hold/min-heap';

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
 * ids never look heavy however many of them pass. The smallest counter is found in O(log
 * capacity), not by a scan (a flood of one-off ids replaces it at every id): counters are filed
 * by count, a set per count, and the counts sit in a min-heap; a count no longer filed is dropped
 * when it surfaces, and the heap is rebuilt when such counts outnumber the filed ones.
 */
const createSketch = (capacity: number) => {
  const counters = new Map<string, Counter>();
  const byCount = new Map<number, Set<string>>();
  const heap = new MinHeap<HeapEntry>();
  const file = (key: string, count: number): void => {
    let keys = byCount.get(count);
    if (keys === undefined) {
      byCount.set(count, (keys = new Set()));
      heap.push({ at: count, seq: 0 });
      if (heap.size > 4 * byCount.size + 16) {
        heap.drain();
        for (const c of byCount.keys()) heap.push({ at: c, seq: 0 });
      }
    }
    keys.add(key);
  };
  const unfile = (key: string, count: number): void => {
    const keys = byCount.get(count);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) byCount.delete(count);
  };
  const smallest = (): [string, number] | undefined => {
    for (let top = heap.peek(); top !== undefined; heap.pop(), top = heap.peek()) {
      const keys = byCount.get(top.at);
      if (keys !== undefined) return [keys.values().next().value as string, top.at];
    }
    return undefined;
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
