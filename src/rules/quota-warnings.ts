/**
 * Rules that cannot work with the settings: a message may have to wait longer than
 * retry.maxAge (a long queue, a slow rate, a long window), so it would be dead-lettered
 * instead of delivered.
 */
import { formatDuration } from '../config/units';
import type { LimitRule } from '../limit/types';
import type { QuotaRules } from './types';

export interface QuotaWarning {
  rule: string;
  message: string;
}

/** The longest a single decision can make a message wait, and what causes it. */
export const longestDelay = (limit: LimitRule): { ms: number; cause: string } => {
  const candidates = [
    { ms: limit.capacityMs, cause: `queue ${formatDuration(Math.round(limit.capacityMs))}` },
    { ms: limit.intervalMs, cause: `rate ${limit.labels.rate}` },
    ...limit.windows.map((w) => ({ ms: w.windowMs, cause: `window ${w.label}` })),
  ];
  return candidates.reduce((a, b) => (b.ms > a.ms ? b : a));
};

export const quotaWarnings = (rules: QuotaRules, config: { retry: { maxAgeMs: number } }): QuotaWarning[] =>
  rules.entries.flatMap((entry) => {
    const limit = entry.resolved.limit;
    if (!limit) return [];
    const delay = longestDelay(limit);
    if (delay.ms <= config.retry.maxAgeMs) return [];
    const rule = entry.kind === 'default' ? 'default' : `"${entry.pattern}"`;
    return [{
      rule: entry.pattern,
      message: `${rules.file}:${entry.line}: rule ${rule} may delay a message by up to ${formatDuration(Math.round(delay.ms))} (${delay.cause}), longer than retry.maxAge (${formatDuration(config.retry.maxAgeMs)}): such messages are dead-lettered`,
    }];
  });
