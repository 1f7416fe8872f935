/**
 * Child processes owned so that none outlives whoever started it, without any Jest hook (usable
 * from scripts and the bench; test/helpers/processes.ts adds the per-test hooks):
 * - `spawnOwned(command, args, options)` starts the child detached, in a process group of its
 *   own (so whatever it starts in turn goes with it), and records it;
 * - `stopOwned(owned, signal)` sends `signal` (a SIGKILL goes to the whole group at once),
 *   SIGKILLs the group if the process is still there after a grace, and resolves with its exit
 *   code; `killOwned(owned)` SIGKILLs the group now; `stopAllOwned()` SIGKILLs every group
 *   still recorded and waits for the processes to exit;
 * - inside the integration project's environment (process-owning-environment.ts) every group
 *   is recorded there too, and killed when the file's environment is torn down or the Jest
 *   worker exits; outside it, the groups still recorded are SIGKILLed when this process exits
 *   (a script that handles SIGINT/SIGTERM itself calls `stopAllOwned()` before it exits).
 * A child in a group of its own no longer gets the terminal's Ctrl-C: its owner ends it.
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';

export interface Owned {
  process: ChildProcess;
  /** Resolves with the exit code, or 128 when a signal ended the process. */
  exited: Promise<number | null>;
  /** The number of the test that started it (see `setRunningTest`); undefined outside one. */
  startedBy: number | undefined;
}

const GRACE_MS = 20_000;
const owned = new Set<Owned>();
let runningTest: number | undefined;
let exitHookInstalled = false;

/** The test that processes started from now on belong to (set by processes.ts's hooks). */
export const setRunningTest = (test: number | undefined): void => {
  runningTest = test;
};

/** The processes started and not yet exited. */
export const ownedNow = (): Owned[] => [...owned];

/** The process groups the environment kills at teardown and on exit (absent outside it). */
const environmentGroups = (): Set<number> | undefined =>
  (globalThis as { __sluiceOwnedGroups?: Set<number> }).__sluiceOwnedGroups;

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
};

/** Outside the owning environment: whatever is still recorded dies with this process. */
const killRecordedOnExit = (): void => {
  for (const entry of owned) killGroup(entry.process.pid, 'SIGKILL');
};

export const spawnOwned = (command: string, args: string[], options: SpawnOptions = {}): Owned => {
  const groups = environmentGroups();
  if (groups === undefined && !exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', killRecordedOnExit);
  }
  const child = spawn(command, args, { ...options, detached: true });
  const exited = new Promise<number | null>((done) => {
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : null)));
    child.once('error', () => done(null));
  });
  const entry: Owned = { process: child, exited, startedBy: runningTest };
  owned.add(entry);
  if (child.pid !== undefined) groups?.add(child.pid);
  void exited.then(() => {
    killGroup(child.pid, 'SIGKILL'); // whatever it started and left behind goes with it
    owned.delete(entry);
    if (child.pid !== undefined) groups?.delete(child.pid);
  });
  return entry;
};

/** SIGKILLs the process's whole group now (no wait). */
export const killOwned = (entry: Owned): void => killGroup(entry.process.pid, 'SIGKILL');

/**
 * Sends `signal` to the process (SIGKILL: to its whole group), SIGKILLs the group if the
 * process is still there after `graceMs`, and resolves with its exit code.
 */
export const stopOwned = async (entry: Owned, signal: NodeJS.Signals = 'SIGTERM', graceMs = GRACE_MS): Promise<number | null> => {
  const { process: child } = entry;
  if (child.exitCode === null && child.signalCode === null) {
    if (signal === 'SIGKILL') killGroup(child.pid, 'SIGKILL');
    else child.kill(signal);
  }
  const kill = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs);
  try {
    return await entry.exited;
  } finally {
    clearTimeout(kill);
  }
};

/** SIGKILLs the groups of `entries` (default: every one still recorded) and waits for the exits. */
export const stopAllOwned = (entries: Owned[] = ownedNow()): Promise<unknown> =>
  Promise.all(entries.map((entry) => stopOwned(entry, 'SIGKILL')));
