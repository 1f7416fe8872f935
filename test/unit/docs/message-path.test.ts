/**
 * The README's tables of the files one message crosses (between the `message-path` markers):
 * every file they name exists, each is named once, one file per row, at most 12 from the fetch
 * to the commit and 2 more on the retry path, and the files of the flow engine that carry a
 * message (src/flow/ but its wiring) are all in them — so the tables cannot silently fall behind
 * a file that is added, renamed or removed, nor grow past the path the project promises.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const table = /<!-- message-path -->([\s\S]*?)<!-- \/message-path -->/.exec(readme)?.[1] ?? '';
const named = [...table.matchAll(/`(src\/[^`]+\.(?:ts|lua))`/g)].map((m) => m[1]);
/** The rows of each table (`| n | file | … |`), in order: the message's way, then the retry path. */
const tables = table
  .split(/\n\s*\n/)
  .map((block) => block.split('\n').filter((line) => /^\| [0-9]+ \|/.test(line)))
  .filter((rows) => rows.length > 0);

/** src/flow/ files that build or wire a flow rather than carry a message through it. */
const WIRING = ['flow.ts', 'subscription-assigner.ts', 'handoff-fence.ts'];

describe("the README's table of a message's way", () => {
  it('is there, between its markers', () => {
    expect(named.length).toBeGreaterThan(10);
  });

  it('names files that exist, each once', () => {
    expect(named.filter((file) => !existsSync(join(root, file)))).toEqual([]);
    expect(named.filter((file, i) => named.indexOf(file) !== i)).toEqual([]);
  });

  it('has one file per row, at most 12 rows from the fetch to the commit and 2 more for the retry path, numbered in order', () => {
    expect(tables.map((rows) => rows.length)).toEqual([expect.any(Number), expect.any(Number)]);
    const [main, retry] = tables;
    expect(main.length).toBeLessThanOrEqual(12);
    expect(retry.length).toBeLessThanOrEqual(2);
    const rows = [...main, ...retry];
    expect(rows.map((row) => (row.match(/`src\/[^`]+`/g) ?? []).length)).toEqual(rows.map(() => 1));
    expect(rows.map((row) => Number(/^\| ([0-9]+) \|/.exec(row)?.[1]))).toEqual(rows.map((_, i) => i + 1));
  });

  it('names every file of the flow engine a message passes through', () => {
    const flow = readdirSync(join(root, 'src/flow')).filter((f) => f.endsWith('.ts') && !WIRING.includes(f)).map((f) => `src/flow/${f}`);
    expect(flow.filter((file) => !named.includes(file))).toEqual([]);
  });
});
