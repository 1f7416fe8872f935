/**
 * Detached processes: started in their own process group with stdin from /dev/null and
 * output to a log file, so callers reading `up`'s output never wait on them; stopped by group.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export interface Detached {
  pid: number;
  /** True once the process has exited (only known to the process that started it). */
  exited: () => boolean;
}

export const startDetached = (command: string, args: string[], logFile: string, cwd: string): Detached => {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', () => {
    exited = true;
  });
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  return { pid: child.pid, exited: () => exited };
};

/** Alive and not a zombie; with `marker`, its command line must contain it (guards pid reuse). */
export const isAlive = (pid: number, marker?: string): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
    if (marker === undefined) return true;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return marker === undefined;
  }
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
};

/**
 * SIGTERM the process group of `pid` (only if its command line holds `marker`, when given),
 * then SIGKILL it if it is still there after `graceMs`.
 */
export const stopGroup = async (pid: number, marker: string | undefined, graceMs = 15000): Promise<void> => {
  if (!isAlive(pid, marker)) return;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  signalGroup(pid, 'SIGKILL');
  const killDeadline = Date.now() + 5000;
  while (isAlive(pid) && Date.now() < killDeadline) await sleep(100);
};

/** The last `lines` lines of a log file, or a note that it is empty or missing. */
export const tailOf = (file: string, lines = 25): string => {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const last = text.trimEnd().split('\n').slice(-lines).join('\n');
    return last.length > 0 ? last : `(${file} is empty)`;
  } catch {
    return `(no log at ${file})`;
  }
};
