// `npm run build`: the shipped program as one file. esbuild bundles src/main.ts with the
// dependencies it imports (kafkajs as patched on install among them) into dist/main.js, and the
// Lua scripts go next to it in dist/lua/ (each reader finds them at path.join(__dirname, 'lua')).
// One file instead of about 650 modules: about a quarter less CPU to start
// (docs/performance.md). @node-rs/crc32 stays outside: a native addon, resolved from
// node_modules at run time. Usage: node scripts/build.mjs [outdir] (default dist).
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

const outdir = process.argv[2] ?? 'dist';

const luaFiles = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  if (statSync(path).isDirectory()) return luaFiles(path);
  return name.endsWith('.lua') ? [path] : [];
});

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: ['src/main.ts'],
  outfile: join(outdir, 'main.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['@node-rs/crc32'],
  sourcemap: true,
  logLevel: 'warning',
});
// A warning is a require esbuild could not follow: the bundle would reach outside itself.
if (result.warnings.length > 0) {
  console.error(`build: ${result.warnings.length} warning(s) from esbuild; the bundle must not depend on files beside it`);
  process.exit(1);
}
mkdirSync(join(outdir, 'lua'), { recursive: true });
for (const file of luaFiles('src')) {
  const target = join(outdir, 'lua', basename(file));
  if (existsSync(target)) {
    console.error(`build: two Lua scripts named ${basename(file)}; they share dist/lua/`);
    process.exit(1);
  }
  cpSync(file, target);
}
