/** The demo's live table and closing summary (pure text). */
import { sparkline } from '../../src/usage/usage-table';
import type { UsageAnswer } from '../../src/usage';

export interface ProducerRow {
  id: string;
  quota: string;
  /** Its weight in a contended budget, and its share and demand in force (undefined: none, e.g. idle). */
  weight: number;
  share?: number;
  demand?: number;
  offeredPerS: number;
  forwardedPerS: number;
  backlogMs: number;
  parked: number;
  offered: number;
  forwarded: number;
  deadLettered: number;
}

const HEAD = ['producer', 'own rule', 'weight', 'share', 'demand', 'offered/s', 'forwarded/s', 'backlog', 'parked (incl. re-parks)', 'dead-lettered'];

export const align = (rows: string[][]): string[] => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
};

const backlog = (ms: number): string => (ms <= 0 ? '-' : `${(ms / 1000).toFixed(1)}s`);
/** Messages per second with one decimal, '-' when there is none. */
export const perS = (x: number | undefined): string => (x === undefined ? '-' : `${x.toFixed(1)}/s`);

/** The budget in force and what its shares add up to (the rate in force is below `total:` only while `follow` holds it back). */
export const budgetState = (totalLabel: string, inForce: number | undefined, shares: readonly (number | undefined)[]): string =>
  inForce === undefined
    ? `budget (total: ${totalLabel}): no cadence yet`
    : `budget in force ${perS(inForce)} (total: ${totalLabel}), shares add up to ${perS(shares.reduce<number>((a, b) => a + (b ?? 0), 0))}`;

export const liveTable = (elapsedS: number, phase: string, budget: string, rows: readonly ProducerRow[]): string[] => [
  `sluice demo — ${phase}, ${elapsedS.toFixed(0)} s — ${budget}`,
  ...align([
    HEAD,
    ...rows.map((r) => [
      r.id, r.quota, String(r.weight), perS(r.share), perS(r.demand), r.offeredPerS.toFixed(0), r.forwardedPerS.toFixed(0), backlog(r.backlogMs), String(r.parked), String(r.deadLettered),
    ]),
  ]),
];

export const summaryTable = (rows: readonly ProducerRow[], seconds: number): string[] =>
  align([
    ['producer', 'quota', 'offered', 'forwarded', 'forwarded/s', 'parked (incl. re-parks)', 'dead-lettered', 'still waiting'],
    ...rows.map((r) => [
      r.id,
      r.quota,
      String(r.offered),
      String(r.forwarded),
      (r.forwarded / seconds).toFixed(1),
      String(r.parked),
      String(r.deadLettered),
      String(Math.max(0, r.offered - r.forwarded - r.deadLettered)),
    ]),
  ]);

/** Redraws `lines` in place on a TTY: cursor up over what was drawn before, clear each line. */
export const redraw = (previous: number, lines: readonly string[]): string =>
  `${previous > 0 ? `\x1b[${previous}A` : ''}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`;

/** Each producer's last minute from the usage history: forwarded per second as a sparkline, and the minute's totals. */
export const usageLines = (answers: readonly UsageAnswer[]): string[] =>
  align([
    ['producer', 'forwarded per second (last minute)', 'offered', 'forwarded', 'delayed', 'overflowed', 'dead-lettered'],
    ...answers.map((a) => [
      a.producer,
      sparkline(a.rows.map((r) => r.forwarded)),
      ...[a.totals.offered, a.totals.forwarded, a.totals.delayed, a.totals.overflowed, a.totals.deadLettered].map(String),
    ]),
  ]);
