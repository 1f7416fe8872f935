/**
 * test/helpers/processes.ts: a process a test starts ends with everything it started, when it
 * is stopped and when its test times out or fails. The second part runs a fixture file in a Jest
 * of its own and looks for survivors by the SLUICE_TEST_RUN_ID it gave them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { kill, leftovers, RUN_ID_VARIABLE } from '../../../scripts/test-steps/leftover-processes';
import { randomId } from '../../helpers/names';
import { spawnOwned, stopOwned } from '../../helpers/processes';
import { waitFor } from '../../helpers/wait';

const ROOT = resolve(__dirname, '../../..');

/** Running and not a zombie (an orphan's zombie waits for init to reap it). */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
};

describe('when a test stops a process that started another one', () => {
  it.each(['SIGKILL', 'SIGTERM'] as const)('with %s, both end', async (signal) => {
    const owned = spawnOwned('sh', ['-c', 'trap "" TERM; sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    owned.process.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const sleep = Number(await waitFor(() => /^\d+\n/.exec(out)?.[0], { timeoutMs: 5000, message: 'the sleep pid' }));
    expect(running(sleep)).toBe(true);
    // sh ignores SIGTERM here: the grace ends it, with its group.
    expect(await stopOwned(owned, signal, 500)).toBe(128);
    await waitFor(() => !running(sleep), { timeoutMs: 5000, message: `pid ${sleep} (sleep) to end with its parent's group` });
  });
});

describe('when tests that started processes time out or fail', () => {
  it('kills every process they started, also the ones started in a beforeAll', async () => {
    const runId = randomId();
    const pidsFile = join(mkdtempSync(join(tmpdir(), 'sluice-ownership-')), 'pids');
    writeFileSync(pidsFile, '');
    const config = {
      rootDir: ROOT,
      testEnvironment: '<rootDir>/test/helpers/process-owning-environment.ts',
      transform: { '^.+\\.ts$': 'ts-jest' },
      testMatch: ['<rootDir>/test/integration/foundation/fixtures/left-running.fixture.ts'],
    };
    const result = await new Promise<{ code: number; output: string }>((done) => {
      execFile(
        process.execPath,
        [join(ROOT, 'node_modules/jest/bin/jest.js'), '--config', JSON.stringify(config), '--ci'],
        { cwd: ROOT, env: { ...process.env, [RUN_ID_VARIABLE]: runId, SLUICE_FIXTURE_PIDS_FILE: pidsFile }, timeout: 90_000 },
        (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : error ? -1 : 0, output: `${stdout}${stderr}` }),
      );
    });
    expect(result.output).toMatch(/Tests:\s+2 failed, 1 passed, 3 total/);
    expect(result.code).toBe(1);
    const pids = readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(pids).toHaveLength(6); // three shells and their sleeps
    expect(leftovers(runId)).toEqual([]);
    expect(pids.filter(running)).toEqual([]);
  }, 120_000);
});

describe('when a process that `npm test` started is still running at its end', () => {
  it('finds it by the run id in its environment, names it, and kills it', async () => {
    const runId = randomId();
    const owned = spawnOwned('sleep', ['300'], { stdio: 'ignore', env: { ...process.env, [RUN_ID_VARIABLE]: runId } });
    const pid = owned.process.pid as number;
    const found = await waitFor(() => leftovers(runId).find((p) => p.pid === pid), { timeoutMs: 5000, message: `pid ${pid} among the leftovers` });
    expect(found.command).toBe('sleep 300');
    expect(leftovers(randomId())).toEqual([]);
    kill(leftovers(runId));
    expect(await owned.exited).toBe(128);
    expect(leftovers(runId)).toEqual([]);
  });
});
