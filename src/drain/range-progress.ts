/**
 * Where a `sluice drain` run stands on its fixed offset ranges (pure): which messages it takes
 * (below the end offset seen at start, at most `max` in all, each counted once even when
 * fetched again), how far each partition was resolved, and whether it is done — every
 * partition assigned to this member at its end (or `max` taken) and nothing in flight.
 */
import { type PartitionRange, rangeKey } from './drain-plan';

export interface RangeProgress {
  /** Whether to take this message; false means stop this partition here. */
  accept(topic: string, partition: number, offset: number): boolean;
  resolved(topic: string, partition: number, offset: number): void;
  assigned(partitions: { topic: string; partitions: number[] }[]): void;
  /** Ranges no partition of this member covers (other members of the group own them). */
  notOurs(): string[];
  done(inFlight: number): boolean;
}

export const createRangeProgress = (ranges: readonly PartitionRange[], max?: number): RangeProgress => {
  const byKey = new Map(ranges.map((r) => [rangeKey(r.topic, r.partition), r]));
  const next = new Map<string, number>();
  const taken = new Set<string>();
  let mine: string[] | undefined;
  const full = (): boolean => max !== undefined && taken.size >= max;
  const atEnd = (key: string): boolean => {
    const range = byKey.get(key);
    return !range || (next.get(key) ?? range.from) >= range.end;
  };
  return {
    accept(topic, partition, offset) {
      const key = rangeKey(topic, partition);
      const range = byKey.get(key);
      const id = `${key}/${offset}`;
      if (!range || offset >= range.end || (full() && !taken.has(id))) return false;
      taken.add(id);
      return true;
    },
    resolved(topic, partition, offset) {
      next.set(rangeKey(topic, partition), offset + 1);
    },
    assigned(partitions) {
      mine = partitions.flatMap(({ topic, partitions: ps }) => ps.map((p) => rangeKey(topic, p)));
    },
    notOurs: () => [...byKey.keys()].filter((key) => !(mine ?? []).includes(key)),
    done: (inFlight) => mine !== undefined && inFlight === 0 && (full() || mine.every(atEnd)),
  };
};
