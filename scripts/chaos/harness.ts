/**
 * What every scenario shares, on top of test/integration/retry/backlog-fixture.ts: the run's
 * context, a scenario's topics and replicas, waiting for the outcome, and the totals it is judged by.
 *
 * `settle()` is the end of every scenario: wait until every offered id is downstream or
 * dead-lettered (or the deadline), then until the sidecars are quiet (nothing held, every
 * ingress and tier partition committed to its end: no copy can still come), check the replicas
 * are still up (/healthz), SIGTERM them and read both topics to their end offsets — so late
 * duplicates are counted too.
 */
import { readFileSync } from 'node:fs';
import { Kafka } from 'kafkajs';
import {
  BacklogScenario, createBacklogScenario, Offer, Offered, Out, Outcome, OutcomeReader, ProducerJudgement, Replica, startReplicas, tierRecords,
} from '../../test/integration/retry/backlog-fixture';
import { sleep } from './faults';
import { healthz, metricSum, metricsText, v1Status } from './probes';
import type { Services } from './services';

export interface Ctx {
  services: Services;
  kafka: Kafka;
  brokers: string[];
  /** The run directory: every scenario's directory (quota file, replica logs) is made in it. */
  runDir: string;
  /** Scenarios opened (their topics are deleted after each scenario). */
  opened: BacklogScenario[];
  /** Progress lines (stderr). */
  note(line: string): void;
}

/** One judged invariant: a row of the report. */
export interface Verdict {
  scenario: string;
  invariant: string;
  measured: string;
  pass: boolean;
  /** More numbers, printed under the row. */
  details: string[];
  /** Where the replica logs are. */
  dir?: string;
}

export interface Scenario {
  name: string;
  /** What it does, one line (printed when it starts). */
  what: string;
  /** Longer than the suite's 4 minutes per scenario (repeated faults). */
  timeoutMs?: number;
  run(ctx: Ctx): Promise<Verdict[]>;
}

export const HOLD_MAX_MS = 5000;
/** sluice's default commit.intervalMs. */
export const COMMIT_INTERVAL_MS = 200;
/** The tier set-up of test/integration/retry/tier-backlog.test.ts: waits over 5 s parked, shorter refusals through the 1s tier. */
export const TIER_SETTINGS = { SLUICE_RETRY_TIERS: '1s,5s', SLUICE_HOLD_MAX_MS: String(HOLD_MAX_MS) };

export const quotaFile = (rate: number, queue: string): string => `default:\n  rate: ${rate}/s\n  queue: ${queue}\n`;

export const open = async (
  ctx: Ctx, o: { quotas: string; settings?: Record<string, string>; partitions?: number; downstreamPartitions?: number },
): Promise<BacklogScenario> => {
  // The fixture makes its directory in os.tmpdir(): point it at the run directory for this call
  // only (replicas inherit the environment, and tsx keeps its compile cache in their tmpdir).
  const tmp = process.env.TMPDIR;
  process.env.TMPDIR = ctx.runDir;
  let s: BacklogScenario;
  try {
    const level: Record<string, string> = process.env.CHAOS_LOG_LEVEL ? { SLUICE_LOG_LEVEL: process.env.CHAOS_LOG_LEVEL } : {};
    s = await createBacklogScenario(ctx.kafka, { brokers: ctx.services.brokers, redisUrl: ctx.services.redisUrl, ...o, settings: { ...level, ...o.settings } });
  } finally {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
  }
  ctx.opened.push(s);
  return s;
};

/** Starts `n` replicas one after the other (the first creates the tiers), each ready before the next. */
export const replicas = (s: BacklogScenario, n: number, env: Record<string, string> = {}): Promise<Replica[]> => startReplicas(s, n, env, 90_000);

export const everyValue = (offered: Offered): string[] => [...offered.byProducer.values()].flat().map((o) => o.value);

/** Several loads as one (distinct producer ids). */
export const mergeOffered = (...all: Offered[]): Offered => ({
  byProducer: new Map(all.flatMap((o) => [...o.byProducer])),
  startedAt: Math.min(...all.map((o) => o.startedAt)),
  endedAt: Math.max(...all.map((o) => o.endedAt)),
});

export const tierTotal = async (kafka: Kafka, s: BacklogScenario): Promise<number> =>
  Object.values(await tierRecords(kafka, s)).reduce((a, b) => a + b, 0);

/** Waits until `n` records were parked on the tiers (or `timeoutMs`); resolves with the count reached. */
export const waitParked = async (kafka: Kafka, s: BacklogScenario, n: number, timeoutMs: number): Promise<number> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const total = await tierTotal(kafka, s).catch(() => 0);
    if (total >= n || Date.now() >= deadline) return total;
    await sleep(250);
  }
};

/** The partitions of `topics` that `groupId` has not committed to their end offset, e.g. `retry.5s/1: committed 2046 of 2079`. */
export const behindEnd = async (kafka: Kafka, groupId: string, topics: string[]): Promise<string[]> => {
  if (topics.length === 0) return [];
  const admin = kafka.admin();
  await admin.connect();
  try {
    const committed = await admin.fetchOffsets({ groupId, topics });
    const behind: string[] = [];
    for (const topic of topics) {
      const mine = committed.find((c) => c.topic === topic)?.partitions ?? [];
      for (const end of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(end.high) === BigInt(end.low)) continue;
        const at = mine.find((p) => p.partition === end.partition)?.offset ?? '-1';
        if (BigInt(at) < BigInt(end.high)) behind.push(`${topic}/${end.partition}: committed ${at} of ${end.high}`);
      }
    }
    return behind;
  } finally {
    await admin.disconnect();
  }
};

/** The retry tiers of `s` that exist now. */
export const tiersOf = async (kafka: Kafka, s: BacklogScenario): Promise<string[]> => {
  const admin = kafka.admin();
  await admin.connect();
  return (await admin.listTopics().finally(() => admin.disconnect())).filter((t) => t.startsWith(`${s.retryBase}.`));
};

/** Waits until nothing is held by `running` and both groups committed ingress and every tier to the end. */
export const quiesce = async (kafka: Kafka, s: BacklogScenario, running: Replica[], timeoutMs = 20_000): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const held = await Promise.all(running.map(async (r) => (await v1Status(r.adminPort))?.held?.messages ?? -1));
      if (held.every((n) => n === 0)) {
        const tiers = await tiersOf(kafka, s);
        if ((await behindEnd(kafka, s.env.SLUICE_GROUP_ID as string, [s.ingress])).length === 0
          && (await behindEnd(kafka, s.env.SLUICE_RETRY_GROUP_ID as string, tiers)).length === 0) return true;
      }
    } catch {
      // a broker that is still recovering: try again
    }
    if (Date.now() >= deadline) return false;
    await sleep(300);
  }
};

export interface Liveness {
  /** Still running (not exited on its own). */
  running: boolean;
  /** /healthz status (0: no answer). */
  health: number;
}

/** Whether the replica has exited (an exit already seen resolves before the timer). */
export const hasExited = (r: Replica): Promise<boolean> => Promise.race([r.exited.then(() => true), sleep(0).then(() => false)]);

export const liveness = async (r: Replica): Promise<Liveness> => {
  const exited = await hasExited(r);
  return { running: !exited, health: exited ? 0 : await healthz(r.port) };
};

export const up = (l: Liveness): boolean => l.running && l.health === 200;

/**
 * Each record once: the reader's consumer may be handed a batch again after its own group
 * rebalanced (a paused broker expires its session too); a real duplicate has an offset of its own.
 */
export const once = (outcome: Outcome): Outcome => {
  const distinct = (list: Out[]): Out[] => {
    const seen = new Set<string>();
    return list.filter((o) => !seen.has(`${o.partition}/${o.offset}`) && Boolean(seen.add(`${o.partition}/${o.offset}`)));
  };
  return { forwarded: distinct(outcome.forwarded), deadLettered: distinct(outcome.deadLettered) };
};

export interface Settled {
  complete: boolean;
  /** Load start → every offered id accounted for (or the deadline), ms. */
  accountedMs: number;
  quiet: boolean;
  live: Liveness[];
  outcome: Outcome;
  stops: { code: number; ms: number }[];
}

/** See the file's comment; `beforeStop` reads what it needs from the replicas (metrics) before they are stopped. */
export const settle = async (
  ctx: Ctx, s: BacklogScenario, reader: OutcomeReader, offered: Offered, running: Replica[], deadline: number,
  beforeStop?: () => Promise<void>,
): Promise<Settled> => {
  const complete = await reader.accounted(everyValue(offered), deadline);
  const accountedMs = Date.now() - offered.startedAt;
  const alive = (await Promise.all(running.map(async (r) => ((await hasExited(r)) ? [] : [r])))).flat();
  const quiet = await quiesce(ctx.kafka, s, alive);
  const live = await Promise.all(running.map(liveness));
  await beforeStop?.();
  const stops = await Promise.all(running.map((r) => r.stop('SIGTERM', 15_000)));
  const outcome = once(await reader.finish());
  return { complete, accountedMs, quiet, live, outcome, stops };
};

export interface Totals {
  offered: number;
  forwarded: number;
  deadLettered: number;
  lost: number;
  duplicates: number;
}

export const totals = (js: readonly ProducerJudgement[]): Totals =>
  js.reduce((t, j) => ({
    offered: t.offered + j.offered, forwarded: t.forwarded + j.forwarded, deadLettered: t.deadLettered + j.deadLettered,
    lost: t.lost + j.lost, duplicates: t.duplicates + j.duplicates,
  }), { offered: 0, forwarded: 0, deadLettered: 0, lost: 0, duplicates: 0 });

export const fmtTotals = (t: Totals): string =>
  `offered ${t.offered}, forwarded ${t.forwarded}, dead-lettered ${t.deadLettered}, lost ${t.lost}, duplicates ${t.duplicates}`;

export const fmtSettled = (st: Settled): string =>
  `all accounted for: ${st.complete ? `yes, ${(st.accountedMs / 1000).toFixed(1)} s after the load started` : `NO, deadline passed after ${(st.accountedMs / 1000).toFixed(1)} s`}; quiet before the stop: ${st.quiet}`;

export const fmtLive = (live: readonly Liveness[]): string =>
  live.map((l) => (l.running ? `/healthz ${l.health || 'no answer'}` : 'exited on its own')).join(', ');

/** Lines of the replica's log containing `needle`: how many, and the time of the last one (evidence for the report). */
export const logLines = (r: Replica, needle: string): { count: number; last?: string } => {
  let count = 0;
  let last: string | undefined;
  try {
    for (const line of readFileSync(r.log, 'utf8').split('\n')) {
      if (!line.includes(needle)) continue;
      count += 1;
      last = /"time":"([^"]+)"/.exec(line)?.[1] ?? last;
    }
  } catch {
    // no log
  }
  return { count, last };
};

/** Each replica's view of its groups (/v1/status) and the broker's (members per group): who holds what. */
export const groupViews = async (kafka: Kafka, s: BacklogScenario, running: Replica[]): Promise<{ text: string; members: { ingress: number; tiers: number } }> => {
  const views = await Promise.all(running.map(async (r, i) => {
    const groups = (await v1Status(r.adminPort))?.groups;
    if (!groups) return `replica ${i + 1}: no /v1/status`;
    const crashes = metricSum(await metricsText(r.port).catch(() => ''), 'sluice_consumer_crashes_total');
    const view = groups.map((g) => {
      const held = (g.assigned ?? []).map((a) => `${a.topic === s.ingress ? '' : `${a.topic.slice(s.retryBase.length + 1)}:`}[${a.partitions.join(',')}]`).join(' ') || '[]';
      return `${g.groupId.endsWith('.retry') ? 'tiers' : 'ingress'} ${held}${g.crashed ? ' (crashed)' : ''}${g.joined ? '' : ' (never joined)'}`;
    });
    return `replica ${i + 1}: ${view.join(', ')}, consumer crashes ${crashes}`;
  }));
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ingressGroup = s.env.SLUICE_GROUP_ID as string;
    const { groups } = await admin.describeGroups([ingressGroup, s.env.SLUICE_RETRY_GROUP_ID as string]);
    const count = (id: string): number => groups.find((g) => g.groupId === id)?.members.length ?? 0;
    return {
      text: `${views.join('; ')}; broker: ${groups.map((g) => `${g.groupId === ingressGroup ? 'ingress' : 'tiers'} group ${g.members.length} member(s) (${g.state})`).join(', ')}`,
      members: { ingress: count(ingressGroup), tiers: count(s.env.SLUICE_RETRY_GROUP_ID as string) },
    };
  } finally {
    await admin.disconnect();
  }
};

/** CPU time (user + system) the process has used, in ms, from /proc (0 when it is gone). */
export const cpuMs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return 0;
  }
};

/**
 * What may have been written and not committed when a replica dies or loses its partitions
 * (README, failure modes: "held messages ≤ hold.maxMs plus one commit interval"; a moved
 * partition: "bounded by hold.maxMs of that partition"): each producer's releases over
 * hold.maxMs (at most its quota) plus the ingress of one commit interval.
 */
export const inFlightBound = (load: readonly Offer[], quotaPerSecond: number): number =>
  Math.ceil(load.reduce((n, o) => n + (Math.min(o.perSecond, quotaPerSecond) * HOLD_MAX_MS + o.perSecond * COMMIT_INTERVAL_MS) / 1000, 0));

export const fmtBound = (load: readonly Offer[], quotaPerSecond: number): string =>
  `in flight: hold.maxMs of releases + one commit interval of ingress = ${inFlightBound(load, quotaPerSecond)}`;

/** Where the extra copies are: per producer, and when they were appended relative to `ref` (s). */
export const duplicateDetails = (outcome: Outcome, ref: number, what = 'the fault'): string => {
  const seen = new Set<string>();
  const extra: Out[] = [];
  for (const o of [...outcome.forwarded].sort((a, b) => a.appendMs - b.appendMs)) {
    if (seen.has(o.value)) extra.push(o);
    else seen.add(o.value);
  }
  if (extra.length === 0) return 'no second copies';
  const per = new Map<string, number>();
  for (const o of extra) per.set(o.producer, (per.get(o.producer) ?? 0) + 1);
  const rel = (t: number): string => ((t - ref) / 1000).toFixed(1);
  return `second copies: ${[...per].map(([p, n]) => `${p} ${n}`).join(', ')}, appended ${rel(extra[0]?.appendMs ?? ref)}–${rel(extra[extra.length - 1]?.appendMs ?? ref)} s after ${what}`;
};

/** Forwards per `bucketMs` since `from` (broker append time): how the outflow went. */
export const forwardsPer = (outcome: Outcome, from: number, bucketMs = 5_000): string => {
  const buckets: number[] = [];
  const firsts = new Map<string, number>();
  for (const o of outcome.forwarded) firsts.set(o.value, Math.min(firsts.get(o.value) ?? Infinity, o.appendMs));
  for (const t of firsts.values()) {
    const i = Math.max(0, Math.floor((t - from) / bucketMs));
    buckets[i] = (buckets[i] ?? 0) + 1;
  }
  return `[${Array.from(buckets, (n) => n ?? 0).join(' ')}] per ${bucketMs / 1000} s`;
};

/** Per producer, the longest wait: offered (acknowledged at ingress) → first copy appended downstream, in s. */
export const longestWaits = (offered: Offered, outcome: Outcome): string => {
  const first = new Map<string, number>();
  for (const o of outcome.forwarded) first.set(o.value, Math.min(first.get(o.value) ?? Infinity, o.appendMs));
  return [...offered.byProducer].map(([id, list]) => {
    const worst = list.reduce((w, o) => Math.max(w, (first.get(o.value) ?? o.at) - o.at), 0);
    return `${id} ${(worst / 1000).toFixed(1)} s`;
  }).join(', ');
};
