/**
 * The quota rules in force: loaded at start (a bad file stops start-up, exit 1), then
 * swapped in whenever the file changes; a bad new file keeps the last good rules (logged and
 * counted).
 */
import type { Logger } from 'pino';
import type { RuleView } from '../decide/fetch-decider';
import type { SluiceError } from '../errors';
import type { Metrics } from '../metrics/types';
import { loadQuotas, resolveRule, watchQuotas, type QuotaRules } from '../rules';

export interface QuotaHolder {
  ruleOf(producer: string): RuleView;
  rules(): QuotaRules;
  loadedAt(): number;
  lastError(): { at: number; message: string } | undefined;
  close(): void;
}

export const holdQuotas = ({ file, logger, metrics }: { file: string; logger: Logger; metrics: Metrics }): QuotaHolder => {
  let rules = loadQuotas(file);
  let loadedAt = Date.now();
  let lastError: { at: number; message: string } | undefined;
  const watcher = watchQuotas({
    file,
    current: rules,
    onChange(next, at) {
      rules = next;
      loadedAt = at;
      lastError = undefined;
      metrics.quotaReload('ok');
      logger.info({ file, rules: next.entries.length }, 'quota file reloaded');
    },
    onError(error: SluiceError) {
      lastError = { at: Date.now(), message: error.message };
      metrics.quotaReload('error');
      logger.error({ err: error, file }, 'quota file refused; the last good rules stay in force');
    },
  });
  return {
    ruleOf: (producer) => resolveRule(rules, producer),
    rules: () => rules,
    loadedAt: () => loadedAt,
    lastError: () => lastError,
    close: () => watcher.close(),
  };
};
