/**
 * Throughput: `count` messages prefilled on one ingress topic, then each side in turn (fresh
 * group, fresh downstream topic) drains it. The rate counts distinct ids (header bench-seq: a
 * message sent twice is no progress) between the broker append times of the first downstream
 * record and of the one that brought the last new id (group join excluded). CPU time is the
 * side's whole run, from its start until the last id was downstream, per message, and the part
 * of it on V8's helper threads (compiler, gc; Linux); and the same for the run's second half
 * alone (from the moment half the messages were downstream: the side warmed up, its hot code
 * compiled); and likewise the rate of the second half of the ids alone (from the append time by
 * which half of them were downstream to the last new one). The start apart: the CPU a side
 * spent from its start until its first message was downstream (modules loaded, clients
 * connected, group joined; seen within 50 ms, alike for both sides), and the CPU per message from
 * then on. (Not until ready: the sidecar's /readyz waits for its retry tiers' group too, while
 * its ingress is drained.) Beside them:
 * the Redis script calls of the whole run, duplicates, and the load average as the run ended.
 * A case has a shape: producers, headers per message (3: the bench's own) and ingress
 * partitions (8); MB/s counts key + value + header names and values as the producer wrote them.
 */
import os from 'node:os';
import { type CompileJobs, readCompileJobs } from './compile-jobs';
import type { BenchContext } from './context';
import { prefill } from './load';
import { readDistinct } from './read-downstream';
import { scriptCalls } from './redis-info';
import { sideOrder, type SideKind } from './side';
import type { SluiceSetup } from './side-env';
import { type TimeoutWatch, watchRun } from './timeout-watch';

export interface ThroughputRun {
  side: SideKind;
  msgsPerSec: number;
  /** The rate over the second half of the distinct ids: from the append time by which half were downstream to the last new one (warmed up). */
  secondHalfMsgsPerSec: number;
  /** msgsPerSec × the mean message size (key + value + header names and values), in 10^6 bytes/s. */
  mbPerSec: number;
  cpuSecPerMillion: number;
  /** CPU from the side's start until its first message was downstream, ms. */
  startCpuMs?: number;
  /** CPU per message from then to the end (over the messages downstream after it): the run without its start. */
  afterStartCpuSecPerMillion?: number;
  /** Of it, V8's helper threads (optimizing compiler, concurrent and parallel gc); Linux only. */
  helperCpuSecPerMillion?: number;
  /** CPU per message from the moment half the messages were downstream to the end (warmed up), and of it the helper threads'. */
  secondHalfCpuSecPerMillion?: number;
  secondHalfHelperCpuSecPerMillion?: number;
  scriptCallsPerMessage: number;
  /** Limiter store calls that failed (timed out) and were answered by limiter.onStoreError. */
  storeErrors: number;
  /** Records downstream beyond the first of each id. */
  duplicates: number;
  /** The 1-minute load average as the run ended. */
  loadAverage: number;
  /** sluice: what its store timeouts coincided with (timeout-watch.ts). */
  watch?: TimeoutWatch;
  /** V8's compile jobs over the whole run (BENCH_COMPILE_JOBS=1: compile-jobs.ts). */
  compile?: CompileJobs;
}

/** redis.timeoutMs's default (src/config/schema.ts), for runs that do not set SLUICE_REDIS_TIMEOUT_MS. */
const DEFAULT_TIMEOUT_MS = 50;

const drain = async (ctx: BenchContext, kind: SideKind, ingress: string, count: number, setup: SluiceSetup, bytesPerMessage: number): Promise<ThroughputRun> => {
  const downstream = await ctx.book.downstream('tp-down');
  const callsBefore = await scriptCalls(ctx.redis);
  const side = await ctx.launch(kind, { ingress, downstream }, setup);
  const timeoutMs = Number(setup.env?.SLUICE_REDIS_TIMEOUT_MS ?? DEFAULT_TIMEOUT_MS);
  const watching = side.httpPort === undefined ? undefined
    : await watchRun({ redis: ctx.redis, redisUrl: ctx.services.redisUrl, port: side.httpPort, logFile: side.logFile, timeoutMs });
  let run: Omit<ThroughputRun, 'compile'>;
  try {
    const deadline = Date.now() + 300_000;
    /** The side's CPU as asked, with the messages downstream then. */
    type Probe = { usage: Awaited<ReturnType<typeof side.usage>>; downstream: number };
    let half: Probe | undefined;
    let started: Probe | undefined;
    // Offsets first (cheap, while the side works); then the ids, read once the side is done.
    for (let n = 0; n < count; n = await ctx.book.total(downstream)) {
      if (Date.now() > deadline) throw new Error(`${kind}: only ${n} of ${count} messages downstream after 300 s`);
      if (started === undefined && n > 0) started = { usage: await side.usage(), downstream: n };
      if (half === undefined && n >= count / 2) {
        const usage = await side.usage();
        half = { usage, downstream: (n + (await ctx.book.total(downstream))) / 2 }; // the count as the probe answered, about
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    let cpu = await side.usage();
    const watch = await watching?.stop();
    const ids = await readDistinct(ctx.kafka, downstream, count, deadline);
    if (ids.duplicates > 0) cpu = await side.usage(); // it went on until the last new id
    const calls = (await scriptCalls(ctx.redis)) - callsBefore;
    const msgsPerSec = ((ids.distinct - 1) * 1000) / Math.max(1, ids.lastNewAppendMs - ids.firstAppendMs);
    const secondHalfMsgsPerSec = ((ids.distinct - Math.ceil(ids.distinct / 2)) * 1000) / Math.max(1, ids.lastNewAppendMs - ids.halfAppendMs);
    // No second half when the count went from below half to all between two looks (a tiny run).
    const rest = half === undefined ? undefined : Math.max(1, count - half.downstream);
    const helperMicros = (u: { cpuMicros: number; mainCpuMicros?: number }): number | undefined => (u.mainCpuMicros === undefined ? undefined : u.cpuMicros - u.mainCpuMicros);
    const helperNow = helperMicros(cpu);
    const helperThen = half && helperMicros(half.usage);
    run = {
      side: kind, msgsPerSec, secondHalfMsgsPerSec, mbPerSec: (msgsPerSec * bytesPerMessage) / 1e6, cpuSecPerMillion: cpu.cpuMicros / count,
      ...(started === undefined ? {} : { startCpuMs: started.usage.cpuMicros / 1000, afterStartCpuSecPerMillion: (cpu.cpuMicros - started.usage.cpuMicros) / Math.max(1, count - started.downstream) }),
      helperCpuSecPerMillion: helperNow === undefined ? undefined : helperNow / count,
      secondHalfCpuSecPerMillion: half && rest ? (cpu.cpuMicros - half.usage.cpuMicros) / rest : undefined,
      secondHalfHelperCpuSecPerMillion: helperNow === undefined || helperThen === undefined || !rest ? undefined : (helperNow - helperThen) / rest,
      scriptCallsPerMessage: calls / count, storeErrors: await side.storeErrors(), duplicates: ids.duplicates, loadAverage: os.loadavg()[0], watch,
    };
  } finally {
    await watching?.stop().catch(() => undefined);
    await side.stop();
  }
  const compile = readCompileJobs(side.logFile); // once the side has exited: its whole run
  return compile === undefined ? run : { ...run, compile };
};

export interface ThroughputCase {
  producers: number;
  /** Headers per message, the bench's three included. */
  headers: number;
  /** Ingress partitions. */
  partitions: number;
}

/** Alternates the sides `rounds` times over one prefilled ingress topic (1 KiB values, the case's shape). */
export const measureThroughput = async (
  ctx: BenchContext, { count, rounds, shape }: { count: number; rounds: number; shape: ThroughputCase },
): Promise<{ runs: ThroughputRun[]; bytesPerMessage: number }> => {
  const ingress = await ctx.book.ingress(`tp-${shape.producers}-h${shape.headers}`, shape.partitions);
  const bytesPerMessage = await prefill(ctx.kafka, ingress, count, { producers: shape.producers, valueBytes: 1024, headers: shape.headers, partitions: shape.partitions });
  const setup = ctx.sluiceSetup({ rate: '1000000/s', queue: '1m' });
  const runs: ThroughputRun[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // The order rotates, so drift in the machine's load does not favour one side.
    for (const kind of sideOrder(round)) runs.push(await drain(ctx, kind, ingress, count, setup, bytesPerMessage));
  }
  return { runs, bytesPerMessage };
};
