/**
 * How many messages of each producer this process sent in about the last second, lane or not
 * (./release-lanes.ts): what tells a producer far below its rate from one at it. A message let
 * through at once by a producer without a lane leaves without one (none is made for it), so a
 * lane made now has not seen them; this count has.
 *
 * Counted in whole seconds of the clock, the current one and the one before, so a count is at
 * least the sends of the last second (at most those of the last two). At most `maxProducers`
 * are counted at once: past it a new producer is not, and for two seconds after that a producer
 * without a count is unknown (`undefined`) rather than silent — the caller then takes it for not
 * far below.
 */
import { SECOND_MS } from './second-rule';

export interface RecentSends {
  /** `producer` sent one message at `now`. */
  add(producer: string, now: number): void;
  /** Its sends in the last second, or a little more (the second before it too); undefined when it may not have been counted. */
  inLastSecond(producer: string, now: number): number | undefined;
  /** Producers counted (at most maxProducers). */
  size(): number;
}

interface Count {
  /** The whole second (`now / SECOND_MS`, floored) `current` counts. */
  second: number;
  current: number;
  /** The second before it. */
  before: number;
  /** The first second whose query it answers: one later when, as it was made, a producer had just been refused (this one, perhaps). */
  from: number;
}

/** About 10,000 × 100 bytes of heap at most: a flood of new producer ids costs no more. */
export const RECENT_SENDS_MAX_PRODUCERS = 10_000;

export const createRecentSends = ({ maxProducers = RECENT_SENDS_MAX_PRODUCERS }: { maxProducers?: number } = {}): RecentSends => {
  const counts = new Map<string, Count>();
  let swept = -Infinity;
  /** The last second a producer was not counted for want of room. */
  let refused = -Infinity;
  const secondOf = (now: number): number => Math.floor(now / SECOND_MS);
  /** Once a second (the first send of each): counts of two seconds ago or older say nothing any more. */
  const sweep = (second: number): void => {
    if (second === swept) return;
    swept = second;
    for (const [producer, count] of counts) if (count.second < second - 1) counts.delete(producer);
  };
  return {
    add(producer, now) {
      const second = secondOf(now);
      sweep(second);
      const count = counts.get(producer);
      if (count === undefined) {
        if (counts.size >= maxProducers) refused = second;
        // Room is made only as a second begins (sweep), so this one was refused, if at all, before this second.
        else counts.set(producer, { second, current: 1, before: 0, from: refused >= second - 1 ? second + 1 : second });
        return;
      }
      if (count.second === second) count.current += 1;
      else {
        count.before = count.second === second - 1 ? count.current : 0;
        count.current = 1;
        count.second = second;
      }
    },
    inLastSecond(producer, now) {
      const second = secondOf(now);
      const count = counts.get(producer);
      if (count === undefined) return refused >= second - 1 ? undefined : 0;
      if (second < count.from) return undefined;
      if (count.second < second - 1) return 0;
      return count.second === second ? count.current + count.before : count.current;
    },
    size: () => counts.size,
  };
};
