/**
 * From the replicas' reports to each producer's target share (pure): demands merged across
 * replicas (rates added, backlogged if any replica says so), each producer's demand capped at its
 * own rule (a backlogged producer asks for all its rule allows; another for what it offered plus
 * HEADROOM, so it can grow), then divided by waterFill.
 */
import type { DemandReport } from './demand-meter';
import { waterFill } from './water-fill';

/** A producer not backlogged asks for what it offered × HEADROOM (+ 1/s): room to grow before it is held back. */
export const HEADROOM = 1.1;

export interface Claimant {
  /** Its own rule, messages per second. */
  rate: number;
  /** Its own byte rule, bytes per second (Infinity without one). */
  bytes: number;
  weight: number;
  /** Its guaranteed minimum, messages per second (0 without one). */
  min: number;
}

export interface Targets {
  rate: Map<string, number>;
  /** Empty when the budget has no bytes. */
  bytes: Map<string, number>;
  /** Each producer's demand (messages per second), for status. */
  demand: Map<string, number>;
}

/** Adds up the replicas' reports per producer. */
export const mergeReports = (replicas: readonly DemandReport[][]): Map<string, DemandReport> => {
  const merged = new Map<string, DemandReport>();
  for (const reports of replicas) {
    for (const report of reports) {
      const seen = merged.get(report.producer);
      if (!seen) merged.set(report.producer, { ...report });
      else [seen.rate, seen.bytes, seen.backlogged] = [seen.rate + report.rate, seen.bytes + report.bytes, seen.backlogged || report.backlogged];
    }
  }
  return merged;
};

const asked = (offered: number, own: number, backlogged: boolean): number => (backlogged ? own : Math.min(own, offered * HEADROOM + 1));

export const targetsOf = (
  budget: { rate: number; bytes?: number },
  demands: ReadonlyMap<string, DemandReport>,
  claimantOf: (producer: string) => Claimant | undefined,
): Targets => {
  const ids: string[] = [];
  const claimants: Claimant[] = [];
  const reports: DemandReport[] = [];
  for (const [producer, report] of demands) {
    const claimant = claimantOf(producer);
    if (!claimant) continue;
    ids.push(producer);
    claimants.push(claimant);
    reports.push(report);
  }
  const rateDemand = claimants.map((c, i) => asked(reports[i].rate, c.rate, reports[i].backlogged));
  const rates = waterFill(budget.rate, claimants.map((c, i) => ({ weight: c.weight, demand: rateDemand[i], min: c.min })));
  const targets: Targets = { rate: new Map(), bytes: new Map(), demand: new Map() };
  ids.forEach((id, i) => {
    targets.rate.set(id, rates[i]);
    targets.demand.set(id, rateDemand[i]);
  });
  if (budget.bytes !== undefined) {
    const shares = waterFill(budget.bytes, claimants.map((c, i) => ({ weight: c.weight, demand: asked(reports[i].bytes, c.bytes, reports[i].backlogged), min: 0 })));
    ids.forEach((id, i) => targets.bytes.set(id, shares[i]));
  }
  return targets;
};
