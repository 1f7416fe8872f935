/** `sluice status [PRODUCER]`: reads producer state from the store through LimiterStore.inspect (read-only). */
import { budgetLine, liveRows, SHARE_HEADER } from '../budget/budget-view';
import type { DemandReport } from '../budget/demand-meter';
import { formatTable, ruleTable } from '../cli/rule-table';
import type { RuleView } from '../decide/fetch-decider';
import type { LimiterStore } from '../limit/types';
import { resolveRule } from '../rules/rule-index';
import type { QuotaRules } from '../rules/types';
import { formatProducer, type ProducerLine, STATUS_HEADER, statusRow } from './producer-status';

export interface StatusDeps {
  store: Pick<LimiterStore, 'inspect'>;
  rules: QuotaRules;
  ruleOf: (producer: string) => RuleView;
  out: { write(text: string): unknown };
  /** The replicas' live budget reports and the followed rate (when the file has `total:`). */
  budget?(): Promise<{ replicas: DemandReport[][]; followed?: number }>;
}

/** The budget, its rate in force and the shares the replicas' reports give now. */
const writeBudget = async (deps: StatusDeps): Promise<void> => {
  const { total } = deps.rules;
  if (!total || !deps.budget) return;
  try {
    const { replicas, followed } = await deps.budget();
    const inForce = followed ?? total.rate;
    const rows = liveRows(inForce, replicas, (p) => resolveRule(deps.rules, p));
    deps.out.write(`${budgetLine(total)}\nin force: ${Math.round(inForce * 10) / 10}/s${followed === undefined ? '' : ' (followed)'}, ${replicas.length} replica(s) reporting\n`);
    deps.out.write(rows.length === 0 ? 'no producer has demand now\n\n' : `shares now:\n${formatTable([SHARE_HEADER, ...rows])}\n\n`);
  } catch (error) {
    deps.out.write(`${budgetLine(total)}\n(the budget's reports could not be read: ${(error as Error).message})\n\n`);
  }
};

export const inspectProducer = async (deps: StatusDeps, producer: string): Promise<ProducerLine> => {
  const rule = deps.ruleOf(producer);
  if (rule.unlimited || !rule.limit) return { producer, rule };
  try {
    return { producer, rule, state: await deps.store.inspect(producer, rule.limit) };
  } catch (error) {
    return { producer, rule, error: (error as Error).message };
  }
};

/** Exit code: 0, or 3 when the store did not answer for the one producer asked about. */
export const runStatus = async (deps: StatusDeps, producer?: string): Promise<number> => {
  if (producer !== undefined) {
    const line = await inspectProducer(deps, producer);
    deps.out.write(formatProducer(line));
    return line.error ? 3 : 0;
  }
  deps.out.write(`rules in force (${deps.rules.file}):\n${ruleTable(deps.rules.entries)}\n\n`);
  await writeBudget(deps);
  const named = [...deps.rules.exact.keys()];
  if (named.length === 0) {
    deps.out.write('no producer is named exactly in the quota file; ask about one with `sluice status PRODUCER`\n');
    return 0;
  }
  const lines = await Promise.all(named.map((id) => inspectProducer(deps, id)));
  deps.out.write(`producers named in the quota file (the store is not scanned):\n${formatTable([STATUS_HEADER, ...lines.map(statusRow)])}\n`);
  return 0;
};
