/**
 * What a sluice run's store timeouts coincided with, measured on both sides of the limiter's
 * Redis calls:
 * - the sidecar: its event-loop delay (prom-client's `sluice_nodejs_eventloop_lag_max_seconds`,
 *   a perf_hooks histogram that prom-client resets at every collect, so it is scraped once as
 *   the run starts and then every second: each sample is the max since the one before) and
 *   `sluice_store_errors_total` at each scrape; and its log's "limiter store call failed" lines
 *   (logged at the first failure of each streak) with their times;
 * - Redis: `LATENCY LATEST` (latency-monitor-threshold set for the bench) and `SLOWLOG GET`,
 *   both reset as the run starts;
 * - an independent prober in the bench process: its own ioredis connection (no
 *   auto-pipelining), a PING every 10 ms, each round trip timed, and this process's own event
 *   loop (monitorEventLoopDelay, and a 5 ms tick for when it stalled), so a slow round trip of
 *   a busy machine can be told from one of a stalled prober.
 * Times are epoch ms (the sidecar's pino `time` is the same clock) and reported relative to
 * the run's start.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Redis from 'ioredis';

/** The settings set for the bench and restored at its end. */
export const LATENCY_THRESHOLD_MS = 10;
export const SLOWLOG_SLOWER_THAN_MICROS = 10_000;
const PROBE_EVERY_MS = 10;
const SCRAPE_EVERY_MS = 1000;
const TICK_MS = 5;

/** A moment of the run: ms from its start. */
export interface Spike {
  atMs: number;
  ms: number;
}

export interface TimeoutWatch {
  /** The sidecar's redis.timeoutMs. */
  timeoutMs: number;
  /** The run's length as watched (ms). */
  watchedMs: number;
  sidecar: {
    /** Max event-loop delay over the run (ms). */
    loopMaxMs: number;
    /** Scrapes (about every 1 s) whose loop delay max was ≥ timeoutMs: end of the interval, its max. */
    loopSpikes: Spike[];
    /** Where store errors rose: the scrape's time and how many since the one before. */
    errorsRose: Spike[];
    /** The log's "limiter store call failed" lines (first failure of a streak): time and message. */
    failureLog: { atMs: number; err: string }[];
  };
  prober: {
    pings: number;
    maxRttMs: number;
    p99RttMs: number;
    /** Round trips ≥ timeoutMs. */
    slow: number;
    /** The slow ones (at most 20): sent at, round trip, the prober's own loop stall meanwhile. */
    slowPings: { atMs: number; rttMs: number; ownStallMs: number }[];
    /** The bench process's own event-loop delay max over the run (monitorEventLoopDelay). */
    ownLoopMaxMs: number;
  };
  redis: {
    /** LATENCY LATEST: event, last at (ms from the run's start), latest ms, max ms. */
    latency: { event: string; atMs: number; latestMs: number; maxMs: number }[];
    /** SLOWLOG GET: at (ms from the run's start, 1 s resolution), duration ms, command. */
    slowlog: { atMs: number; ms: number; command: string }[];
  };
}

/** CONFIG SET of the bench's latency monitor and slowlog thresholds; `restore` puts the old values back. */
export const configureRedisWatch = async (redis: Redis): Promise<{ restore(): Promise<void> }> => {
  const get = async (name: string): Promise<string> => ((await redis.config('GET', name)) as string[])[1] ?? '0';
  const before = { latency: await get('latency-monitor-threshold'), slowlog: await get('slowlog-log-slower-than') };
  await redis.config('SET', 'latency-monitor-threshold', String(LATENCY_THRESHOLD_MS));
  await redis.config('SET', 'slowlog-log-slower-than', String(SLOWLOG_SLOWER_THAN_MICROS));
  return {
    async restore() {
      await redis.config('SET', 'latency-monitor-threshold', before.latency);
      await redis.config('SET', 'slowlog-log-slower-than', before.slowlog);
    },
  };
};

/** The sidecar's metric values from its /metrics text. */
export const metricOf = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

/** The log's store-failure lines (pino JSON) at or after `since`, with their times. */
export const failureLines = (log: string, since: number): { at: number; err: string }[] =>
  log.split('\n').flatMap((line) => {
    if (!line.includes('limiter store call failed')) return [];
    try {
      const entry = JSON.parse(line) as { time?: number | string; err?: { message?: string } };
      // pino's time: epoch ms, or an ISO string (sluice's logger writes ISO).
      const at = typeof entry.time === 'string' ? Date.parse(entry.time) : Number(entry.time);
      return at >= since ? [{ at, err: String(entry.err?.message ?? '') }] : [];
    } catch {
      return [];
    }
  });

const rounded = (x: number): number => Math.round(x * 10) / 10;

/** Starts watching a sluice run (its /metrics on `port`, its log at `logFile`); `stop` ends and reports. */
export const watchRun = async (options: { redis: Redis; redisUrl: string; port: number; logFile: string; timeoutMs: number }): Promise<{ stop(): Promise<TimeoutWatch> }> => {
  const { redis, port, logFile, timeoutMs } = options;
  const start = Date.now();
  await redis.latency('RESET');
  await redis.slowlog('RESET');

  // The sidecar: one scrape now (resets its loop histogram), then every second.
  const scrape = async (): Promise<{ lagMaxMs?: number; errors?: number }> => {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
    const lag = metricOf(text, 'sluice_nodejs_eventloop_lag_max_seconds');
    return { lagMaxMs: lag === undefined ? undefined : lag * 1000, errors: metricOf(text, 'sluice_store_errors_total') };
  };
  const first = await scrape();
  let lastErrors = first.errors ?? 0;
  let loopMaxMs = 0;
  const loopSpikes: Spike[] = [];
  const errorsRose: Spike[] = [];
  const record = ({ lagMaxMs, errors }: { lagMaxMs?: number; errors?: number }): void => {
    const atMs = Date.now() - start;
    if (lagMaxMs !== undefined) {
      loopMaxMs = Math.max(loopMaxMs, lagMaxMs);
      if (lagMaxMs >= timeoutMs) loopSpikes.push({ atMs, ms: rounded(lagMaxMs) });
    }
    if (errors !== undefined && errors > lastErrors) {
      errorsRose.push({ atMs, ms: errors - lastErrors });
      lastErrors = errors;
    }
  };
  let scraping = Promise.resolve();
  const scraper = setInterval(() => {
    scraping = scraping.then(async () => record(await scrape()));
  }, SCRAPE_EVERY_MS);

  // The prober: its own connection, one PING every 10 ms (none while one is out).
  const prober = new Redis(options.redisUrl, { enableAutoPipelining: false, maxRetriesPerRequest: 0, lazyConnect: false });
  prober.on('error', () => undefined);
  await prober.ping();
  const ownLoop = monitorEventLoopDelay({ resolution: 10 });
  ownLoop.enable();
  const stalls: Spike[] = []; // this process's 5 ms tick, when late by ≥ 10 ms: when it ran, how late
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    const late = now - lastTick - TICK_MS;
    if (late >= 10) stalls.push({ atMs: Date.now() - start, ms: rounded(late) });
    lastTick = now;
  }, TICK_MS);
  const rtts: number[] = [];
  const slowPings: { at: number; atMs: number; rttMs: number }[] = [];
  let out = false;
  const pinger = setInterval(() => {
    if (out) return;
    out = true;
    const at = Date.now();
    const sent = performance.now();
    prober.ping().then(() => {
      const rtt = performance.now() - sent;
      rtts.push(rtt);
      if (rtt >= timeoutMs) slowPings.push({ at, atMs: at - start, rttMs: rounded(rtt) });
    }, () => undefined).finally(() => {
      out = false;
    });
  }, PROBE_EVERY_MS);

  let stopped: Promise<TimeoutWatch> | undefined;
  const stop = async (): Promise<TimeoutWatch> => {
    clearInterval(pinger);
    clearInterval(ticker);
    clearInterval(scraper);
    await scraping;
    record(await scrape());
    ownLoop.disable();
    prober.disconnect();
    const watchedMs = Date.now() - start;
    const latency = ((await redis.latency('LATEST')) as [string, number, number, number][])
      .map(([event, at, latestMs, maxMs]) => ({ event, atMs: Number(at) * 1000 - start, latestMs: Number(latestMs), maxMs: Number(maxMs) }));
    const slowlog = ((await redis.slowlog('GET', 128)) as [number, number, number, string[]][])
      .map(([, at, micros, args]) => ({ atMs: Number(at) * 1000 - start, ms: Number(micros) / 1000, command: args.slice(0, 2).join(' ') }));
    let log = '';
    try {
      log = readFileSync(logFile, 'utf8');
    } catch {
      // no log: no lines
    }
    const sorted = [...rtts].sort((a, b) => a - b);
    // The prober's own stall during a slow ping: the tick lateness seen while it was out.
    const ownStall = (p: { atMs: number; rttMs: number }): number =>
      stalls.filter((s) => s.atMs >= p.atMs && s.atMs - s.ms <= p.atMs + p.rttMs + TICK_MS).reduce((m, s) => Math.max(m, s.ms), 0);
    return {
      timeoutMs,
      watchedMs,
      sidecar: { loopMaxMs: rounded(loopMaxMs), loopSpikes, errorsRose, failureLog: failureLines(log, start).map(({ at, err }) => ({ atMs: at - start, err })) },
      prober: {
        pings: rtts.length,
        maxRttMs: rounded(sorted[sorted.length - 1] ?? NaN),
        p99RttMs: rounded(sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)] ?? NaN),
        slow: slowPings.length,
        slowPings: slowPings.slice(0, 20).map((p) => ({ atMs: p.atMs, rttMs: p.rttMs, ownStallMs: ownStall(p) })),
        ownLoopMaxMs: rounded(ownLoop.max / 1e6),
      },
      redis: { latency, slowlog },
    };
  };
  // Once only: the run's end, or its finally when it failed.
  return { stop: () => (stopped ??= stop()) };
};

/** One run's coincidences, compact, for the table: `3 timeouts: loop 71 ms, ping 4.1 ms (0 ≥ 50), own loop 12, Redis 0/0`. */
export const describeWatch = (errors: number, w: TimeoutWatch): string => {
  const redisMax = w.redis.latency.reduce((m, e) => Math.max(m, e.maxMs), 0);
  const slowMax = w.redis.slowlog.reduce((m, e) => Math.max(m, e.ms), 0);
  return `${errors}: loop ${w.sidecar.loopMaxMs.toFixed(0)} ms; ping ${w.prober.maxRttMs.toFixed(1)} ms (${w.prober.slow} ≥ ${w.timeoutMs}), own loop ${w.prober.ownLoopMaxMs.toFixed(0)}; `
    + `Redis latency ${w.redis.latency.length === 0 ? 'none' : `${redisMax} ms`}, slowlog ${w.redis.slowlog.length === 0 ? 'none' : `${w.redis.slowlog.length} (max ${slowMax.toFixed(1)} ms)`}`;
};
