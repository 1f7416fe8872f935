/** `sluice status [PRODUCER]`: reads producer state from the store through LimiterStore.inspect (read-only). */
import { formatTable, ruleTable } from '../cli/rule-table';
import type { RuleView } from '../decide/verdict';
import type { LimiterStore } from '../limit/types';
import type { QuotaRules } from '../rules/types';
import { formatProducer, type ProducerLine, STATUS_HEADER, statusRow } from './producer-status';

export interface StatusDeps {
  store: Pick<LimiterStore, 'inspect'>;
  rules: QuotaRules;
  ruleOf: (producer: string) => RuleView;
  out: { write(text: string): unknown };
}

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
  const named = [...deps.rules.exact.keys()];
  if (named.length === 0) {
    deps.out.write('no producer is named exactly in the quota file; ask about one with `sluice status PRODUCER`\n');
    return 0;
  }
  const lines = await Promise.all(named.map((id) => inspectProducer(deps, id)));
  deps.out.write(`producers named in the quota file (the store is not scanned):\n${formatTable([STATUS_HEADER, ...lines.map(statusRow)])}\n`);
  return 0;
};
