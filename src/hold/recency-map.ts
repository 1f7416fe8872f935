/**
 * The release lanes' map of producers (./release-lanes.ts), kept in last-use order (an entry is
 * re-inserted on use) and pruned from its oldest end: an idle entry past its time goes; past
 * `maxIdle` entries the oldest idle ones go anyway (a producer not seen among the last maxIdle
 * has no catch-up left worth spreading); a busy entry (messages waiting) is kept and moved
 * behind, a couple per call. The oldest end is read with one live iterator kept across calls:
 * a new iterator per call would step again over every entry deleted at the front. Amortized
 * O(1) per call. (Not an LRU cache: busy entries are never evicted.)
 */
export interface RecencyMap<V extends { used: number }> {
  get(id: string): V | undefined;
  has(id: string): boolean;
  /** Moves `value` to the newest end under `id`, after pruning the oldest end. */
  use(id: string, value: V, now: number): void;
  values(): IterableIterator<V>;
  size(): number;
}

export const createRecencyMap = <V extends { used: number }>({ maxIdle, idle, expired }: {
  maxIdle: number;
  /** Whether an entry holds nothing (no message waiting, none in flight). */
  idle(value: V): boolean;
  /** Whether an idle entry is past its time at `now`. */
  expired(value: V, now: number): boolean;
}): RecencyMap<V> => {
  const entries = new Map<string, V>();
  let uses = 0;
  let cursor: Iterator<[string, V]> | undefined;
  let peeked: { id: string; value: V; used: number } | undefined;
  const oldest = (): { id: string; value: V } | undefined => {
    for (;;) {
      if (peeked && entries.get(peeked.id) === peeked.value && peeked.value.used === peeked.used) return peeked;
      cursor ??= entries.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        peeked = undefined;
        return undefined;
      }
      peeked = { id: next.value[0], value: next.value[1], used: next.value[1].used };
    }
  };
  const touch = (id: string, value: V): void => {
    uses += 1;
    value.used = uses;
    entries.delete(id);
    entries.set(id, value);
  };
  const prune = (now: number): void => {
    let moved = 0;
    for (let entry = oldest(); entry; entry = oldest()) {
      const { id, value } = entry;
      const quiet = idle(value);
      if (quiet && expired(value, now)) entries.delete(id);
      else if (entries.size < maxIdle) return; // room for the entry being used
      else if (quiet) entries.delete(id);
      else if (++moved > 2) return;
      else touch(id, value);
    }
  };
  return {
    get: (id) => entries.get(id),
    has: (id) => entries.has(id),
    use(id, value, now) {
      entries.delete(id);
      prune(now);
      touch(id, value);
    },
    values: () => entries.values(),
    size: () => entries.size,
  };
};
