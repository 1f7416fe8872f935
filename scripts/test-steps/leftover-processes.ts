/**
 * Which processes a test run left behind: every process `npm test` starts inherits
 * SLUICE_TEST_RUN_ID=<this run's id> from it, so any process still running with that variable
 * in its environment (read from /proc/<pid>/environ) when the run ends was left behind. Linux
 * only: elsewhere there is no /proc to read, and nothing is reported.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const RUN_ID_VARIABLE = 'SLUICE_TEST_RUN_ID';

export interface Leftover {
  pid: number;
  command: string;
}

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
};

/** The processes, other than this one, whose environment holds SLUICE_TEST_RUN_ID=`runId`. */
export const leftovers = (runId: string): Leftover[] => {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const marker = `${RUN_ID_VARIABLE}=${runId}`;
  return entries
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .flatMap((entry) => {
      const environ = read(`/proc/${entry}/environ`);
      if (environ === undefined || !environ.split('\0').includes(marker)) return [];
      const command = (read(`/proc/${entry}/cmdline`) ?? '').split('\0').join(' ').trim();
      return [{ pid: Number(entry), command: command || '(no command line)' }];
    });
};

/** SIGKILLs each leftover by its pid. */
export const kill = (found: Leftover[]): void => {
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it ended meanwhile
    }
  }
};
