/**
 * `sluice quotas check FILE`: validates a quota file and prints the rules in the order they
 * are matched, then warnings (rules that would dead-letter messages under retry.maxAge).
 * Exit 0 when valid (warnings included), 1 with `file:line: reason` lines when not.
 */
import { budgetLine, fullDemandRows, SHARE_HEADER } from '../budget/budget-view';
import { loadConfig } from '../config/load-config';
import { SluiceError } from '../errors';
import { loadQuotas } from '../rules/load-quotas';
import { quotaWarnings } from '../rules/quota-warnings';
import type { QuotaRules } from '../rules/types';
import { formatTable, ruleTable } from './rule-table';
import type { Output } from './types';

export interface QuotasCheckOptions {
  file: string;
  /** Settings file, for retry.maxAge and mode (the environment applies as for sluice run). */
  configFile?: string;
  env: NodeJS.ProcessEnv;
  out: Output;
  err: Output;
}

const report = (out: Output, rules: QuotaRules, warnings: string[]): void => {
  const rulesWord = rules.entries.length === 1 ? 'rule' : 'rules';
  out.write(`${rules.file}: ${rules.entries.length} ${rulesWord}, in the order they are matched (exact, longest glob, file order, default):\n\n`);
  out.write(`${ruleTable(rules.entries)}\n`);
  if (rules.total) {
    out.write(`\n${budgetLine(rules.total)}\nshares at full demand (each rule as one producer, all backlogged):\n${formatTable([SHARE_HEADER, ...fullDemandRows(rules)])}\n`);
  }
  if (warnings.length > 0) out.write(`\n${warnings.map((w) => `warning: ${w}`).join('\n')}\n`);
  out.write(`\nOK${warnings.length > 0 ? ` with ${warnings.length} warning${warnings.length === 1 ? '' : 's'}` : ''}\n`);
};

export const quotasCheck = (options: QuotasCheckOptions): number => {
  const { out, err } = options;
  try {
    const config = loadConfig({ file: options.configFile, env: options.env, requireTopics: false });
    const rules = loadQuotas(options.file);
    const warnings = quotaWarnings(rules, config).map((w) => w.message);
    if (config.mode === 'shadow') warnings.push(`mode is shadow: no rule is enforced, every message is forwarded and only measured`);
    report(out, rules, warnings);
    return 0;
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
    err.write(`${error.message}\n`);
    return 1;
  }
};

