/**
 * Whether a destination partition's broker is slow for good: most of the produce requests to it
 * of the last ten seconds took longer than a given time (the second rule's slack, 100 ms:
 * src/hold/second-rule.ts). The sender keeps one for each partition it writes
 * (./batch-sender.ts), and every answer says what it found.
 *
 * With one request in flight per partition, what a lane sends while a request is answered goes
 * in the next one, and the broker appends it all at once. A second of appends then holds a second
 * of releases and the time the request that opens it took. Past the slack, the second rule
 * counted at the answers holds the producer below its rate, and the broker still appends in
 * bunches: a producer at 100/s behind a broker answering in 100–300 ms fell 6 s behind its slots
 * in 30 s, one at 200–400 ms 9–12 s, with 123–139 in its busiest second (a unit model;
 * bench/HISTORY.md, "A slow broker"). Behind a slow partition the second rule counts at the
 * releases instead (src/hold/release-lanes.ts). Per partition, because a cluster's brokers lead
 * different partitions: one slow leader among eight quick ones held every producer without a
 * key (each writes to all eight) at 80 % of its quota while the process's requests were mostly
 * quick (bench/HISTORY.md, "A slow partition among quick ones").
 *
 * A stall, a slow spell of a few seconds or a start's slow first requests is not most of ten
 * seconds' requests. A request that took longer than an outage (src/hold/release-lanes.ts,
 * STUCK_MS) is the outage rule's, not counted here: after a broker pause of ten seconds the
 * window would hold little else.
 */

/** How long the requests are remembered. */
export const SLOW_WINDOW_MS = 10_000;
/** The share of them that must be slow. */
export const SLOW_SHARE = 0.75;
/** At least this many requests in the window before the partition is judged slow. */
export const SLOW_MIN_REQUESTS = 10;

export interface SlowBroker {
  /** A request answered at `answered` took `took` ms (from its write to its answer). */
  request(took: number, answered: number): void;
  /** Whether the broker is slow at `now`, by the requests answered until then. */
  slow(now: number): boolean;
}

export const createSlowBroker = (slowMs: number, outageMs = Infinity): SlowBroker => {
  // One entry a second with requests answered in it, oldest first: its second, its requests, how many were slow.
  const seconds: number[] = [];
  const requests: number[] = [];
  const slowOnes: number[] = [];
  let verdict = false;
  /** The verdict holds until then (no request answered in a window: not slow). */
  let until = -Infinity;

  return {
    request(took, answered) {
      if (took > outageMs) return;
      const second = Math.floor(answered / 1000);
      if (seconds[seconds.length - 1] !== second) {
        seconds.push(second);
        requests.push(0);
        slowOnes.push(0);
      }
      requests[requests.length - 1] += 1;
      if (took > slowMs) slowOnes[slowOnes.length - 1] += 1;
      let old = 0;
      while (old < seconds.length && seconds[old] <= second - SLOW_WINDOW_MS / 1000) old += 1;
      if (old > 0) {
        seconds.splice(0, old);
        requests.splice(0, old);
        slowOnes.splice(0, old);
      }
      let n = 0;
      let slow = 0;
      for (let i = 0; i < requests.length; i += 1) {
        n += requests[i];
        slow += slowOnes[i];
      }
      verdict = n >= SLOW_MIN_REQUESTS && slow >= SLOW_SHARE * n;
      until = (second + 1) * 1000 + SLOW_WINDOW_MS;
    },
    slow: (now) => verdict && now < until,
  };
};
