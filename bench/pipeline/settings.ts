/**
 * The sizes of `npm run bench`, from BENCH_* environment variables, with the defaults the
 * 12-minute budget on a 2-core machine allows (printed with the results). BENCH_PHASES picks
 * phases (e.g. `backlog`: the issue-9 backlog runs alone, about 4 minutes);
 * BENCH_BACKLOG_SECONDS and BENCH_BACKLOG_PRODUCERS size those runs. BENCH_CASES picks
 * throughput cases (`100,10,heavy`); BENCH_HEADERS and BENCH_PARTITIONS shape the heavy one.
 * BENCH_ACCURACY_REDIS_TIMEOUT_MS gives the accuracy runs' sidecars a redis.timeoutMs of their
 * own: short enough, calls time out after Redis ran them and `limiter.onStoreError` answers.
 * BENCH_LATENCY_RATE runs the latency phase at that rate (msg/s) rather than half the pipe's
 * median throughput, and without the throughput phase (its rows keep their targets' names).
 */
import type { ThroughputCase } from './throughput';

export interface BenchSettings {
  /** Messages per throughput run (1 KiB each). */
  count: number;
  /**
   * The throughput cases, 1 KiB values each: 100 producers (the headline) and 10, with the
   * bench's 3 headers on 8 partitions, and `heavy`: 100 producers, BENCH_HEADERS headers
   * (10) and BENCH_PARTITIONS ingress partitions (12, so a fetch spans more partitions than
   * the 8 consumed at once).
   */
  throughputCases: ThroughputCase[];
  /** Alternations of the two sides. */
  rounds: number;
  latencySeconds: number;
  /** The second load of each latency run, once the first is downstream; its last latencySeconds are measured (warmed up). */
  latencyWarmSeconds: number;
  /** A second latency measurement at a rate the sidecar sustains (msg/s). */
  latencyLowRate: number;
  /** BENCH_LATENCY_RATE: the first latency measurement's rate (msg/s) instead of half the pipe's median throughput; latency then runs without throughput. */
  latencyRate?: number;
  accuracySeconds: number;
  accuracyProducers: number;
  /** BENCH_ACCURACY_REDIS_TIMEOUT_MS: the accuracy sidecars' redis.timeoutMs (unset: sluice's default). */
  accuracyRedisTimeoutMs?: number;
  quotaPerSec: number;
  queueSeconds: number;
  memoryProducers: number;
  /** BENCH_PHASES: which phases run (default all); `accuracy` includes `backlog`. */
  phases: Phase[];
  /** Backlog runs (issue 9): producers at 3× quotaPerSec for backlogSeconds, then drained. */
  backlogSeconds: number;
  backlogProducers: number;
  backlogQueues: string[];
}

export const PHASES = ['throughput', 'latency', 'accuracy', 'backlog', 'memory'] as const;
export type Phase = (typeof PHASES)[number];

/** `throughput,latency,…`; `accuracy` brings `backlog` with it; latency needs throughput (its rate is half the pipe's) unless its rate is given. */
export const parsePhases = (raw: string | undefined, latencyRateGiven = false): Phase[] => {
  if (raw === undefined || raw.trim() === '') return [...PHASES];
  const names = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const bad = names.filter((p) => !(PHASES as readonly string[]).includes(p));
  if (bad.length > 0) throw new Error(`BENCH_PHASES: unknown phase(s) ${bad.join(', ')}; expected some of ${PHASES.join(', ')}`);
  const phases = new Set(names as Phase[]);
  if (phases.has('accuracy')) phases.add('backlog');
  if (phases.has('latency') && !phases.has('throughput') && !latencyRateGiven) {
    throw new Error('BENCH_PHASES: latency needs throughput (its rate is half the pipe\'s), or BENCH_LATENCY_RATE');
  }
  return PHASES.filter((p) => phases.has(p));
};

const int = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
};

export const CASES = ['100', '10', 'heavy'] as const;

/** BENCH_CASES (default every case), in the order of CASES. */
export const parseCases = (env: NodeJS.ProcessEnv): ThroughputCase[] => {
  const raw = env.BENCH_CASES;
  const names = raw === undefined || raw.trim() === '' ? [...CASES] : raw.split(',').map((c) => c.trim()).filter((c) => c !== '');
  const bad = names.filter((c) => !(CASES as readonly string[]).includes(c));
  if (bad.length > 0) throw new Error(`BENCH_CASES: unknown case(s) ${bad.join(', ')}; expected some of ${CASES.join(', ')}`);
  const heavy: ThroughputCase = { producers: 100, headers: int(env, 'BENCH_HEADERS', 10), partitions: int(env, 'BENCH_PARTITIONS', 12) };
  const all: Record<(typeof CASES)[number], ThroughputCase> = {
    100: { producers: 100, headers: 3, partitions: 8 },
    10: { producers: 10, headers: 3, partitions: 8 },
    heavy,
  };
  return CASES.filter((c) => names.includes(c)).map((c) => all[c]);
};

export const benchSettings = (env: NodeJS.ProcessEnv): BenchSettings => ({
  count: int(env, 'BENCH_COUNT', 200_000),
  throughputCases: parseCases(env),
  rounds: int(env, 'BENCH_ROUNDS', 5),
  latencySeconds: int(env, 'BENCH_LATENCY_SECONDS', 5),
  latencyWarmSeconds: int(env, 'BENCH_LATENCY_WARM_SECONDS', 10),
  latencyLowRate: int(env, 'BENCH_LATENCY_LOW_RATE', 5000),
  ...(env.BENCH_LATENCY_RATE ? { latencyRate: int(env, 'BENCH_LATENCY_RATE', 1) } : {}),
  accuracySeconds: int(env, 'BENCH_ACCURACY_SECONDS', 30),
  accuracyProducers: 10,
  ...(env.BENCH_ACCURACY_REDIS_TIMEOUT_MS ? { accuracyRedisTimeoutMs: int(env, 'BENCH_ACCURACY_REDIS_TIMEOUT_MS', 50) } : {}),
  quotaPerSec: 100,
  queueSeconds: 60,
  memoryProducers: int(env, 'BENCH_MEMORY_PRODUCERS', 100_000),
  phases: parsePhases(env.BENCH_PHASES, Boolean(env.BENCH_LATENCY_RATE)),
  backlogSeconds: int(env, 'BENCH_BACKLOG_SECONDS', 10),
  backlogProducers: int(env, 'BENCH_BACKLOG_PRODUCERS', 10),
  backlogQueues: ['5s', '60s'],
});
