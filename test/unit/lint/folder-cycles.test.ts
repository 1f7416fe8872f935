import { cyclesOf, describeCycles, edgesOf, nodeOf } from '../../../scripts/lint/folder-cycles';

const tree = (files: Record<string, string>) => new Map(Object.entries(files));

describe('the folder-cycle check', () => {
  it('counts a subfolder as its folder and each file of src/ as its own node', () => {
    expect(nodeOf('limit/lua/x.ts')).toBe('limit');
    expect(nodeOf('errors.ts')).toBe('errors.ts');
  });

  it('finds a cycle through three folders, type-only imports and index files included, and names the imports that close it', () => {
    const edges = edgesOf(tree({
      'a/x.ts': "import { y } from '../b/y';",
      'b/y.ts': "import type { Z } from '../c';",
      'c/index.ts': "export { z } from './z';",
      'c/z.ts': "import { x } from '../a/x';\nimport { e } from '../errors';",
      'errors.ts': '',
    }));
    const cycles = cyclesOf(edges);
    expect(cycles).toEqual([['a', 'b', 'c']]);
    expect(describeCycles(cycles, edges)).toContain('c -> a: src/c/z.ts -> src/a/x');
  });

  it('finds a cycle between two files of one folder when asked for files', () => {
    const files = tree({ 'a/x.ts': "import type { Y } from './y';", 'a/y.ts': "import { x } from './x';" });
    expect(cyclesOf(edgesOf(files))).toEqual([]);
    expect(cyclesOf(edgesOf(files, true))).toEqual([['a/x.ts', 'a/y.ts']]);
  });

  it('finds none when the layers point one way', () => {
    const edges = edgesOf(tree({ 'a/x.ts': "import { y } from '../b/y';\nimport { e } from '../errors';", 'b/y.ts': "import { e } from '../errors';", 'errors.ts': '' }));
    expect(cyclesOf(edges)).toEqual([]);
  });
});
