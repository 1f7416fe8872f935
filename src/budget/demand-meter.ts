/**
 * What this replica saw each producer ask for, reported to the others every cadence: messages and
 * bytes decided over the last two cadences (per second), and whether the producer is backlogged
 * (a message of it waits for a slot, or was refused, more than BACKLOG_MS past the report). A
 * refusal counts for at most REFUSED_MS past its decision (src/budget/budget.ts): a producer whose
 * last messages were refused long ago and wait parked far ahead is not backlogged for all that
 * time, it is decided again when they come back. A producer with nothing decided for two
 * cadences and nothing pending is idle: not reported. Fed once per producer per fetch by the decider (src/budget/budget.ts).
 */

/** A producer is backlogged when its last slot or refusal lies further ahead than this. */
export const BACKLOG_MS = 100;

/** The most producers one replica reports (the busiest first); the others keep their grants. */
export const MAX_REPORTED = 1000;

export interface DemandReport {
  producer: string;
  /** Messages per second offered (decided) over the window. */
  rate: number;
  /** Bytes per second offered over the window. */
  bytes: number;
  backlogged: boolean;
}

interface Tally {
  count: number;
  bytes: number;
  lastCount: number;
  lastBytes: number;
  busyUntil: number;
}

export interface DemandMeter {
  record(producer: string, count: number, bytes: number, busyUntil: number): void;
  /** This cadence's reports; starts the next cadence. */
  take(now: number, windowMs: number): DemandReport[];
}

export const createDemandMeter = (): DemandMeter => {
  const tallies = new Map<string, Tally>();
  return {
    record(producer, count, bytes, busyUntil) {
      let tally = tallies.get(producer);
      if (!tally) tallies.set(producer, (tally = { count: 0, bytes: 0, lastCount: 0, lastBytes: 0, busyUntil: 0 }));
      tally.count += count;
      tally.bytes += bytes;
      if (busyUntil > tally.busyUntil) tally.busyUntil = busyUntil;
    },
    take(now, windowMs) {
      const reports: DemandReport[] = [];
      for (const [producer, tally] of tallies) {
        const count = tally.count + tally.lastCount;
        const bytes = tally.bytes + tally.lastBytes;
        const backlogged = tally.busyUntil - now > BACKLOG_MS;
        if (count === 0 && tally.busyUntil <= now) {
          tallies.delete(producer);
          continue;
        }
        reports.push({ producer, rate: (count * 1000) / windowMs, bytes: (bytes * 1000) / windowMs, backlogged });
        [tally.lastCount, tally.lastBytes, tally.count, tally.bytes] = [tally.count, tally.bytes, 0, 0];
      }
      if (reports.length <= MAX_REPORTED) return reports;
      return reports.sort((a, b) => Number(b.backlogged) - Number(a.backlogged) || b.rate - a.rate).slice(0, MAX_REPORTED);
    },
  };
};
