/** The effective rule table of `sluice quotas check`: one row per rule, in matching order. */
import { DEFAULT_QUEUE } from '../limit/compile-rule';
import type { QuotaEntry } from '../rules/types';

const HEADER = ['PRODUCER', 'MATCH', 'ALGORITHM', 'RATE', 'QUEUE/BURST', 'BYTES', 'LIMITS', 'FLAGS'];

const queueOrBurst = (entry: QuotaEntry): string => {
  const limit = entry.resolved.limit;
  if (!limit) return '-';
  if (limit.algorithm === 'token-bucket') return `burst ${limit.burst}`;
  const queue = entry.spec.queue ?? DEFAULT_QUEUE;
  const count = typeof queue === 'number' || /^\d+$/.test(queue);
  return count && Number(queue) > 0 ? `queue ${queue} msgs` : `queue ${queue}`;
};

const flags = (entry: QuotaEntry): string =>
  [entry.resolved.unlimited ? 'unlimited' : '', entry.resolved.shadow ? 'shadow' : ''].filter(Boolean).join(',') || '-';

export const ruleRow = (entry: QuotaEntry): string[] => {
  const limit = entry.resolved.limit;
  return [
    entry.pattern,
    entry.kind,
    limit?.algorithm ?? '-',
    limit?.labels.rate ?? '-',
    queueOrBurst(entry),
    limit?.labels.bytes ?? '-',
    limit && limit.windows.length > 0 ? limit.windows.map((w) => w.label).join(', ') : '-',
    flags(entry),
  ];
};

/** Aligned columns, two spaces apart, no trailing spaces. */
export const formatTable = (rows: string[][]): string => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
};

export const ruleTable = (entries: readonly QuotaEntry[]): string => formatTable([HEADER, ...entries.map(ruleRow)]);
