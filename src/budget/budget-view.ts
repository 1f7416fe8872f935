/**
 * The budget as `sluice quotas check` and `sluice status` print it (pure): what it is, and the
 * shares it gives — at full demand (every rule of the file as one producer, all backlogged), or
 * from the replicas' live reports.
 */
import type { BudgetSpec, QuotaRules, ResolvedRule } from '../rules/types';
import { mergeReports, targetsOf, type Claimant } from './budget-targets';
import type { DemandReport } from './demand-meter';

const round = (x: number): string => (Math.round(x * 10) / 10).toString();

export const budgetLine = (total: BudgetSpec): string =>
  `downstream budget (total): ${total.rateLabel}${total.bytesLabel ? `, ${total.bytesLabel}` : ''}` +
  (total.follow ? `; shrinks while group ${total.follow.group} lags on the downstream topic by more than ${total.follow.maxLagLabel}` : '');

const claimantOf = (rule: ResolvedRule): Claimant | undefined =>
  rule.unlimited || rule.shadow || !rule.limit
    ? undefined
    : { rate: 1000 / rule.limit.intervalMs, bytes: rule.limit.byteIntervalMs === undefined ? Infinity : 1000 / rule.limit.byteIntervalMs, weight: rule.weight ?? 1, min: rule.minRate ?? 0 };

export const SHARE_HEADER = ['PRODUCER', 'WEIGHT', 'MIN', 'OWN RATE', 'DEMAND', 'SHARE'];

/** One row per rule of the file (a glob or default as one producer), each backlogged: the shares at full demand. */
export const fullDemandRows = (rules: QuotaRules): string[][] => {
  if (!rules.total) return [];
  const byName = new Map<string, ResolvedRule>(rules.entries.map((e) => [e.pattern, e.resolved]));
  const reports: DemandReport[] = [...byName.keys()].map((producer) => ({ producer, rate: 0, bytes: 0, backlogged: true }));
  return rows(rules.total.rate, reports, (p) => byName.get(p) as ResolvedRule);
};

/** One row per producer the replicas report now. */
export const liveRows = (rate: number, replicas: readonly DemandReport[][], ruleOf: (producer: string) => ResolvedRule): string[][] =>
  rows(rate, [...mergeReports(replicas).values()], ruleOf);

const rows = (rate: number, reports: readonly DemandReport[], ruleOf: (producer: string) => ResolvedRule): string[][] => {
  const merged = new Map(reports.map((r) => [r.producer, r]));
  const targets = targetsOf({ rate }, merged, (p) => claimantOf(ruleOf(p)));
  return [...merged.keys()].map((producer) => {
    const rule = ruleOf(producer);
    const share = targets.rate.get(producer);
    return [
      producer,
      String(rule.weight ?? 1),
      rule.minRate ? `${round(rule.minRate)}/s` : '-',
      rule.limit && !rule.unlimited ? `${round(1000 / rule.limit.intervalMs)}/s` : 'unlimited',
      share === undefined ? '-' : `${round(targets.demand.get(producer) ?? 0)}/s`,
      share === undefined ? (rule.unlimited ? 'outside the budget' : 'shadow: outside the budget') : `${round(share)}/s`,
    ];
  });
};
