/**
 * `sluice usage` as text (pure): a table of the buckets (time, offered, forwarded, delayed,
 * overflowed, dead-lettered, forwarded bytes, and the budget's share when it gave one) with a totals line, and on a terminal a
 * sparkline of forwarded per bucket above it. A producer with no history of its own in the window
 * gets a sentence saying where its counts are instead of a table of zeros.
 */
import { formatTable } from '../cli/rule-table';
import { DETAILED_PRODUCERS, OTHER } from './detail-selection';
import type { UsageAnswer } from './usage-query';
import type { UsageCounts } from './usage-counters';

const HEADER = ['bucket (UTC)', 'offered', 'forwarded', 'delayed', 'overflowed', 'dead-lettered', 'forwarded bytes'];
const BARS = '▁▂▃▄▅▆▇█';

/** One character per value, scaled to the largest; zero is a space so idle buckets show as gaps in the line. */
const maxOf = (values: readonly number[]): number => values.reduce((max, v) => (v > max ? v : max), 0);

export const sparkline = (values: readonly number[]): string => {
  const max = maxOf(values);
  return values.map((v) => (v <= 0 || max === 0 ? ' ' : BARS[Math.min(BARS.length - 1, Math.floor((v / max) * (BARS.length - 1) + 0.5))])).join('');
};

const cells = (counts: UsageCounts, share: boolean): string[] =>
  [counts.offered, counts.forwarded, counts.delayed, counts.overflowed, counts.deadLettered, counts.forwardedBytes, ...(share ? [counts.budgetShare] : [])].map(String);

/** A bucket start as the table shows it: ISO 8601 UTC without the T and the milliseconds. */
const when = (iso: string): string => iso.replace('T', ' ').replace(/\.\d{3}Z$/, '');

const inOther = (answer: UsageAnswer): string =>
  `producer ${answer.producer}: no history of its own in the last ${answer.since} at ${answer.resolution} resolution.\n` +
  `It is counted in "${OTHER}" with the long tail of producers (those without a rule of their own in the quota file ` +
  `that are not among the ${DETAILED_PRODUCERS} busiest), or it sent nothing then: see \`sluice usage ${OTHER}\`.\n`;

export const usageText = (answer: UsageAnswer, tty: boolean): string => {
  if (answer.countedIn === OTHER) return inOther(answer);
  const head = `producer ${answer.producer}: last ${answer.since} at ${answer.resolution} resolution (${answer.rows.length} buckets)\n`;
  const line = tty ? `forwarded  ${sparkline(answer.rows.map((r) => r.forwarded))}  max ${maxOf(answer.rows.map((r) => r.forwarded))}/bucket\n` : '';
  // The budget's column only when a budget gave this producer a share in the window.
  const share = answer.totals.budgetShare > 0;
  const header = share ? [...HEADER, 'budget share'] : HEADER;
  const table = formatTable([header, ...answer.rows.map((r) => [when(r.start), ...cells(r, share)]), ['total', ...cells(answer.totals, share)]]);
  return `${head}${line}${table}\n`;
};
