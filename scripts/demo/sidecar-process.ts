/**
 * Runs `sluice run` as a child process (tsx src/main.ts run), its output to a log file, and
 * waits for /readyz. stop() sends SIGTERM and waits for the exit (SIGKILL after 15 s).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';

export interface Sidecar {
  httpPort: number;
  logFile: string;
  stop(): Promise<number | null>;
  exited(): boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const readyz = async (port: number): Promise<boolean> => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`);
    return response.status === 200;
  } catch {
    return false;
  }
};

export const startSidecar = async ({ root, env, httpPort, logFile }: { root: string; env: NodeJS.ProcessEnv; httpPort: number; logFile: string }): Promise<Sidecar> => {
  const out = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [require.resolve('tsx/cli'), join(root, 'src/main.ts'), 'run'], {
    cwd: root,
    env,
    stdio: ['ignore', out, out],
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve((exitCode = code))));
  const deadline = Date.now() + 90_000;
  while (!(await readyz(httpPort))) {
    if (exitCode !== undefined) throw new Error(`sluice run exited with code ${exitCode} before it was ready; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`sluice run was not ready within 90 s; see ${logFile}`);
    }
    await sleep(250);
  }
  return {
    httpPort,
    logFile,
    exited: () => exitCode !== undefined,
    async stop() {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
};
