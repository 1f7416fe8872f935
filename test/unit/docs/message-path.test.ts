/**
 * The README's table of the files one message crosses (between the `message-path` markers):
 * every file it names exists, each is named once, and the files of the flow engine that carry a
 * message (src/flow/ but its wiring) are all in it — so the table cannot silently fall behind a
 * file that is added, renamed or removed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const table = /<!-- message-path -->([\s\S]*?)<!-- \/message-path -->/.exec(readme)?.[1] ?? '';
const named = [...table.matchAll(/`(src\/[^`]+\.(?:ts|lua))`/g)].map((m) => m[1]);

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

  it('names every file of the flow engine a message passes through', () => {
    const flow = readdirSync(join(root, 'src/flow')).filter((f) => f.endsWith('.ts') && !WIRING.includes(f)).map((f) => `src/flow/${f}`);
    expect(flow.filter((file) => !named.includes(file))).toEqual([]);
  });
});
