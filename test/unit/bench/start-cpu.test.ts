import { renderTable } from '../../../bench/pipeline/report';
import { buildResult, summarizeThroughput } from '../../../bench/pipeline/summary';
import type { ThroughputRun } from '../../../bench/pipeline/throughput';

const run = (side: 'sluice' | 'pipe', cpuSecPerMillion: number, start?: { ms: number; after: number }): ThroughputRun => ({
  side, msgsPerSec: 1, secondHalfMsgsPerSec: 1, mbPerSec: 1, cpuSecPerMillion, scriptCallsPerMessage: 0, storeErrors: 0, duplicates: 0, loadAverage: 0,
  ...(start ? { startCpuMs: start.ms, afterStartCpuSecPerMillion: start.after } : {}),
});
const shape = { producers: 100, headers: 3, partitions: 8 };

describe('summarizeThroughput with the start apart', () => {
  // Two rounds: sluice's start costs 400 and 500 ms, the pipe's 150 and 100; after it, 15 and 12 s per 1M against 10.
  const runs = [
    run('pipe', 11, { ms: 150, after: 10 }), run('sluice', 17, { ms: 400, after: 15 }),
    run('sluice', 14, { ms: 500, after: 12 }), run('pipe', 10.5, { ms: 100, after: 10 }),
  ];

  it('gives each side its CPU until its first message was downstream and per message after it, and pairs sluice ÷ pipe of the latter round by round', () => {
    const summary = summarizeThroughput(runs, shape, 1000, 1000);
    expect(summary.sluiceStartCpuMs).toEqual({ median: 450, min: 400, max: 500 });
    expect(summary.pipeStartCpuMs).toEqual({ median: 125, min: 100, max: 150 });
    expect(summary.afterStartCpuRatio).toEqual({ median: 1.35, min: 1.2, max: 1.5 });
    expect(summary.cpuRatio.median).toBeCloseTo((17 / 11 + 14 / 10.5) / 2, 6);
  });

  it('prints a row of it under the whole run\'s CPU', () => {
    const table = renderTable(buildResult({ date: 'd', environment: {}, throughput: [summarizeThroughput(runs, shape, 1000, 1000)] }));
    expect(table).toContain('| of it after the start (from the first message downstream), 100 producers | 13.5 [12.0–15.0] | 10.0 [10.0–10.0] | × 1.35 [1.20–1.50]; the start itself 450 [400–500] and 125 [100–150] ms of CPU |');
  });

  it('leaves it out when a run did not measure it (results from before)', () => {
    const summary = summarizeThroughput([run('pipe', 11), run('sluice', 17, { ms: 400, after: 15 })], shape, 1000, 1000);
    expect(summary.afterStartCpuRatio).toBeUndefined();
    expect(renderTable(buildResult({ date: 'd', environment: {}, throughput: [summary] }))).not.toContain('after the start');
  });
});
