/**
 * Whether a destination partition's broker is slow (for good, or quick and slow by turns): the
 * produce requests to it of the last ten seconds took longer than a given time (the second
 * rule's slack, 100 ms: src/hold/second-rule.ts) by more, together, than twice that slack of
 * every second of the window (2 s). The sender keeps one for each partition it writes
 * (./batch-sender.ts), and every answer says what it found.
 *
 * With one request in flight per partition, what a lane sends while a request is answered goes
 * in the next one, and the broker appends it all at once. A second of appends then holds a second
 * of releases and the time the request that opens it took. Counted at the answers, each request
 * slower than the slack holds the lane back by the rest of its time, and a lane behind its slots
 * wins back only the slack in each second (it sends at 1.1 × its rate): when the slow requests'
 * time past the slack is well more than that, the producer falls ever further behind, and the
 * broker still appends in bunches. A producer at 100/s behind a broker answering in 100–300 ms fell 6 s
 * behind its slots in 30 s (a unit model; bench/HISTORY.md, "A slow broker"); behind one whose
 * requests were by turns quick (1–5 ms) and slow (50–450 ms), a backlogged producer used 70 % of
 * its quota on the real broker (bench/HISTORY.md, "Latencies that vary"). Behind a slow partition
 * the second rule counts at the releases instead (src/hold/release-lanes.ts). Per partition,
 * because a cluster's brokers lead different partitions: one slow leader among eight quick ones
 * held every producer without a key (each writes to all eight) at 80 % of its quota while the
 * process's requests were mostly quick (bench/HISTORY.md, "A slow partition among quick ones").
 *
 * Twice, because a slow spell costs the lane only where it ends (the requests after it quick):
 * spells of 2 s at 250–350 ms in every 10 s (about 1.3 s past the slack) cost a backlogged
 * producer 3–6 % of its quota counted at the answers, its busiest second within the bound, and
 * counted at the releases 1.5–1.6 × in its busiest second; latencies by turns (about 6 s past
 * the slack) cost it 30 % (bench/HISTORY.md, "Latencies that vary"). A stall, a start's slow
 * first requests or such a spell stays below it. A request that took longer than an outage
 * (src/hold/release-lanes.ts, STUCK_MS) is the outage rule's, not counted here: after a broker
 * pause of ten seconds the window would hold little else.
 */

/** How long the requests are remembered. */
export const SLOW_WINDOW_MS = 10_000;
/** How many times the slack of each second of the window the requests may take past it, together, before the partition is slow. */
export const SLOW_PAST_SLACK = 2;
/** At least this many requests in the window before the partition is judged slow. */
export const SLOW_MIN_REQUESTS = 10;

export interface SlowBroker {
  /** A request answered at `answered` took `took` ms (from its write to its answer). */
  request(took: number, answered: number): void;
  /** Whether the broker is slow at `now`, by the requests answered until then. */
  slow(now: number): boolean;
}

/** `slowMs`: the slack a lane wins back in each second; `outageMs`: requests longer than this are the outage rule's. */
export const createSlowBroker = (slowMs: number, outageMs = Infinity): SlowBroker => {
  // One entry a second with requests answered in it, oldest first: its second, its requests, their ms past `slowMs`.
  const seconds: number[] = [];
  const requests: number[] = [];
  const pastSlack: number[] = [];
  /** What the window's slow requests may take past the slack, together, the partition still counted at the broker. */
  const bearable = SLOW_PAST_SLACK * slowMs * (SLOW_WINDOW_MS / 1000);
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
        pastSlack.push(0);
      }
      requests[requests.length - 1] += 1;
      if (took > slowMs) pastSlack[pastSlack.length - 1] += took - slowMs;
      let old = 0;
      while (old < seconds.length && seconds[old] <= second - SLOW_WINDOW_MS / 1000) old += 1;
      if (old > 0) {
        seconds.splice(0, old);
        requests.splice(0, old);
        pastSlack.splice(0, old);
      }
      let n = 0;
      let past = 0;
      for (let i = 0; i < requests.length; i += 1) {
        n += requests[i];
        past += pastSlack[i];
      }
      verdict = n >= SLOW_MIN_REQUESTS && past >= bearable;
      until = (second + 1) * 1000 + SLOW_WINDOW_MS;
    },
    slow: (now) => verdict && now < until,
  };
};
