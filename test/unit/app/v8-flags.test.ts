import { spawnSync } from 'node:child_process';
import { INLINING_FLAG, ownV8Flags } from '../../../src/v8-flags';

describe('the V8 flags the sidecar sets for itself', () => {
  it('halves the inlining budget when node was not given one', () => {
    expect(ownV8Flags([])).toEqual([INLINING_FLAG]);
    // A flag whose name begins alike is another flag.
    expect(ownV8Flags(['--max-inlined-bytecode-size=100', '--enable-source-maps'])).toEqual([INLINING_FLAG]);
  });

  it("keeps the user's own budget, in either spelling", () => {
    expect(ownV8Flags(['--max-inlined-bytecode-size-cumulative=2000'])).toEqual([]);
    expect(ownV8Flags(['--max_inlined_bytecode_size_cumulative=2000'])).toEqual([]);
  });

  it('names a flag this node knows (set at run time, an unknown one is only a line on stderr)', () => {
    const child = spawnSync(process.execPath, [INLINING_FLAG, '-e', '0'], { encoding: 'utf8' });
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
  });
});
