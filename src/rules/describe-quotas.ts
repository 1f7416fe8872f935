/** The rules in force as plain JSON (GET /v1/quotas, sluice status): no regexes, no caches. */
import type { QuotaRules } from './types';

export interface QuotasView {
  file: string;
  digest: string;
  loadedAt: string;
  rules: Array<{
    pattern: string;
    match: 'exact' | 'glob' | 'default';
    line: number;
    unlimited: boolean;
    shadow: boolean;
    spec: Record<string, unknown>;
  }>;
}

export const describeQuotas = (rules: QuotaRules, loadedAt: number): QuotasView => ({
  file: rules.file,
  digest: rules.digest,
  loadedAt: new Date(loadedAt).toISOString(),
  rules: rules.entries.map((entry) => ({
    pattern: entry.pattern,
    match: entry.kind,
    line: entry.line,
    unlimited: entry.resolved.unlimited,
    shadow: entry.resolved.shadow,
    spec: { ...entry.spec },
  })),
});
