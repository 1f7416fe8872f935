import { compileJobsOf } from '../../../bench/pipeline/compile-jobs';
import { summarizeThroughput } from '../../../bench/pipeline/summary';
import type { ThroughputRun } from '../../../bench/pipeline/throughput';

// Lines as Node 24's --trace-opt --trace-deopt print them (from a bench side's log), with other output between.
const LOG = [
  '[marking 0x24e93fbcc461 <JSFunction normalizeString (sfi = 0x1c36c6e156f1)> for optimization to TURBOFAN_JS, ConcurrencyMode::kConcurrent, reason: hot and stable]',
  '[compiling method 0x24e93fbcc461 <JSFunction normalizeString (sfi = 0x1c36c6e156f1)> (target TURBOFAN_JS), mode: ConcurrencyMode::kConcurrent]',
  '[completed compiling 0x24e93fbcc461 <JSFunction normalizeString (sfi = 0x1c36c6e156f1)> (target TURBOFAN_JS) - took 0.009, 5.880, 1.129 ms]',
  '[completed optimizing 0x24e93fbcc461 <JSFunction normalizeString (sfi = 0x1c36c6e156f1)> (target TURBOFAN_JS)]',
  '{"level":40,"msg":"a log line of the side"}',
  '[completed compiling 0x0b4f226c0a99 <JSFunction (sfi = 0x6e1b5c91919)> (target MAGLEV) - took 0.000, 0.415, 0.014 ms]',
  '[completed compiling 0x036d7a1d3981 <JSFunction read (sfi = 0x164bcb17a6a1)> (target MAGLEV) OSR - took 0.001, 1.006, 0.017 ms]',
  '[completed compiling 0x036d7a1d3982 <JSFunction dispatchAll (sfi = 0x164bcb17a6a2)> (target TURBOFAN_JS) OSR - took 0.010, 2.000, 0.100 ms]',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x3efc105cc461 <JSFunction normalizeString (sfi = 0x104a2cad56f1)>, opt id 1]',
].join('\n');

describe('compileJobsOf', () => {
  it('counts each tier\'s completed compile jobs (OSR ones too) and sums the three phases of each', () => {
    const jobs = compileJobsOf(LOG);
    expect(jobs.turbofan.jobs).toBe(2);
    expect(jobs.turbofan.ms).toBeCloseTo(0.009 + 5.88 + 1.129 + 0.01 + 2 + 0.1, 6);
    expect(jobs.maglev.jobs).toBe(2);
    expect(jobs.maglev.ms).toBeCloseTo(0.415 + 0.014 + 0.001 + 1.006 + 0.017, 6);
    expect(jobs.deopts).toBe(1);
  });

  it('finds nothing in a log without --trace-opt', () => {
    expect(compileJobsOf('{"level":30,"msg":"sluice run starting"}\n')).toEqual({ maglev: { jobs: 0, ms: 0 }, turbofan: { jobs: 0, ms: 0 }, deopts: 0 });
  });
});

describe('summarizeThroughput with compile jobs', () => {
  const run = (side: 'sluice' | 'pipe', turbofanMs: number, compile = true): ThroughputRun => ({
    side, msgsPerSec: 1, secondHalfMsgsPerSec: 1, mbPerSec: 1, cpuSecPerMillion: 1, scriptCallsPerMessage: 0, storeErrors: 0, duplicates: 0, loadAverage: 0,
    ...(compile ? { compile: { maglev: { jobs: 10, ms: 5 }, turbofan: { jobs: 2, ms: turbofanMs }, deopts: 0 } } : {}),
  });
  const shape = { producers: 100, headers: 3, partitions: 8 };

  it('gives each side the median and range of its runs', () => {
    const summary = summarizeThroughput([run('pipe', 100), run('sluice', 300), run('sluice', 500), run('pipe', 200), run('pipe', 150), run('sluice', 400)], shape, 1000, 1000);
    expect(summary.compile?.sluice?.turbofanMs).toEqual({ median: 400, min: 300, max: 500 });
    expect(summary.compile?.pipe?.turbofanMs).toEqual({ median: 150, min: 100, max: 200 });
    expect(summary.compile?.baseline).toBeUndefined();
  });

  it('has no compile jobs when the runs counted none', () => {
    expect(summarizeThroughput([run('pipe', 0, false), run('sluice', 0, false)], shape, 1000, 1000).compile).toBeUndefined();
  });
});
