/** Per-producer counts of a `sluice drain` run and the table printed at its end (pure). */
export type SummaryColumn = 'forwarded' | 'reparked' | 'deadLettered' | 'toDecide';

export type ProducerCounts = Record<SummaryColumn, number>;

export interface DrainSummary {
  add(producer: string, column: SummaryColumn): void;
  total(): number;
  rows(): [string, ProducerCounts][];
}

export const createDrainSummary = (): DrainSummary => {
  const counts = new Map<string, ProducerCounts>();
  let total = 0;
  return {
    add(producer, column) {
      let row = counts.get(producer);
      if (!row) counts.set(producer, (row = { forwarded: 0, reparked: 0, deadLettered: 0, toDecide: 0 }));
      row[column] += 1;
      total += 1;
    },
    total: () => total,
    rows: () => [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
};

const HEADINGS: Record<SummaryColumn, string> = {
  forwarded: 'forwarded',
  reparked: 're-parked',
  deadLettered: 'dead-lettered',
  toDecide: 'to decide again',
};

/** An aligned text table: one row per producer and a total row. `dryRun` adds the "to decide again" column. */
export const formatSummary = (summary: DrainSummary, { dryRun }: { dryRun: boolean }): string => {
  const columns: SummaryColumn[] = dryRun ? ['forwarded', 'deadLettered', 'toDecide'] : ['forwarded', 'reparked', 'deadLettered'];
  const rows = summary.rows();
  const totals = columns.map((c) => rows.reduce((sum, [, row]) => sum + row[c], 0));
  const table = [
    ['producer', ...columns.map((c) => HEADINGS[c])],
    ...rows.map(([producer, row]) => [producer, ...columns.map((c) => String(row[c]))]),
    ['total', ...totals.map(String)],
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((line) => line[i].length)));
  const render = (line: string[]): string => line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [render(table[0]), rule, ...table.slice(1, -1).map(render), rule, render(table[table.length - 1])].join('\n') + '\n';
};
