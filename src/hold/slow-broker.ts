/**
 * Whether the broker is slow for good: most of its produce requests of the last ten seconds
 * took longer than a given time (./second-rule.ts: the second rule's slack, 100 ms).
 *
 * With one request in flight per partition (src/produce/batch-sender.ts), what a lane sends
 * while a request is answered goes in the next one, and the broker appends it all at once. A
 * second of appends then holds a second of releases and the time the request that opens it took.
 * Past the slack, the second rule counted at the answers holds the producer below its rate, and
 * the broker still appends in bunches: a producer at 100/s behind a broker answering in
 * 100–300 ms fell 6 s behind its slots in 30 s, one at 200–400 ms 9–12 s, with 123–139 in its
 * busiest second (a unit model; bench/HISTORY.md, "A slow broker"). Such a broker is measured
 * here, so the second rule counts at the releases instead.
 *
 * A request is the sends answered at one instant; it took as long as the quickest of them (the
 * last one written into it). A stall, a slow spell of a few seconds or a start's slow first
 * requests is not most of ten seconds' requests. A request that took longer than an outage
 * (./release-lanes.ts, STUCK_MS) is the outage rule's, not counted here: after a broker pause of
 * ten seconds the window would hold little else.
 */

/** How long the requests are remembered. */
export const SLOW_WINDOW_MS = 10_000;
/** The share of them that must be slow. */
export const SLOW_SHARE = 0.75;
/** At least this many requests in the window before the broker is judged slow. */
export const SLOW_MIN_REQUESTS = 10;

export interface SlowBroker {
  /** A send released at `released` was answered at `answered`. */
  answered(released: number, answered: number): void;
  /** Whether the broker is slow at `now`, by the requests answered before `now`. */
  slow(now: number): boolean;
}

export const createSlowBroker = (slowMs: number, outageMs = Infinity): SlowBroker => {
  // One entry a second with requests answered in it, oldest first: its second, its requests, how many were slow.
  const seconds: number[] = [];
  const requests: number[] = [];
  const slowOnes: number[] = [];
  let instant = NaN;
  let quickest = Infinity;
  let verdict = false;
  /** The verdict holds until then (no request answered in a window: not slow). */
  let until = -Infinity;

  /** The request answered at `instant` is complete (a later answer came). */
  const close = (): void => {
    if (quickest > outageMs) return;
    const second = Math.floor(instant / 1000);
    if (seconds[seconds.length - 1] !== second) {
      seconds.push(second);
      requests.push(0);
      slowOnes.push(0);
    }
    requests[requests.length - 1] += 1;
    if (quickest > slowMs) slowOnes[slowOnes.length - 1] += 1;
    let old = 0;
    while (old < seconds.length && seconds[old] <= second - SLOW_WINDOW_MS / 1000) old += 1;
    seconds.splice(0, old);
    requests.splice(0, old);
    slowOnes.splice(0, old);
    let n = 0;
    let slow = 0;
    for (let i = 0; i < requests.length; i += 1) {
      n += requests[i];
      slow += slowOnes[i];
    }
    verdict = n >= SLOW_MIN_REQUESTS && slow >= SLOW_SHARE * n;
    until = (second + 1) * 1000 + SLOW_WINDOW_MS;
  };

  return {
    answered(released, answered) {
      if (answered !== instant) {
        if (Number.isFinite(instant)) close();
        instant = answered;
        quickest = Infinity;
      }
      quickest = Math.min(quickest, answered - released);
    },
    slow: (now) => verdict && now < until,
  };
};
