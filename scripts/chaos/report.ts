/** How results are printed: one line (plus details) per verdict as it comes, then a markdown table. */
import type { Verdict } from './harness';

export type Result = 'PASS' | 'FAIL' | 'ERROR';

export interface Row extends Verdict {
  result: Result;
  seconds: number;
}

export const toRows = (verdicts: readonly Verdict[], seconds: number): Row[] =>
  verdicts.map((v) => ({ ...v, result: v.pass ? 'PASS' : 'FAIL', seconds }));

/** A scenario that could not be run or judged (threw). */
export const errorRow = (scenario: string, error: unknown, seconds: number): Row => ({
  scenario,
  invariant: '(not judged)',
  measured: `error: ${(error as Error)?.message?.split('\n')[0] ?? String(error)}`,
  pass: false,
  details: ((error as Error)?.stack ?? String(error)).split('\n').slice(1, 6).map((l) => l.trim()),
  result: 'ERROR',
  seconds,
});

export const rowLines = (row: Row): string[] => [
  `${row.result.padEnd(5)} ${row.scenario} (${row.seconds.toFixed(0)} s) — ${row.invariant}`,
  `      measured: ${row.measured}`,
  ...row.details.map((d) => `      ${d}`),
  ...(row.dir ? [`      logs: ${row.dir}`] : []),
];

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export const markdownTable = (rows: readonly Row[]): string =>
  [
    '| scenario | invariant | measured | result |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${cell(r.scenario)} | ${cell(r.invariant)} | ${cell(r.measured)} | ${r.result} |`),
  ].join('\n');
