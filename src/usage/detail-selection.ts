/**
 * Which producers keep a usage history of their own, so that ids chosen by clients cost Redis a
 * bounded amount (docs/design.md "Any record, any id"). A producer keeps its own history when
 *  - it has a rule of its own in the quota file: an exact id (the operator wrote it, so such
 *    producers are few). A glob rule gives no detail by itself: it matches ids clients choose,
 *    and a flood of random ids can match it; its producers compete with everyone else;
 *  - or it is one of the `size` busiest of the others by messages counted (offered, forwarded,
 *    delayed, overflowed and dead-lettered: a producer whose backlog the drainer forwards is
 *    busy too, though it offers nothing new), as the metrics pick
 *    their per-producer labels (the same Space-Saving top-k, src/metrics/top-producers.ts): a
 *    producer keeps its place until a busier one overtakes it, and one-off ids never look busy.
 * Every other producer is counted together under `other` (OTHER), whose history `sluice usage
 * other` shows. A producer whose id is `other` is counted there too, as in the metrics.
 *
 * The choice is made once per flush, after the flush's counts are admitted, so at most `size`
 * producers without a rule of their own are written in detail per flush. Pure and synchronous.
 */
import { OTHER, createTopProducers } from '../metrics/top-producers';
import { MESSAGE_COUNTERS, USAGE_COUNTERS, type UsageCounts, zeroCounts } from './usage-counters';

export { OTHER };

/** Producers without a rule of their own kept in detail (the busiest), per replica. */
export const DETAILED_PRODUCERS = 100;

/** Counts of one producer by the epoch ms of the second they were counted in. */
export type CountsBySecond = ReadonlyMap<number, UsageCounts>;

export interface DetailSelectionOptions {
  /** true for a producer with a rule of its own (an exact id in the quota file); default none. */
  hasOwnRule?: (producer: string) => boolean;
  /** default DETAILED_PRODUCERS */
  size?: number;
}

export interface FlushSplit {
  /** producers written under their own id, with their counts. */
  detailed: Array<[string, CountsBySecond]>;
  /** the counts of every other producer added up per second: written under OTHER (empty: none). */
  tail: Map<number, UsageCounts>;
  /** how many producers the tail holds. */
  tailProducers: number;
}

export interface DetailSelection {
  /** Splits one flush's counts into the producers kept in detail and the tail. */
  split(batch: Iterable<[string, CountsBySecond]>): FlushSplit;
}

const messagesOf = (counts: CountsBySecond): number => {
  let sum = 0;
  for (const c of counts.values()) for (const field of MESSAGE_COUNTERS) sum += c[field];
  return sum;
};

const addInto = (tail: Map<number, UsageCounts>, counts: CountsBySecond): void => {
  for (const [second, c] of counts) {
    let sum = tail.get(second);
    if (!sum) tail.set(second, (sum = zeroCounts()));
    for (const field of USAGE_COUNTERS) sum[field] += c[field];
  }
};

export const createDetailSelection = ({ hasOwnRule = () => false, size = DETAILED_PRODUCERS }: DetailSelectionOptions = {}): DetailSelection => {
  const top = createTopProducers({ size });
  return {
    split(batch) {
      const entries = [...batch];
      const own = entries.map(([producer]) => producer !== OTHER && hasOwnRule(producer));
      // Admit the whole flush first: a producer overtaken later in the same flush is not in detail.
      entries.forEach(([producer, counts], i) => {
        const messages = messagesOf(counts);
        if (!own[i] && messages > 0) top.admit(producer, messages);
      });
      const split: FlushSplit = { detailed: [], tail: new Map(), tailProducers: 0 };
      entries.forEach(([producer, counts], i) => {
        if (own[i] || (producer !== OTHER && top.has(producer))) split.detailed.push([producer, counts]);
        else {
          addInto(split.tail, counts);
          split.tailProducers += 1;
        }
      });
      return split;
    },
  };
};
