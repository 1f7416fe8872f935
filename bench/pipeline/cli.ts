/**
 * `npm run bench`: sluice against the plain kafkajs pipe on the real broker and Redis. Runs
 * the phases in turn (BENCH_PHASES=throughput,latency,accuracy,backlog,memory chooses some;
 * `BENCH_PHASES=backlog` alone takes about 4 minutes), prints one markdown table, writes
 * bench/results/<date>.json. Progress goes to stderr; the table alone to stdout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureAccuracy } from './accuracy';
import { type BacklogRun, measureBacklog } from './backlog';
import { createContext } from './context';
import { measureLatency } from './latency';
import { measureMemory, type MemoryResult } from './memory';
import { untilQuiet } from './quiet';
import { renderTable } from './report';
import { servicesEnv } from './services-env';
import { buildSides, measuredSides } from './side';
import { benchSettings, type Phase } from './settings';
import { buildResult, caseLabel, PLAIN_HEADERS, type LatencySummary, summarizeLatency, summarizeThroughput, type ThroughputSummary } from './summary';
import { measureThroughput } from './throughput';
import { configureRedisWatch } from './timeout-watch';

const started = Date.now();
const say = (text: string): void => {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);
};

const main = async (): Promise<void> => {
  const settings = benchSettings(process.env);
  buildSides();
  const loadBefore = os.loadavg();
  const ctx = await createContext(servicesEnv(process.env));
  // Redis's own view of slow moments during the runs (timeout-watch.ts); restored at the end.
  const redisWatch = await configureRedisWatch(ctx.redis);
  // Interrupted: remove the run's topics (sides end by themselves when this process goes).
  const interrupt = (): void => {
    say('interrupted: deleting the run\'s topics');
    void redisWatch.restore().catch(() => undefined).then(() => ctx.close()).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  say(`load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}; side logs in ${ctx.logDir}`);
  const selected = (phase: Phase): boolean => settings.phases.includes(phase);
  try {
    const throughput: ThroughputSummary[] = [];
    if (selected('throughput')) {
      for (const shape of settings.throughputCases) {
        say(`throughput: ${settings.count} × 1 KiB from ${caseLabel(shape)}, ${settings.rounds} alternations of ${measuredSides().join(', ')}`);
        const { runs, bytesPerMessage } = await measureThroughput(ctx, { count: settings.count, rounds: settings.rounds, shape });
        throughput.push(summarizeThroughput(runs, shape, settings.count, bytesPerMessage));
      }
    }
    let latency: LatencySummary | undefined;
    let latencyLow: LatencySummary | undefined;
    if (selected('latency')) {
      await ctx.book.deleteAll();
      const rest = await untilQuiet();
      say(`latency: the topics so far deleted, the page cache flushed; CPUs ${(rest.busy * 100).toFixed(0)} % busy after ${(rest.waitedMs / 1000).toFixed(0)} s`);
      const headline = throughput.find((t) => t.headers === PLAIN_HEADERS && t.producers >= 100) ?? throughput[0];
      const rate = settings.latencyRate ?? Math.round(headline.pipeMsgsPerSec.median / 2);
      const { latencySeconds: seconds, latencyWarmSeconds: warmSeconds, rounds } = settings;
      say(`latency: ${rate} msg/s (${settings.latencyRate ? 'BENCH_LATENCY_RATE' : 'half the pipe\'s median'}) for ${seconds} s, then ${warmSeconds} s, ${rounds} alternations`);
      latency = summarizeLatency(await measureLatency(ctx, { rate, seconds, warmSeconds, rounds }), { rate, seconds, warmSeconds });
      const low = settings.latencyLowRate;
      say(`latency: ${low} msg/s (below the sidecar's saturation) for ${seconds} s, then ${warmSeconds} s, ${rounds} alternations`);
      latencyLow = summarizeLatency(await measureLatency(ctx, { rate: low, seconds, warmSeconds, rounds }), { rate: low, seconds, warmSeconds });
    }
    const accuracyRuns = [];
    if (selected('accuracy')) {
      for (const replicas of [1, 2]) {
        const timeout = settings.accuracyRedisTimeoutMs === undefined ? '' : `, redis.timeoutMs ${settings.accuracyRedisTimeoutMs}`;
        say(`accuracy: ${settings.accuracyProducers} producers at 3× ${settings.quotaPerSec}/s for ${settings.accuracySeconds} s, ${replicas} replica(s)${timeout}`);
        accuracyRuns.push(await measureAccuracy(ctx, {
          replicas, seconds: settings.accuracySeconds, producers: settings.accuracyProducers, quotaPerSec: settings.quotaPerSec, queue: `${settings.queueSeconds}s`,
          redisTimeoutMs: settings.accuracyRedisTimeoutMs,
        }));
      }
    }
    const backlogRuns: BacklogRun[] = [];
    if (selected('backlog')) {
      for (const queue of settings.backlogQueues) {
        for (const replicas of [1, 2]) {
          say(`backlog: ${settings.backlogProducers} producers at 3× ${settings.quotaPerSec}/s for ${settings.backlogSeconds} s, queue ${queue}, ${replicas} replica(s), default tiers, then drained`);
          const run = await measureBacklog(ctx, { replicas, seconds: settings.backlogSeconds, producers: settings.backlogProducers, quotaPerSec: settings.quotaPerSec, queue });
          say(`backlog: quota used min ${run.minQuotaUsedPct.toFixed(1)}%, busiest second ${run.maxBusiestRatio.toFixed(2)}× rate, ${run.tierWrites.perParked.toFixed(2)} tier writes per parked message, drained in ${run.drainSeconds.toFixed(0)} s`);
          backlogRuns.push(run);
        }
      }
    }
    let memory: MemoryResult | undefined;
    if (selected('memory')) {
      say(`memory: ${settings.memoryProducers} distinct producers, one message each, rule 1/h`);
      memory = await measureMemory(ctx, settings.memoryProducers);
    }
    const date = new Date().toISOString();
    const result = buildResult({
      date,
      environment: {
        node: process.version, cpus: os.cpus().length, loadAverageBefore: loadBefore, loadAverageAfter: os.loadavg(),
        seconds: Math.round((Date.now() - started) / 1000), settings, sides: 'child processes (compiled: node dist/main.js and the pipe compiled by tsc), see bench/pipeline/side.ts', sluiceRoot: process.env.BENCH_SLUICE_ROOT ?? 'this work tree', baselineRoot: process.env.BENCH_BASELINE_ROOT,
      },
      throughput, latency, latencyLow,
      accuracy: selected('accuracy') ? {
        quotaPerSec: settings.quotaPerSec, seconds: settings.accuracySeconds, queue: `${settings.queueSeconds}s`,
        capacityMessages: settings.quotaPerSec * settings.queueSeconds, runs: accuracyRuns,
      } : undefined,
      backlog: selected('backlog') ? { quotaPerSec: settings.quotaPerSec, seconds: settings.backlogSeconds, producers: settings.backlogProducers, runs: backlogRuns } : undefined,
      memory,
    });
    const dir = path.resolve(__dirname, '../results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${renderTable(result)}\n\nphases ${settings.phases.join(', ')}; ${settings.count} messages per throughput run; load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} after; ${result.environment.seconds} s; ${file}\n`);
  } finally {
    await redisWatch.restore();
    await ctx.close();
  }
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
