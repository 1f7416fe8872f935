export { parseQuotas } from './parse-quotas';
export { loadQuotas, readQuotaText } from './load-quotas';
export { resolveRule, RESOLVE_CACHE_SIZE } from './rule-index';
export { watchQuotas, type WatchQuotasOptions, type QuotaWatcher } from './watch-quotas';
export { quotaWarnings, longestDelay, type QuotaWarning } from './quota-warnings';
export type { QuotaRules, QuotaEntry, ResolvedRule } from './types';
export { describeQuotas, type QuotasView } from './describe-quotas';
