/**
 * Folder and file cycles in src/: the layers point one way, so no folder (or file) may import,
 * directly or through others, one that imports it back — type-only imports included, which
 * ESLint's import/no-cycle does not follow. `npm run lint` runs this after ESLint; it prints
 * each cycle with the imports that close it and exits 1. A folder's subfolders count as the folder (limit/lua,
 * limit/algorithms); each file directly in src/ is a node of its own (main.ts, errors.ts, …).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/** One import between two nodes (folders, or files), for the message. */
export interface Edge {
  from: string;
  to: string;
  /** `src/a/x.ts -> src/b/y` */
  where: string;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** The node a file of src/ belongs to: its top folder, or the file itself when it lies in src/. */
export const nodeOf = (srcRelative: string): string => {
  const parts = srcRelative.split(/[\\/]/);
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') + '.ts' : parts[0];
};

/** Every relative import between two different nodes: folders (`nodeOf`), or files with `byFile`. */
export const edgesOf = (files: ReadonlyMap<string, string>, byFile = false): Edge[] => {
  const edges: Edge[] = [];
  for (const [file, text] of files) {
    for (const match of text.matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), match[1]));
      const isFolder = [...files.keys()].some((f) => f.startsWith(target + sep) && files.has(join(target, 'index.ts')));
      const resolved = isFolder ? join(target, 'index.ts') : `${target}.ts`;
      const from = byFile ? file : nodeOf(file);
      const to = byFile ? resolved : nodeOf(resolved);
      if (from !== to) edges.push({ from, to, where: `src/${file} -> src/${target}` });
    }
  }
  return edges;
};

/** The strongly connected components with more than one node (Tarjan). */
export const cyclesOf = (edges: readonly Edge[]): string[][] => {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
};

/** One paragraph per cycle: its folders and the imports between them. */
export const describeCycles = (cycles: readonly string[][], edges: readonly Edge[]): string =>
  cycles.map((cycle) => {
    const inside = edges.filter((e) => cycle.includes(e.from) && cycle.includes(e.to));
    const byPair = new Map<string, string[]>();
    for (const e of inside) byPair.set(`${e.from} -> ${e.to}`, [...(byPair.get(`${e.from} -> ${e.to}`) ?? []), e.where]);
    return [`cycle: ${cycle.join(', ')}`, ...[...byPair].map(([pair, where]) => `  ${pair}: ${where.slice(0, 2).join('; ')}${where.length > 2 ? ` (+${where.length - 2})` : ''}`)].join('\n');
  }).join('\n');

const readTree = (root: string): Map<string, string> => {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return files;
};

if (require.main === module) {
  const tree = readTree(join(__dirname, '..', '..', 'src'));
  // Files too: ESLint's import/no-cycle does not follow `import type`.
  const found = [false, true].flatMap((byFile) => {
    const edges = edgesOf(tree, byFile);
    const cycles = cyclesOf(edges);
    return cycles.length > 0 ? [describeCycles(cycles, edges)] : [];
  });
  if (found.length > 0) {
    process.stderr.write(`${found.join('\n')}\nLayers point one way: move what both need below both, or the command above the composition.\n`);
    process.exit(1);
  }
}
