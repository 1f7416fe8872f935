/**
 * Child processes that tests start, owned so that none outlives its test:
 * - `spawnOwned(command, args, options)` starts the child detached, in a process group of its
 *   own (so whatever it starts in turn goes with it), and records it;
 * - `stopOwned(owned, signal)` sends `signal` (a SIGKILL goes to the whole group at once),
 *   SIGKILLs the group if the process is still there after a grace, and resolves with its exit
 *   code;
 * - after each test, the groups that test started and that still run are SIGKILLed, also when
 *   it failed or timed out; after the test file, all of them (those started in a beforeAll
 *   too). The integration project's environment (process-owning-environment.ts) kills what is
 *   left when the file's environment is torn down or the Jest worker exits.
 * Importing this module registers those hooks in the test file that imports it.
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';

export interface Owned {
  process: ChildProcess;
  /** Resolves with the exit code, or 128 when a signal ended the process. */
  exited: Promise<number | null>;
  /** The number of the test that started it; undefined when started outside one (in a beforeAll). */
  startedBy: number | undefined;
}

const GRACE_MS = 20_000;
const owned = new Set<Owned>();
let tests = 0;
let runningTest: number | undefined; // set from a test's first beforeEach to its last afterEach

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

export const spawnOwned = (command: string, args: string[], options: SpawnOptions = {}): Owned => {
  const child = spawn(command, args, { ...options, detached: true });
  const exited = new Promise<number | null>((done) => {
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : null)));
    child.once('error', () => done(null));
  });
  const entry: Owned = { process: child, exited, startedBy: runningTest };
  owned.add(entry);
  if (child.pid !== undefined) environmentGroups()?.add(child.pid);
  void exited.then(() => {
    killGroup(child.pid, 'SIGKILL'); // whatever it started and left behind goes with it
    owned.delete(entry);
    if (child.pid !== undefined) environmentGroups()?.delete(child.pid);
  });
  return entry;
};

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

const killAll = (entries: Owned[]): Promise<unknown> => Promise.all(entries.map((entry) => stopOwned(entry, 'SIGKILL')));

if (typeof beforeEach === 'function' && typeof afterEach === 'function' && typeof afterAll === 'function') {
  beforeEach(() => {
    tests += 1;
    runningTest = tests;
  });
  afterEach(async () => {
    const test = runningTest;
    runningTest = undefined;
    if (test !== undefined) await killAll([...owned].filter((entry) => entry.startedBy === test));
  });
  afterAll(async () => {
    await killAll([...owned]);
  });
}
