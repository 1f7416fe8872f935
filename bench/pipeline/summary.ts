/**
 * Turns the raw runs into the result record written to bench/results/<date>.json (pure).
 * Comparisons pair the two sides round by round (same alternation) and report the median and
 * the range over the rounds.
 */
import type { AccuracyRun } from './accuracy';
import type { BacklogRun } from './backlog';
import type { CompileJobs } from './compile-jobs';
import type { LatencyRun, LoadLatency } from './latency';
import type { MemoryResult } from './memory';
import { median, pairwise, summarize, type Summary } from './stats';
import type { ThroughputCase, ThroughputRun } from './throughput';
import type { TimeoutWatch } from './timeout-watch';
import { PARTITIONS } from './topics';

/** The baseline sidecar (BENCH_BASELINE_ROOT) in the same rounds: its own numbers, against the pipe, and sluice against it. */
export interface BaselineThroughput {
  msgsPerSec: Summary;
  mbPerSec: Summary;
  /** baseline ÷ pipe, paired round by round. */
  ratio: Summary;
  cpuSecPerMillion: Summary;
  cpuRatio: Summary;
  /** sluice ÷ baseline, paired round by round: throughput (> 1 better) and CPU per message (< 1 better). */
  sluiceOverBaseline: Summary;
  sluiceCpuOverBaseline: Summary;
  storeErrors: number;
  duplicates: number;
}

export interface ThroughputSummary extends ThroughputCase {
  messages: number;
  /** Mean message size as written: key + value + header names and values. */
  bytesPerMessage: number;
  sluiceMsgsPerSec: Summary;
  pipeMsgsPerSec: Summary;
  sluiceMbPerSec: Summary;
  pipeMbPerSec: Summary;
  ratio: Summary;
  /** The rate over each run's second half of the ids (warmed up), and sluice ÷ pipe paired round by round. */
  sluiceSecondHalfMsgsPerSec: Summary;
  pipeSecondHalfMsgsPerSec: Summary;
  secondHalfRatio: Summary;
  sluiceCpuSecPerMillion: Summary;
  pipeCpuSecPerMillion: Summary;
  /** CPU per message, sluice ÷ pipe, paired round by round. */
  cpuRatio: Summary;
  /** The start apart (every run measured it): each side's CPU until its first message was downstream (ms), its CPU per message after, and sluice ÷ pipe of that, paired. */
  sluiceStartCpuMs?: Summary;
  pipeStartCpuMs?: Summary;
  sluiceAfterStartCpuSecPerMillion?: Summary;
  pipeAfterStartCpuSecPerMillion?: Summary;
  afterStartCpuRatio?: Summary;
  /** Of the CPU, V8's helper threads (optimizing compiler, concurrent and parallel gc); absent off Linux. */
  sluiceHelperCpuSecPerMillion?: Summary;
  pipeHelperCpuSecPerMillion?: Summary;
  /** The same from the moment half the messages were downstream (warmed up): CPU per message of each side, sluice ÷ pipe paired, and the helper threads' part. */
  sluiceSecondHalfCpuSecPerMillion?: Summary;
  pipeSecondHalfCpuSecPerMillion?: Summary;
  secondHalfCpuRatio?: Summary;
  sluiceSecondHalfHelperCpuSecPerMillion?: Summary;
  pipeSecondHalfHelperCpuSecPerMillion?: Summary;
  scriptCallsPerMessage: Summary;
  /** Script calls seen during pipe runs (which make none): other users of the shared Redis. */
  backgroundCallsPerMessage: Summary;
  /** Store calls that timed out over all sluice runs (each answered by limiter.onStoreError instead of Redis). */
  sluiceStoreErrors: number;
  /** Records downstream beyond the first of each id, over all runs of each side. */
  sluiceDuplicates: number;
  pipeDuplicates: number;
  /** The 1-minute load average at the end of each run, in run order. */
  loadAverages: { side: string; load: number }[];
  /** Each sluice run's store timeouts and what they coincided with (timeout-watch.ts), in run order. */
  storeTimeoutWatch: { storeErrors: number; loadAverage: number; watch?: TimeoutWatch }[];
  baseline?: BaselineThroughput;
  /** V8's compile jobs a run, each side (BENCH_COMPILE_JOBS=1). */
  compile?: Partial<Record<'sluice' | 'pipe' | 'baseline', CompileSummary>>;
}

export interface CompileSummary {
  maglevJobs: Summary;
  maglevMs: Summary;
  turbofanJobs: Summary;
  turbofanMs: Summary;
  deopts: Summary;
}

const summarizeCompile = (runs: readonly ThroughputRun[]): CompileSummary | undefined => {
  const jobs = runs.flatMap((r) => (r.compile ? [r.compile] : []));
  if (jobs.length === 0 || jobs.length < runs.length) return undefined; // a side counted in every run, or not at all
  const of = (f: (j: CompileJobs) => number): Summary => summarize(jobs.map(f));
  return { maglevJobs: of((j) => j.maglev.jobs), maglevMs: of((j) => j.maglev.ms), turbofanJobs: of((j) => j.turbofan.jobs), turbofanMs: of((j) => j.turbofan.ms), deopts: of((j) => j.deopts) };
};

const compileBySide = (runs: readonly ThroughputRun[]): ThroughputSummary['compile'] => {
  const sides = (['sluice', 'pipe', 'baseline'] as const).flatMap((side) => {
    const summary = summarizeCompile(sideOf(runs, side));
    return summary === undefined ? [] : [[side, summary] as const];
  });
  return sides.length === 0 ? undefined : Object.fromEntries(sides);
};

/** Headers per message of the headline cases (the bench's own three). */
export const PLAIN_HEADERS = 3;

/** A case's key in the JSON record: `producers100`, and `producers100-headers10-partitions12` for a heavier shape. */
export const caseKey = (t: ThroughputCase): string =>
  t.headers === PLAIN_HEADERS && t.partitions === PARTITIONS ? `producers${t.producers}` : `producers${t.producers}-headers${t.headers}-partitions${t.partitions}`;

/** A case as the table names it: `100 producers`, `100 producers, 10 headers, 12 partitions`. */
export const caseLabel = (t: ThroughputCase): string =>
  t.headers === PLAIN_HEADERS && t.partitions === PARTITIONS ? `${t.producers} producers` : `${t.producers} producers, ${t.headers} headers, ${t.partitions} partitions`;

const sideOf = <T extends { side: string }>(runs: readonly T[], side: string): T[] => runs.filter((r) => r.side === side);

const rate = (r: ThroughputRun) => r.msgsPerSec;
const secondHalfRate = (r: ThroughputRun) => r.secondHalfMsgsPerSec;
const cpu = (r: ThroughputRun) => r.cpuSecPerMillion;

const summarizeBaseline = (b: readonly ThroughputRun[], s: readonly ThroughputRun[], p: readonly ThroughputRun[]): BaselineThroughput => ({
  msgsPerSec: summarize(b.map(rate)),
  mbPerSec: summarize(b.map((r) => r.mbPerSec)),
  ratio: pairwise(b.map(rate), p.map(rate), (x, y) => x / y),
  cpuSecPerMillion: summarize(b.map(cpu)),
  cpuRatio: pairwise(b.map(cpu), p.map(cpu), (x, y) => x / y),
  sluiceOverBaseline: pairwise(s.map(rate), b.map(rate), (x, y) => x / y),
  sluiceCpuOverBaseline: pairwise(s.map(cpu), b.map(cpu), (x, y) => x / y),
  storeErrors: b.reduce((n, r) => n + r.storeErrors, 0),
  duplicates: b.reduce((n, r) => n + r.duplicates, 0),
});

export const summarizeThroughput = (runs: readonly ThroughputRun[], shape: ThroughputCase, messages: number, bytesPerMessage: number): ThroughputSummary => {
  const s = sideOf(runs, 'sluice');
  const p = sideOf(runs, 'pipe');
  const b = sideOf(runs, 'baseline');
  const compile = compileBySide(runs);
  return {
    ...shape, messages, bytesPerMessage,
    sluiceMsgsPerSec: summarize(s.map(rate)),
    pipeMsgsPerSec: summarize(p.map(rate)),
    sluiceMbPerSec: summarize(s.map((r) => r.mbPerSec)),
    pipeMbPerSec: summarize(p.map((r) => r.mbPerSec)),
    ratio: pairwise(s.map(rate), p.map(rate), (a, b) => a / b),
    sluiceSecondHalfMsgsPerSec: summarize(s.map(secondHalfRate)),
    pipeSecondHalfMsgsPerSec: summarize(p.map(secondHalfRate)),
    secondHalfRatio: pairwise(s.map(secondHalfRate), p.map(secondHalfRate), (a, b) => a / b),
    sluiceCpuSecPerMillion: summarize(s.map((r) => r.cpuSecPerMillion)),
    pipeCpuSecPerMillion: summarize(p.map((r) => r.cpuSecPerMillion)),
    cpuRatio: pairwise(s.map((r) => r.cpuSecPerMillion), p.map((r) => r.cpuSecPerMillion), (a, b) => a / b),
    ...(runs.every((r) => r.startCpuMs !== undefined && r.afterStartCpuSecPerMillion !== undefined) ? {
      sluiceStartCpuMs: summarize(s.map((r) => r.startCpuMs as number)),
      pipeStartCpuMs: summarize(p.map((r) => r.startCpuMs as number)),
      sluiceAfterStartCpuSecPerMillion: summarize(s.map((r) => r.afterStartCpuSecPerMillion as number)),
      pipeAfterStartCpuSecPerMillion: summarize(p.map((r) => r.afterStartCpuSecPerMillion as number)),
      afterStartCpuRatio: pairwise(s.map((r) => r.afterStartCpuSecPerMillion as number), p.map((r) => r.afterStartCpuSecPerMillion as number), (a, b) => a / b),
    } : {}),
    ...(runs.every((r) => r.helperCpuSecPerMillion !== undefined) ? {
      sluiceHelperCpuSecPerMillion: summarize(s.map((r) => r.helperCpuSecPerMillion as number)),
      pipeHelperCpuSecPerMillion: summarize(p.map((r) => r.helperCpuSecPerMillion as number)),
    } : {}),
    ...(runs.every((r) => r.secondHalfCpuSecPerMillion !== undefined) ? {
      sluiceSecondHalfCpuSecPerMillion: summarize(s.map((r) => r.secondHalfCpuSecPerMillion as number)),
      pipeSecondHalfCpuSecPerMillion: summarize(p.map((r) => r.secondHalfCpuSecPerMillion as number)),
      secondHalfCpuRatio: pairwise(s.map((r) => r.secondHalfCpuSecPerMillion as number), p.map((r) => r.secondHalfCpuSecPerMillion as number), (a, b) => a / b),
    } : {}),
    ...(runs.every((r) => r.secondHalfHelperCpuSecPerMillion !== undefined) ? {
      sluiceSecondHalfHelperCpuSecPerMillion: summarize(s.map((r) => r.secondHalfHelperCpuSecPerMillion as number)),
      pipeSecondHalfHelperCpuSecPerMillion: summarize(p.map((r) => r.secondHalfHelperCpuSecPerMillion as number)),
    } : {}),
    scriptCallsPerMessage: summarize(s.map((r) => r.scriptCallsPerMessage)),
    backgroundCallsPerMessage: summarize(p.map((r) => r.scriptCallsPerMessage)),
    sluiceStoreErrors: s.reduce((n, r) => n + r.storeErrors, 0),
    sluiceDuplicates: s.reduce((n, r) => n + r.duplicates, 0),
    pipeDuplicates: p.reduce((n, r) => n + r.duplicates, 0),
    loadAverages: runs.map((r) => ({ side: r.side, load: Math.round(r.loadAverage * 100) / 100 })),
    storeTimeoutWatch: s.map((r) => ({ storeErrors: r.storeErrors, loadAverage: Math.round(r.loadAverage * 100) / 100, watch: r.watch })),
    ...(b.length > 0 ? { baseline: summarizeBaseline(b, s, p) } : {}),
    ...(compile ? { compile } : {}),
  };
};

/** One load's latency over the runs of each side. */
export interface LoadLatencySummary {
  sluiceP50Ms: Summary;
  pipeP50Ms: Summary;
  sluiceP99Ms: Summary;
  pipeP99Ms: Summary;
  p50AddedMs: Summary;
  p99AddedMs: Summary;
  /** p50 of each second of the load (second 0 included), the median over each side's runs. */
  sluiceP50BySecondMs: number[];
  pipeP50BySecondMs: number[];
  /** The baseline sidecar (BENCH_BASELINE_ROOT) in the same rounds; added = baseline − pipe. */
  baseline?: { p50Ms: Summary; p99Ms: Summary; p50AddedMs: Summary; p99AddedMs: Summary };
}

/** The first load (each side cold) at the top level, the second (once the first was downstream) under `warm`. */
export interface LatencySummary extends LoadLatencySummary {
  rate: number;
  /** The first load's length, and the second's (of which the last `seconds` are measured). */
  seconds: number;
  warmSeconds: number;
  warm: LoadLatencySummary;
  /** Each run's p50, cold and warmed up, in the order run (a median of few runs hides whether a side fell behind in some). */
  runs: { side: string; p50Ms: number; warmP50Ms: number }[];
}

type SideLoad = LoadLatency & { side: string };

/** Second by second, the median over runs of each run's p50 in that second. */
const bySecond = (runs: readonly SideLoad[]): number[] =>
  Array.from({ length: Math.max(0, ...runs.map((r) => r.p50BySecondMs.length)) }, (_, i) => median(runs.map((r) => r.p50BySecondMs[i]).filter((v) => Number.isFinite(v))));

const summarizeLoad = (runs: readonly SideLoad[]): LoadLatencySummary => {
  const s = sideOf(runs, 'sluice');
  const p = sideOf(runs, 'pipe');
  const b = sideOf(runs, 'baseline');
  return {
    sluiceP50Ms: summarize(s.map((r) => r.p50Ms)),
    pipeP50Ms: summarize(p.map((r) => r.p50Ms)),
    sluiceP99Ms: summarize(s.map((r) => r.p99Ms)),
    pipeP99Ms: summarize(p.map((r) => r.p99Ms)),
    p50AddedMs: pairwise(s.map((r) => r.p50Ms), p.map((r) => r.p50Ms), (x, y) => x - y),
    p99AddedMs: pairwise(s.map((r) => r.p99Ms), p.map((r) => r.p99Ms), (x, y) => x - y),
    sluiceP50BySecondMs: bySecond(s),
    pipeP50BySecondMs: bySecond(p),
    ...(b.length > 0 ? {
      baseline: {
        p50Ms: summarize(b.map((r) => r.p50Ms)),
        p99Ms: summarize(b.map((r) => r.p99Ms)),
        p50AddedMs: pairwise(b.map((r) => r.p50Ms), p.map((r) => r.p50Ms), (x, y) => x - y),
        p99AddedMs: pairwise(b.map((r) => r.p99Ms), p.map((r) => r.p99Ms), (x, y) => x - y),
      },
    } : {}),
  };
};

export const summarizeLatency = (runs: readonly LatencyRun[], load: { rate: number; seconds: number; warmSeconds: number }): LatencySummary => ({
  ...load, ...summarizeLoad(runs), warm: summarizeLoad(runs.map((r) => ({ side: r.side, ...r.warm }))),
  runs: runs.map((r) => ({ side: r.side, p50Ms: r.p50Ms, warmP50Ms: r.warm.p50Ms })),
});

const range = (s: Summary): [number, number] => [s.min, s.max];

export interface BacklogSection {
  quotaPerSec: number;
  seconds: number;
  producers: number;
  runs: BacklogRun[];
}

/**
 * The JSON record. The headline keys are numbers (medians): throughput.ratio, cpu.ratio,
 * scriptCallsPerMessage, latency.p50AddedMs, accuracy.maxErrorPct, backlog.minQuotaUsedPct,
 * backlog.maxBusiestRatio, backlog.maxTierWritesPerParked, memory.redisBytesPerProducer;
 * ranges and per-run details sit beside them. A phase left out (BENCH_PHASES) has no key.
 */
export const buildResult = (input: {
  date: string;
  environment: Record<string, unknown>;
  throughput: ThroughputSummary[];
  latency?: LatencySummary;
  latencyLow?: LatencySummary;
  accuracy?: { quotaPerSec: number; seconds: number; queue: string; capacityMessages: number; runs: AccuracyRun[] };
  backlog?: BacklogSection;
  memory?: MemoryResult;
}) => {
  const plain = input.throughput.filter((t) => t.headers === PLAIN_HEADERS);
  const many = plain.find((t) => t.producers >= 100) ?? input.throughput[0];
  const few = plain.find((t) => t.producers < 100);
  return {
    date: input.date,
    environment: input.environment,
    throughput: many ? { ratio: many.ratio.median, ratioRange: range(many.ratio), byProducers: input.throughput } : undefined,
    scriptCallsPerMessage: many?.scriptCallsPerMessage.median,
    scriptCallsPerMessageBy: Object.fromEntries(input.throughput.map((t) => [caseKey(t), t.scriptCallsPerMessage.median])),
    latency: input.latency && input.latencyLow ? {
      p50AddedMs: input.latency.p50AddedMs.median,
      p50AddedMsRange: range(input.latency.p50AddedMs),
      p99AddedMs: input.latency.p99AddedMs.median,
      p99AddedMsRange: range(input.latency.p99AddedMs),
      p50AddedWarmMs: input.latency.warm.p50AddedMs.median,
      detail: input.latency,
      belowSaturation: input.latencyLow,
    } : undefined,
    accuracy: input.accuracy ? { maxErrorPct: Math.max(...input.accuracy.runs.map((r) => r.maxErrorPct)), ...input.accuracy } : undefined,
    backlog: input.backlog ? {
      minQuotaUsedPct: Math.min(...input.backlog.runs.map((r) => r.minQuotaUsedPct)),
      maxBusiestRatio: Math.max(...input.backlog.runs.map((r) => r.maxBusiestRatio)),
      maxTierWritesPerParked: Math.max(...input.backlog.runs.map((r) => r.tierWrites.perParked)),
      ...input.backlog,
    } : undefined,
    memory: input.memory,
    cpu: many ? {
      sluiceSecPerMillion: many.sluiceCpuSecPerMillion.median,
      pipeSecPerMillion: many.pipeCpuSecPerMillion.median,
      ratio: many.cpuRatio.median,
      ratioRange: range(many.cpuRatio),
      ...(few ? { sluiceSecPerMillion10: few.sluiceCpuSecPerMillion.median, pipeSecPerMillion10: few.pipeCpuSecPerMillion.median } : {}),
    } : undefined,
  };
};

export type BenchResult = ReturnType<typeof buildResult>;
