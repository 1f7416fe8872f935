/** Which code a measurement ran: the work tree's short HEAD, and whether src/ had uncommitted changes. */
import { execFileSync } from 'node:child_process';

export const commitOf = (dir: string): string => {
  try {
    const head = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${head}${dirty ? ' + uncommitted src changes' : ''}`;
  } catch {
    return 'not a git work tree';
  }
};
