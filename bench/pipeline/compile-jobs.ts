/**
 * V8's compile jobs in a side's run, read from its log when the side runs with `--trace-opt`
 * (BENCH_COMPILE_JOBS=1 adds it): how many functions Maglev and TurboFan compiled, and the
 * milliseconds those jobs took (the three phases V8 prints, summed: most of it on the helper
 * threads): what a change meant to compile less does to the compiling itself, beside what it
 * does to the rates. Deoptimizations are counted when `--trace-deopt` is on too (BENCH_NODE_ARGS).
 */
import { readFileSync } from 'node:fs';

export interface CompileJobs {
  maglev: { jobs: number; ms: number };
  turbofan: { jobs: number; ms: number };
  /** Deoptimizations (`bailout` lines); 0 without `--trace-deopt`. */
  deopts: number;
}

const COMPLETED = /^\[completed compiling .*\(target (MAGLEV|TURBOFAN(?:_JS)?)\).* took ([\d.]+), ([\d.]+), ([\d.]+) ms\]$/;

/** The compile jobs a `--trace-opt` log reports (lines of anything else are skipped). */
export const compileJobsOf = (log: string): CompileJobs => {
  const jobs: CompileJobs = { maglev: { jobs: 0, ms: 0 }, turbofan: { jobs: 0, ms: 0 }, deopts: 0 };
  for (const line of log.split('\n')) {
    if (line.startsWith('[bailout ')) {
      jobs.deopts += 1;
      continue;
    }
    const m = COMPLETED.exec(line);
    if (m === null) continue;
    const tier = m[1] === 'MAGLEV' ? jobs.maglev : jobs.turbofan;
    tier.jobs += 1;
    tier.ms += Number(m[2]) + Number(m[3]) + Number(m[4]);
  }
  return jobs;
};

/** Whether the sides run with `--trace-opt` (BENCH_COMPILE_JOBS=1). */
export const countsCompileJobs = (): boolean => process.env.BENCH_COMPILE_JOBS === '1';

/** A side's compile jobs from its log file, when they are counted. */
export const readCompileJobs = (logFile: string): CompileJobs | undefined => (countsCompileJobs() ? compileJobsOf(readFileSync(logFile, 'utf8')) : undefined);
