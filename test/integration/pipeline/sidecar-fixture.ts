/**
 * What the pipeline's integration tests share: a scenario (random ingress and downstream
 * topics — downstream with LogAppendTime so rates are judged by the broker's clock — a quota
 * file, a Redis key prefix), real `sluice run` child processes (`node --import tsx src/main.ts
 * run`, each in a process group of its own, killed when its test ends), a paced load of several
 * producers, and the measures the tests judge (window counts, order, duplicates, delays).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Kafka, Message } from 'kafkajs';
import { ConsumedMessage, createTopic, headerValues } from '../../helpers/kafka';
import { randomKeyPrefix } from '../../helpers/names';
import { spawnOwned, stopOwned } from '../../helpers/processes';
import { waitFor } from '../../helpers/wait';

const ROOT = resolve(__dirname, '../../..');

export interface Scenario {
  ingress: string;
  downstream: string;
  env: Record<string, string>;
  quotasFile: string;
}

export const createScenario = async (
  kafka: Kafka,
  { partitions = 1, quotas, env = {} }: { partitions?: number; quotas: string; env?: Record<string, string> },
): Promise<Scenario> => {
  const ingress = await createTopic(kafka, { prefix: 'in', partitions });
  const downstream = await createTopic(kafka, {
    prefix: 'out',
    partitions: 1,
    configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }],
  });
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pipeline-'));
  const quotasFile = join(dir, 'quotas.yaml');
  writeFileSync(quotasFile, quotas);
  return {
    ingress,
    downstream,
    quotasFile,
    env: {
      SLUICE_INGRESS_TOPIC: ingress,
      SLUICE_DOWNSTREAM_TOPIC: downstream,
      SLUICE_TOPICS_CREATE: 'true',
      SLUICE_RETRY_TIERS: '5s,1m',
      SLUICE_QUOTAS_FILE: quotasFile,
      SLUICE_REDIS_KEY_PREFIX: randomKeyPrefix('pipeline'),
      SLUICE_HTTP_PORT: '0',
      SLUICE_HTTP_ADMIN_PORT: '0',
      SLUICE_LOG_LEVEL: 'info',
      ...env,
    },
  };
};

export interface Sidecar {
  process: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** Resolves once both the ingress consumer and the drainer joined their groups (as logged). */
  joined(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The consumer groups a sidecar's log says it joined (the ingress group, then the retry group). */
const joinedGroups = (lines: string[]): Set<string> =>
  new Set(lines.filter((l) => l.includes('"msg":"joined the group"')).map((l) => /"group":"([^"]*)"/.exec(l)?.[1] ?? ''));

/** How node runs sluice: the source with tsx's loader, or a built `main.js` (built-artifact.test.ts). */
const FROM_SOURCE = ['--import', 'tsx', 'src/main.ts'];

export const startSidecar = (scenario: Scenario, env: Record<string, string> = {}, program: readonly string[] = FROM_SOURCE): Sidecar => {
  // node with tsx's loader rather than the tsx CLI: one process, which gets the signals itself.
  const owned = spawnOwned(process.execPath, [...program, 'run'], {
    cwd: ROOT,
    env: { ...process.env, ...scenario.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { process: child, exited } = owned;
  const lines: string[] = [];
  const collect = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return {
    process: child,
    lines,
    exited,
    joined: async () => {
      await waitFor(() => joinedGroups(lines).size >= 2, {
        timeoutMs: 60_000,
        message: () => `sluice to join its ingress and retry groups; output so far:\n${lines.slice(-5).join('\n')}`,
      });
    },
    // Clean-up must never hang a suite: a process still there after its stop budget (and the
    // watchdog's) is killed with its group. Tests of the graceful stop itself check its exit
    // code and time. A sidecar not stopped by its test is killed when the test ends
    // (test/helpers/processes.ts).
    stop: (signal = 'SIGTERM') => stopOwned(owned, signal),
  };
};

export interface ProducerLoad {
  id: string;
  perSecond: number;
  seconds: number;
  /** Extra headers on every message (e.g. forged sluice-* ones). */
  headers?: Record<string, string>;
}

/** Writes each producer's messages in 100 ms ticks (value `<id>:<seq>`); resolves with every value sent. */
export const runLoad = async (kafka: Kafka, topic: string, loads: ProducerLoad[], keyOf = (id: string, seq: number) => `${id}-${seq % 7}`): Promise<string[]> => {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent: string[] = [];
  const start = Date.now();
  const ticks = Math.max(...loads.map((l) => l.seconds * 10));
  try {
    for (let tick = 0; tick < ticks; tick += 1) {
      const messages: Message[] = [];
      for (const load of loads) {
        if (tick >= load.seconds * 10) continue;
        const from = Math.round((tick * load.perSecond) / 10);
        const to = Math.round(((tick + 1) * load.perSecond) / 10);
        for (let seq = from; seq < to; seq += 1) {
          const value = `${load.id}:${seq}`;
          messages.push({ key: keyOf(load.id, seq), value, headers: { 'producer-id': load.id, ...load.headers } });
          sent.push(value);
        }
      }
      if (messages.length > 0) await producer.send({ topic, messages, acks: -1 });
      const next = start + (tick + 1) * 100;
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
  } finally {
    await producer.disconnect();
  }
  return sent;
};

export const producerOf = (m: ConsumedMessage): string => String(m.value).split(':')[0];
export const seqOf = (m: ConsumedMessage): number => Number(String(m.value).split(':')[1]);

/** Broker append times (LogAppendTime) of one producer's downstream messages, sorted. */
export const appendTimes = (messages: ConsumedMessage[], producer: string): number[] =>
  messages.filter((m) => producerOf(m) === producer).map((m) => Number(m.timestamp)).sort((a, b) => a - b);

export const countIn = (times: number[], from: number, to: number): number => times.filter((t) => t >= from && t < to).length;

/** The most messages in any window of `windowMs` (windows start at each message). */
export const maxInWindow = (times: number[], windowMs: number): number => {
  let best = 0;
  let j = 0;
  for (let i = 0; i < times.length; i += 1) {
    while (times[j] < times[i] - windowMs + 1) j += 1;
    best = Math.max(best, i - j + 1);
  }
  return best;
};

/**
 * Slack for judging spacing by broker append time rather than by release time: a release
 * that waits behind the one send in flight is appended late, and the next one on time, so
 * two appends can land closer than one interval. On a busy 2-core machine one send in flight
 * can take well over 100 ms; 150 ms of it is allowed (3 slots at 20/s): still far below the
 * contract's bound, quota × t + capacity (1200 slots with the tests' 1m queue), and a
 * producer let through at twice its rate would still break it within the first second.
 */
export const APPEND_JITTER_MS = 150;

/** The most of one producer's messages any window may hold: quota × t, one slot per replica, and the append jitter. */
export const windowBound = (quotaPerSecond: number, windowMs: number, replicas = 1): number =>
  Math.floor((quotaPerSecond * windowMs) / 1000) + replicas + Math.ceil((quotaPerSecond * APPEND_JITTER_MS) / 1000);

export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

export const waitedMs = (m: ConsumedMessage): number => Number(headerValues(m.headers, 'sluice-waited-ms')[0]);

/** Values seen more than once. */
export const duplicates = (messages: ConsumedMessage[]): string[] => {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const m of messages) {
    const v = String(m.value);
    if (seen.has(v)) twice.add(v);
    seen.add(v);
  }
  return [...twice];
};

export const missing = (sent: string[], messages: ConsumedMessage[]): string[] => {
  const got = new Set(messages.map((m) => String(m.value)));
  return sent.filter((v) => !got.has(v));
};
