/**
 * Child processes that tests start, owned so that none outlives its test. The spawning part is
 * test/helpers/owned-processes.ts (no Jest hooks; scripts and the bench use it too):
 * - `spawnOwned(command, args, options)` starts the child detached, in a process group of its
 *   own (so whatever it starts in turn goes with it), and records it;
 * - `stopOwned(owned, signal)` sends `signal` (a SIGKILL goes to the whole group at once),
 *   SIGKILLs the group if the process is still there after a grace, and resolves with its exit
 *   code.
 * This module adds the hooks: after each test, the groups that test started and that still
 * run are SIGKILLed, also when it failed or timed out; after the test file, all of them (those
 * started in a beforeAll too). The integration project's environment
 * (process-owning-environment.ts) kills what is left when the file's environment is torn down
 * or the Jest worker exits.
 * Importing this module registers those hooks in the test file that imports it (a helper used
 * outside Jest imports owned-processes.ts instead; processes it starts are recorded in the same
 * place, so a test file that imports this module owns them as well).
 */
import { ownedNow, setRunningTest, stopAllOwned } from './owned-processes';

export { killOwned, ownedNow, spawnOwned, stopAllOwned, stopOwned, type Owned } from './owned-processes';

let tests = 0;
let runningTest: number | undefined; // set from a test's first beforeEach to its last afterEach

if (typeof beforeEach === 'function' && typeof afterEach === 'function' && typeof afterAll === 'function') {
  beforeEach(() => {
    tests += 1;
    runningTest = tests;
    setRunningTest(runningTest);
  });
  afterEach(async () => {
    const test = runningTest;
    runningTest = undefined;
    setRunningTest(undefined);
    if (test !== undefined) await stopAllOwned(ownedNow().filter((entry) => entry.startedBy === test));
  });
  afterAll(async () => {
    await stopAllOwned();
  });
}
