/**
 * One measured side as a child process: the sidecar (`dist/main.js run`, what the image runs),
 * with BENCH_BASELINE_ROOT a second sidecar built from another work tree (`baseline`), or the plain pipe (pipe-worker.ts compiled by tsc the same way). Both run as compiled
 * JavaScript under plain node with the same flags (--expose-gc, the usage probe preloaded), so
 * each has its own process, event loop and CPU account, apart from the harness that produces
 * and measures. (Under tsx every function created at run time goes through esbuild's naming
 * helper: 10–20 % more CPU for the sidecar, whose per-message code makes closures.)
 */
import { ChildProcess, execFileSync, fork } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { countsCompileJobs } from './compile-jobs';

/** `baseline`: the sidecar of BENCH_BASELINE_ROOT, measured beside `sluice` in the same alternations. */
export type SideKind = 'sluice' | 'pipe' | 'baseline';

/** The sides a throughput or latency round runs: the pipe and sluice, and the baseline when BENCH_BASELINE_ROOT is set. */
export const measuredSides = (): SideKind[] => (process.env.BENCH_BASELINE_ROOT ? ['pipe', 'sluice', 'baseline'] : ['pipe', 'sluice']);

/** Round `round`'s order: rotated each round, so drift in the machine's load favours no side. */
export const sideOrder = (round: number, sides: readonly SideKind[] = measuredSides()): SideKind[] => {
  if (sides.length === 2) return round % 2 === 0 ? [...sides] : [...sides].reverse();
  const k = round % sides.length;
  return [...sides.slice(k), ...sides.slice(0, k)];
};

export interface Usage {
  /** The whole process's CPU time. */
  cpuMicros: number;
  /** Its main thread's (Linux only); the rest is V8's helper threads (compiler, gc). */
  mainCpuMicros?: number;
  heapUsed: number;
  rss: number;
}

export interface Side {
  kind: SideKind;
  /** Where its stdout and stderr go (the sidecar's pino lines). */
  logFile: string;
  /** The sidecar's HTTP port (/metrics, /readyz); undefined for the pipe. */
  httpPort?: number;
  /** Resolves once the side's consumer joined its group (sluice: /readyz answers 200). */
  ready(timeoutMs?: number): Promise<void>;
  usage(gc?: boolean): Promise<Usage>;
  /** sluice: failed limiter store calls so far (sluice_store_errors_total); the pipe: 0. */
  storeErrors(): Promise<number>;
  stop(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '../..');
/**
 * BENCH_SLUICE_ROOT=<dir>: run the sidecar from another work tree (a scratch copy with a candidate fix).
 * BENCH_BASELINE_ROOT=<dir>: the baseline sidecar's work tree (with its own node_modules, so its own kafkajs patch).
 */
const rootOf = (kind: SideKind): string => {
  if (kind === 'baseline') {
    const root = process.env.BENCH_BASELINE_ROOT;
    if (!root) throw new Error('the baseline side needs BENCH_BASELINE_ROOT');
    return path.resolve(root);
  }
  return (kind === 'sluice' && process.env.BENCH_SLUICE_ROOT) || ROOT;
};
const isSidecar = (kind: SideKind): boolean => kind !== 'pipe';
/** Where the pipe is compiled to: inside node_modules, so its imports resolve as from the work tree. */
const PIPE_BUILD = path.join(ROOT, 'node_modules/.cache/sluice-bench');
const entryOf = (kind: SideKind): string =>
  isSidecar(kind) ? path.join(rootOf(kind), 'dist/main.js') : path.join(PIPE_BUILD, 'bench/pipeline/pipe-worker.js');
const EXEC_ARGV = ['--expose-gc', '-r', path.join(ROOT, 'bench/common/probe.cjs')];

/** Compiles the sides before a run: `npm run build` in each sidecar's work tree, tsc for the pipe. */
export const buildSides = (): void => {
  for (const kind of measuredSides().filter(isSidecar)) execFileSync('npm', ['run', '-s', 'build'], { cwd: rootOf(kind), stdio: 'inherit' });
  execFileSync(process.execPath, [
    require.resolve('typescript/bin/tsc'), '--outDir', PIPE_BUILD, '--rootDir', ROOT, '--target', 'ES2022', '--module', 'commonjs',
    '--moduleResolution', 'node', '--esModuleInterop', '--skipLibCheck', '--resolveJsonModule', path.join(ROOT, 'bench/pipeline/pipe-worker.ts'),
  ], { cwd: ROOT, stdio: 'inherit' });
};
/**
 * BENCH_CPU_PROF=<dir>: every side writes a V8 CPU profile there (node --cpu-prof).
 * BENCH_NODE_ARGS: more node flags for both sides (`--trace-opt --trace-deopt`, say; the output
 * goes to the side's log). BENCH_COMPILE_JOBS=1: `--trace-opt` on both sides, and the
 * throughput runs count the compile jobs in their logs (./compile-jobs.ts). BENCH_SLUICE_NODE_ARGS:
 * node flags for the measured sidecar alone (not the baseline, not the pipe): a runtime flag
 * tried beside the same code as BENCH_BASELINE_ROOT.
 */
const execArgv = (kind: SideKind): string[] => {
  const dir = process.env.BENCH_CPU_PROF;
  const own = kind === 'sluice' ? process.env.BENCH_SLUICE_NODE_ARGS ?? '' : '';
  const extra = `${process.env.BENCH_NODE_ARGS ?? ''} ${own}`.split(' ').filter(Boolean);
  const trace = countsCompileJobs() && !extra.includes('--trace-opt') ? ['--trace-opt'] : [];
  return [...EXEC_ARGV, ...extra, ...trace, ...(dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [])];
};

const waitHttpReady = async (port: number, deadline: number, child: ChildProcess): Promise<void> => {
  while (Date.now() < deadline && child.exitCode === null) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the sidecar did not become ready (exit code ${child.exitCode})`);
};

export const startSide = (kind: SideKind, env: NodeJS.ProcessEnv, logFile: string, httpPort?: number): Side => {
  const log = openSync(logFile, 'a');
  const child = fork(entryOf(kind), isSidecar(kind) ? ['run'] : [], {
    cwd: rootOf(kind), env, execArgv: execArgv(kind), stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  let joined = false;
  let nextId = 0;
  const waiting = new Map<number, (u: Usage) => void>();
  child.on('message', (m: { ready?: boolean; probe?: string; id?: number; cpu?: NodeJS.CpuUsage; mainCpuMicros?: number; heapUsed?: number; rss?: number }) => {
    if (m.ready) joined = true;
    if (m.probe === 'usage' && m.id !== undefined && m.cpu) {
      waiting.get(m.id)?.({ cpuMicros: m.cpu.user + m.cpu.system, mainCpuMicros: m.mainCpuMicros, heapUsed: m.heapUsed ?? 0, rss: m.rss ?? 0 });
      waiting.delete(m.id);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    kind,
    logFile,
    httpPort: isSidecar(kind) ? httpPort : undefined,
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      if (isSidecar(kind)) return waitHttpReady(httpPort as number, deadline, child);
      while (!joined && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      if (!joined) throw new Error(`the pipe did not join its group (exit code ${child.exitCode}); see ${logFile}`);
    },
    usage(gc = false) {
      const id = (nextId += 1);
      return new Promise<Usage>((resolve, reject) => {
        waiting.set(id, resolve);
        child.send({ probe: 'usage', id, gc }, (error) => error && reject(error));
      });
    },
    async storeErrors() {
      if (!isSidecar(kind)) return 0;
      // A side whose metrics cannot be read (it exited, say) reports NaN: the table shows the
      // count as unknown rather than the whole run failing.
      const text = await fetch(`http://127.0.0.1:${httpPort}/metrics`).then((r) => r.text(), () => undefined);
      return text === undefined ? Number.NaN : Number(/^sluice_store_errors_total (\S+)$/m.exec(text)?.[1] ?? 0);
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
};
