/**
 * Black-box measuring of a backlog that goes through the retry tiers (issue 9), shared by
 * tier-backlog.test.ts, scripts/check-backlog.ts and the bench's backlog phases. Nothing here
 * reads sluice's code or its logs: it starts real `sluice run` processes (`node --import tsx
 * src/main.ts run`, each in a process group of its own, owned through
 * test/helpers/owned-processes.ts so that none outlives the test or script), waits for them through
 * /readyz, offers load from independent kafkajs clients, and judges by message ids and the
 * broker's append time (LogAppendTime on the downstream topic):
 * - scenario: random ingress / downstream / retry / dead-letter names, a quota file, settings;
 * - replicas: start, ready, signal, exit code and time; `endAllReplicas()` for clean-up;
 * - load: paced producers (value `<id>:<seq>`, header producer-id), offered times kept;
 * - outcome: downstream and dead-letter records until every offered id is accounted for,
 *   records appended to the tier topics;
 * - judgement (pure): lost, duplicates, quota used while backlogged, busiest second, order.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { IHeaders, Kafka, logLevel, Message, Partitioners } from 'kafkajs';
import { freePort } from '../../../scripts/services/ports';
import { createTopic } from '../../helpers/kafka';
import { killOwned, Owned, spawnOwned, stopAllOwned } from '../../helpers/owned-processes';
import { randomGroupId, randomKeyPrefix, randomName } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';

const ROOT = resolve(__dirname, '../../..');

// ---------------------------------------------------------------- scenario

export interface BacklogScenario {
  ingress: string;
  downstream: string;
  /** Base name of the retry tiers: every tier topic starts with `<retryBase>.`. */
  retryBase: string;
  deadLetter: string;
  dir: string;
  env: Record<string, string>;
}

export interface ScenarioOptions {
  brokers: string;
  redisUrl: string;
  partitions?: number;
  /** The quota file's text. */
  quotas: string;
  /** More SLUICE_* settings (tiers, hold, …). */
  settings?: Record<string, string>;
  /** Downstream partitions (default 1: one append order). */
  downstreamPartitions?: number;
}

export const createBacklogScenario = async (kafka: Kafka, o: ScenarioOptions): Promise<BacklogScenario> => {
  const ingress = await createTopic(kafka, { prefix: 'bl-in', partitions: o.partitions ?? 2 });
  const downstream = await createTopic(kafka, {
    prefix: 'bl-out', partitions: o.downstreamPartitions ?? 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
  });
  const dir = mkdtempSync(join(tmpdir(), 'sluice-backlog-'));
  writeFileSync(join(dir, 'quotas.yaml'), o.quotas);
  const group = randomGroupId('bl');
  return {
    ingress, downstream, retryBase: `${ingress}.retry`, deadLetter: `${ingress}.dlq`, dir,
    env: {
      SLUICE_KAFKA_BROKERS: o.brokers,
      SLUICE_REDIS_URL: o.redisUrl,
      SLUICE_INGRESS_TOPIC: ingress,
      SLUICE_DOWNSTREAM_TOPIC: downstream,
      SLUICE_RETRY_TOPIC: `${ingress}.retry`,
      SLUICE_DEAD_LETTER_TOPIC: `${ingress}.dlq`,
      SLUICE_GROUP_ID: group,
      SLUICE_RETRY_GROUP_ID: `${group}.retry`,
      SLUICE_TOPICS_CREATE: 'true',
      SLUICE_QUOTAS_FILE: join(dir, 'quotas.yaml'),
      SLUICE_REDIS_KEY_PREFIX: randomKeyPrefix('backlog'),
      SLUICE_HTTP_HOST: '127.0.0.1',
      SLUICE_LOG_LEVEL: 'warn',
      ...o.settings,
    },
  };
};

/** Deletes every topic of the scenario (tiers included); errors are ignored. */
export const deleteScenarioTopics = async (kafka: Kafka, s: BacklogScenario): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const mine = (await admin.listTopics()).filter((t) => t === s.ingress || t === s.downstream || t === s.deadLetter || t.startsWith(`${s.retryBase}.`));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine, timeout: 30_000 });
  } catch {
    // clean-up only
  } finally {
    await admin.disconnect();
  }
};

// ---------------------------------------------------------------- replicas

export interface Exit {
  /** The exit code; 128 + n when ended by a signal. */
  code: number;
  at: number;
}

export interface Replica {
  pid: number;
  /** The main listener: /healthz, /readyz, /metrics. */
  port: number;
  /** The admin listener (127.0.0.1): /v1/*. */
  adminPort: number;
  log: string;
  exited: Promise<Exit>;
  /** Resolves once /readyz answers 200 (the consumers joined their groups). */
  ready(timeoutMs?: number): Promise<void>;
  /** Sends `signal` to the replica (no wait). */
  signal(signal: NodeJS.Signals): void;
  /** Signals and waits for the exit; SIGKILLs it after `budgetMs`. */
  stop(signal?: NodeJS.Signals, budgetMs?: number): Promise<Exit & { ms: number }>;
  /** Waits for the exit without signalling; SIGKILLs it after `budgetMs`. */
  exit(budgetMs?: number): Promise<Exit>;
}

/** The replicas still running, each a child in a process group of its own. */
const live = new Set<Owned>();

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/**
 * Starts `sluice run` (SLUICE_ROOT_UNDER_TEST: from another work tree); output to a log file.
 * The replica is owned (test/helpers/owned-processes.ts): a child in a process group of its
 * own, SIGKILLed with that group by `endAllReplicas()`, by a test file's hooks when it imports
 * test/helpers/processes.ts, by the integration environment at teardown, and outside Jest when
 * this process exits.
 */
export const startReplica = async (s: BacklogScenario, env: Record<string, string> = {}): Promise<Replica> => {
  const [port, adminPort] = [await freePort(), await freePort()];
  const root = process.env.SLUICE_ROOT_UNDER_TEST || ROOT;
  const log = join(s.dir, `${randomName('replica')}.log`);
  const fd = openSync(log, 'a');
  let owned: Owned;
  try {
    // node runs sluice itself (tsx as a loader, no wrapper process), so a signal to the pid reaches it.
    owned = spawnOwned(process.execPath, ['--import', 'tsx', join(root, 'src/main.ts'), 'run'], {
      cwd: root, stdio: ['ignore', fd, fd],
      env: { ...process.env, ...s.env, SLUICE_HTTP_PORT: String(port), SLUICE_HTTP_ADMIN_PORT: String(adminPort), ...env },
    });
  } finally {
    closeSync(fd);
  }
  const child = owned.process;
  live.add(owned);
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => {
    live.delete(owned);
    done({ code: code ?? 128 + (SIGNALS[signal ?? ''] ?? 0), at: Date.now() });
  }));
  let exit: Exit | undefined;
  void exited.then((e) => void (exit = e));
  const replica: Replica = {
    pid: child.pid as number, port, adminPort, log, exited,
    async ready(timeoutMs = 60_000) {
      await waitFor(async () => {
        if (exit) throw new Error(`sluice exited with ${exit.code} before it was ready; see ${log}`);
        return fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      }, { timeoutMs, intervalMs: 100, message: `sluice on port ${port} to be ready (log ${log})` });
      if (exit) throw new Error(`sluice exited with ${exit.code}; see ${log}`);
    },
    signal: (signal) => {
      if (exit) return;
      if (signal === 'SIGKILL') killOwned(owned); // with whatever it started
      else {
        try {
          child.kill(signal);
        } catch {
          // already gone
        }
      }
    },
    async stop(signal = 'SIGTERM', budgetMs = 20_000) {
      const from = Date.now();
      replica.signal(signal);
      const e = await replica.exit(budgetMs);
      return { ...e, ms: e.at - from };
    },
    async exit(budgetMs = 20_000) {
      const kill = setTimeout(() => killOwned(owned), budgetMs);
      return exited.finally(() => clearTimeout(kill));
    },
  };
  return replica;
};

/** The last `n` lines of a replica's log (to show why it exited when it was not asked to). */
/** `n` replicas, one at a time, each ready before the next (the first creates the retry tiers and the dead-letter topic). */
export const startReplicas = async (s: BacklogScenario, n: number, env: Record<string, string> = {}, readyMs?: number): Promise<Replica[]> => {
  const started: Replica[] = [];
  for (let i = 0; i < n; i += 1) {
    const r = await startReplica(s, env);
    started.push(r);
    await r.ready(readyMs);
  }
  return started;
};

export const lastLines = (replica: Replica, n = 8): string[] => {
  try {
    return readFileSync(replica.log, 'utf8').trimEnd().split('\n').slice(-n);
  } catch (error) {
    return [`(no log: ${(error as Error).message})`];
  }
};

/** SIGKILLs every replica still running, with its process group (clean-up), and waits until they are gone. */
export const endAllReplicas = async (): Promise<void> => {
  await stopAllOwned([...live]);
};

// ---------------------------------------------------------------- load

export interface Offer {
  id: string;
  perSecond: number;
  seconds: number;
  /** Keys `<id>-<seq mod keys>`; 1 (default): every message keyed `<id>`, so one partition and one order. */
  keys?: number;
  /** Headers besides `producer-id` for message `seq` (the chaos suite's forged ones). */
  headers?(seq: number): IHeaders;
}

export interface Offered {
  /** Every value offered, `<id>:<seq>`, by producer, with the time its send was acknowledged. */
  byProducer: Map<string, { value: string; key: string; at: number }[]>;
  startedAt: number;
  endedAt: number;
}

const keyOf = (o: Offer, seq: number): string => ((o.keys ?? 1) <= 1 ? o.id : `${o.id}-${seq % (o.keys as number)}`);

/**
 * Each producer on its own kafkajs client, in 100 ms ticks paced on elapsed time (a slow send
 * is caught up, not dropped); resolves once every send was acknowledged. With `until`: no new
 * tick is offered once it is aborted (what a test no longer needs once its checks are done);
 * the sends in flight are still acknowledged, and `byProducer` holds only what was offered.
 */
export const offerLoad = async (brokers: string[], topic: string, offers: readonly Offer[], { until }: { until?: AbortSignal } = {}): Promise<Offered> => {
  const byProducer: Offered['byProducer'] = new Map(offers.map((o) => [o.id, []]));
  const producers = await Promise.all(offers.map(async (o) => {
    const kafka = new Kafka({ clientId: randomName(`load-${o.id}`), brokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    return producer;
  }));
  const startedAt = Date.now();
  await Promise.all(offers.map(async (o, i) => {
    const producer = producers[i];
    const total = Math.round(o.perSecond * o.seconds);
    const out = byProducer.get(o.id) as { value: string; key: string; at: number }[];
    let seq = 0;
    try {
      while (seq < total && !until?.aborted) {
        const tick = Math.floor((Date.now() - startedAt) / 100) + 1;
        const due = Math.min(total, Math.round((tick * o.perSecond) / 10));
        const messages: Message[] = [];
        for (; seq < due; seq += 1) {
          messages.push({ key: keyOf(o, seq), value: `${o.id}:${seq}`, headers: { 'producer-id': o.id, ...o.headers?.(seq) } });
        }
        if (messages.length > 0) {
          await producer.send({ topic, messages, acks: -1 });
          const at = Date.now();
          for (const m of messages) out.push({ value: String(m.value), key: String(m.key), at });
        }
        if (seq < total && !until?.aborted) await new Promise((r) => setTimeout(r, Math.max(0, startedAt + tick * 100 - Date.now())));
      }
    } finally {
      await producer.disconnect();
    }
  }));
  return { byProducer, startedAt, endedAt: Date.now() };
};

// ---------------------------------------------------------------- outcome

export interface Out {
  value: string;
  producer: string;
  key: string;
  partition: number;
  offset: string;
  appendMs: number;
  /** Its `sluice-attempt` header (0: none, never parked) and `sluice-waited-ms` (undefined: none). */
  attempt: number;
  waitedMs?: number;
}

export interface Outcome {
  forwarded: Out[];
  deadLettered: Out[];
}

export interface OutcomeReader {
  /** Waits until every value is downstream or dead-lettered, or the deadline passes (no throw); true when all came. */
  accounted(values: readonly string[], deadline: number): Promise<boolean>;
  /** Reads on until the end offsets of now, then disconnects; returns everything read. */
  finish(): Promise<Outcome>;
}

const producerOfValue = (value: string): string => value.slice(0, value.lastIndexOf(':'));

/** One consumer on the downstream and dead-letter topics, from the beginning. */
export const readOutcome = async (kafka: Kafka, s: BacklogScenario): Promise<OutcomeReader> => {
  const outcome: Outcome = { forwarded: [], deadLettered: [] };
  const seen = new Set<string>();
  const last = new Map<string, bigint>();
  const consumer = kafka.consumer({ groupId: randomGroupId('bl-read'), maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  await consumer.subscribe({ topics: [s.downstream, s.deadLetter], fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const value = String(m.value);
        const waited = m.headers?.['sluice-waited-ms'];
        const out = {
          value, producer: producerOfValue(value), key: String(m.key), partition: batch.partition, offset: m.offset, appendMs: Number(m.timestamp),
          attempt: Number(m.headers?.['sluice-attempt'] ?? 0), waitedMs: waited === undefined ? undefined : Number(waited),
        };
        (batch.topic === s.downstream ? outcome.forwarded : outcome.deadLettered).push(out);
        seen.add(value);
        last.set(`${batch.topic}/${batch.partition}`, BigInt(m.offset));
      }
    },
  });
  return {
    async accounted(values, deadline) {
      try {
        await waitFor(() => values.every((v) => seen.has(v)), { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 250 });
        return true;
      } catch {
        return false;
      }
    },
    async finish() {
      const admin = kafka.admin();
      await admin.connect();
      const ends = (await Promise.all([s.downstream, s.deadLetter].map(async (topic) =>
        (await admin.fetchTopicOffsets(topic)).map((o) => ({ topic, partition: o.partition, high: BigInt(o.high), low: BigInt(o.low) })))))
        .flat().filter((e) => e.high > e.low);
      await admin.disconnect();
      try {
        await waitFor(() => ends.every((e) => (last.get(`${e.topic}/${e.partition}`) ?? -1n) + 1n >= e.high), { timeoutMs: 30_000, message: 'the end offsets' });
      } finally {
        await consumer.disconnect();
      }
      return outcome;
    },
  };
};

/** Records appended to the tier topics (`<retryBase>.*`), per topic. */
export const tierRecords = async (kafka: Kafka, s: BacklogScenario): Promise<Record<string, number>> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const tiers = (await admin.listTopics()).filter((t) => t.startsWith(`${s.retryBase}.`)).sort();
    const counts: Record<string, number> = {};
    for (const topic of tiers) {
      counts[topic.slice(s.retryBase.length + 1)] = (await admin.fetchTopicOffsets(topic)).reduce((n, o) => n + Number(BigInt(o.high) - BigInt(o.low)), 0);
    }
    return counts;
  } finally {
    await admin.disconnect();
  }
};

export interface TierWrites {
  /** Records appended to all tier topics. */
  records: number;
  /** Distinct messages (offered ids) among them: how many were parked at least once. */
  parked: number;
  /** records ÷ parked: tier writes per parked message (park plus hops). */
  perParked: number;
}

/** Reads every tier topic to its end offsets of now and counts records and distinct ids. */
export const tierWrites = async (kafka: Kafka, s: BacklogScenario, timeoutMs = 60_000): Promise<TierWrites> => {
  const counts = await tierRecords(kafka, s);
  const records = Object.values(counts).reduce((a, b) => a + b, 0);
  if (records === 0) return { records: 0, parked: 0, perParked: Number.NaN };
  const topics = Object.keys(counts).filter((t) => counts[t] > 0).map((t) => `${s.retryBase}.${t}`);
  const ids = new Set<string>();
  let read = 0;
  const consumer = kafka.consumer({ groupId: randomGroupId('bl-tiers'), maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) ids.add(String(m.value));
        read += batch.messages.length;
      },
    });
    await waitFor(() => read >= records, { timeoutMs, message: `${records} tier records (read ${read})` });
  } finally {
    await consumer.disconnect();
  }
  return { records, parked: ids.size, perParked: records / ids.size };
};

// ---------------------------------------------------------------- judgement (pure)

export interface ProducerJudgement {
  id: string;
  offered: number;
  /** Distinct ids forwarded. */
  forwarded: number;
  deadLettered: number;
  /** Offered ids neither downstream nor dead-lettered. */
  lost: number;
  /** Extra downstream copies, plus ids both forwarded and dead-lettered. */
  duplicates: number;
  /** Time with more than a tick's worth waiting (offered, not yet out), summed over spans ≥ 1 s. */
  backloggedMs: number;
  /** Forwarded while backlogged ÷ (rate × backlogged time), in %; NaN when never backlogged. */
  quotaUsedPct: number;
  /** The most forwards (copies included) appended within any 1 s. */
  busiest1s: number;
  /** Keys whose forwards are not in offered order (first copies, by downstream offset). */
  keysOutOfOrder: number;
  /** The first inversion seen, e.g. `key calm: 41 appended after 42`. */
  firstInversion?: string;
}

/** Largest number of sorted times inside any window [t, t + widthMs). */
export const maxInWindow = (sorted: readonly number[], widthMs: number): number => {
  let best = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi += 1) {
    while (sorted[hi] - sorted[lo] >= widthMs) lo += 1;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
};

/** Spans (≥ 1 s) in which more than `threshold` messages were waiting; events are (time, +1 offered | −1 out). */
export const backloggedSpans = (events: readonly [number, number][], threshold: number): [number, number][] => {
  const sorted = [...events].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const spans: [number, number][] = [];
  let waiting = 0;
  let from: number | undefined;
  for (const [at, delta] of sorted) {
    waiting += delta;
    if (from === undefined && waiting > threshold) from = at;
    else if (from !== undefined && waiting <= threshold) {
      if (at - from >= 1000) spans.push([from, at]);
      from = undefined;
    }
  }
  return spans;
};

const seqOf = (value: string): number => Number(value.slice(value.lastIndexOf(':') + 1));

export const judgeProducer = (
  id: string, offered: readonly { value: string; at: number }[], outcome: Outcome, ratePerSec: number,
): ProducerJudgement => {
  const mine = outcome.forwarded.filter((o) => o.producer === id);
  const dead = outcome.deadLettered.filter((o) => o.producer === id);
  const firstOut = new Map<string, number>();
  for (const o of [...mine, ...dead]) firstOut.set(o.value, Math.min(firstOut.get(o.value) ?? Infinity, o.appendMs));
  const forwardedIds = new Set(mine.map((o) => o.value));
  const deadIds = new Set(dead.map((o) => o.value));
  const both = [...deadIds].filter((v) => forwardedIds.has(v)).length;
  const events: [number, number][] = [...offered.map((o): [number, number] => [o.at, 1]), ...[...firstOut.values()].map((t): [number, number] => [t, -1])];
  const spans = backloggedSpans(events, Math.ceil(ratePerSec / 10) + 1);
  const firstForwards = new Map<string, number>();
  for (const o of mine) if (!firstForwards.has(o.value)) firstForwards.set(o.value, o.appendMs);
  const forwardTimes = [...firstForwards.values()];
  const backloggedMs = spans.reduce((n, [a, b]) => n + b - a, 0);
  const inSpans = forwardTimes.filter((t) => spans.some(([a, b]) => t >= a && t < b)).length;
  const byKey = new Map<string, Out[]>();
  for (const o of mine) {
    const list = byKey.get(o.key);
    if (list) list.push(o);
    else byKey.set(o.key, [o]);
  }
  let keysOutOfOrder = 0;
  let firstInversion: string | undefined;
  for (const [key, list] of byKey) {
    const once = new Set<string>();
    const seqs = [...list].sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)))
      .filter((o) => !once.has(o.value) && once.add(o.value)).map((o) => seqOf(o.value));
    const at = seqs.findIndex((q, i) => i > 0 && q < seqs[i - 1]);
    if (at < 0) continue;
    keysOutOfOrder += 1;
    firstInversion ??= `key ${key}: ${seqs[at]} appended after ${seqs[at - 1]}`;
  }
  return {
    id,
    offered: offered.length,
    forwarded: forwardedIds.size,
    deadLettered: deadIds.size,
    lost: offered.filter((o) => !forwardedIds.has(o.value) && !deadIds.has(o.value)).length,
    duplicates: mine.length - forwardedIds.size + both,
    backloggedMs,
    quotaUsedPct: backloggedMs > 0 ? (inSpans / ((ratePerSec * backloggedMs) / 1000)) * 100 : Number.NaN,
    busiest1s: maxInWindow(mine.map((o) => o.appendMs).sort((a, b) => a - b), 1000),
    keysOutOfOrder,
    firstInversion,
  };
};

export const judgeAll = (offered: Offered, outcome: Outcome, rateOf: (id: string) => number): ProducerJudgement[] =>
  [...offered.byProducer].map(([id, list]) => judgeProducer(id, list, outcome, rateOf(id)));

/** The busiest-second bound of issue 9: 1.15 × rate plus `slotsPerReplica` per replica. */
export const busiestBound = (ratePerSec: number, replicas: number, slotsPerReplica = 1): number =>
  Math.floor((115 * ratePerSec) / 100) + slotsPerReplica * replicas; // not 1.15 × rate: 1.15 × 20 is 22.999…

export const formatJudgement = (j: ProducerJudgement, ratePerSec: number): string =>
  `${j.id}: offered ${j.offered}, forwarded ${j.forwarded}, dead-lettered ${j.deadLettered}, lost ${j.lost}, duplicates ${j.duplicates}, ` +
  `quota used ${Number.isNaN(j.quotaUsedPct) ? 'n/a (never backlogged)' : `${j.quotaUsedPct.toFixed(1)}% over ${(j.backloggedMs / 1000).toFixed(1)} s backlogged`}, ` +
  `busiest second ${j.busiest1s} (${(j.busiest1s / ratePerSec).toFixed(2)}× rate), keys out of order ${j.keysOutOfOrder}${j.firstInversion ? ` (${j.firstInversion})` : ''}`;
