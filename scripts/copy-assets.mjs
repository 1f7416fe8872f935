// Copies the non-TypeScript files under src/ (Lua scripts) next to their compiled callers in dist/.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';

const copy = (from, to) => {
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    if (statSync(source).isDirectory()) copy(source, join(to, name));
    else if (name.endsWith('.lua')) {
      mkdirSync(dirname(join(to, name)), { recursive: true });
      cpSync(source, join(to, name));
    }
  }
};
copy('src', 'dist');
