/** The version of the sluice package, from the nearest package.json above this file. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const packageVersion = (from: string = __dirname): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sluice' && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
};
