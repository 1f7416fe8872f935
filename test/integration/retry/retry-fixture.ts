/**
 * A real retry setup for the drainer and `sluice drain` tests: random topics (downstream with
 * broker append time, so release instants are the broker's), tiers 1s and 3s, a dead-letter
 * topic, a quota file, settings, the Redis store behind the store-error policy, the decider
 * and a sender — built by the wiring, as `sluice run` builds them (the store with the store's
 * clock, the coalescing decider); only a switch in front of the store is the test's own.
 * Messages are parked with the same code the ingress side uses.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka, Message, Producer } from 'kafkajs';
import pino from 'pino';
import { createLimiterStore, createPipeline, createProducer, createRedis, type Limiter, limiterOn, parkedFlow, stopPipeline } from '../../../src/app/wiring';
import { systemClock } from '../../../src/clock';
import { SluiceError } from '../../../src/errors';
import { loadConfig } from '../../../src/config';
import type { Config } from '../../../src/config/types';
import type { RuleView } from '../../../src/decide/fetch-decider';
import { createStoreClock } from '../../../src/decide/store-clock';
import type { DrainCommandDeps } from '../../../src/drain/drain-command';
import type { LimiterStore } from '../../../src/limit/types';
import { noMetrics, type Metrics } from '../../../src/metrics/types';
import { type ParkInfo, parkMessage } from '../../../src/park/park';
import { loadQuotas, resolveRule } from '../../../src/rules';
import { createKafka, produce } from '../../helpers/kafka';
import { randomGroupId, randomKeyPrefix, randomTopicName } from '../../helpers/names';
import { createTopicsWithLeaders } from '../../../src/topics/create-topics';

/** The sidecar's drainer of the retry tiers, built as `sluice run` builds it. */
export interface Drainer {
  joined(): boolean;
  stop(): Promise<void>;
}

export interface RetryFixture {
  kafka: Kafka;
  config: Config;
  store: LimiterStore;
  metrics: Metrics & { malformed: number };
  ruleOf(producer: string): RuleView;
  /** What `sluice drain` gets, less its output. */
  deps: Omit<DrainCommandDeps, 'stdout' | 'stderr'>;
  startDrainer(): Promise<Drainer>;
  park(topic: string, messages: { id: string; info: ParkInfo }[], at?: number): Promise<void>;
  /** Makes every decide call fail as if Redis were unreachable (the store-error policy applies). */
  setStoreDown(down: boolean): void;
  close(): Promise<void>;
}

/**
 * Default 20/s; every `slow-*` producer has its own 1/h bucket with no queue (one admitted,
 * then refusals); `tenth-*` one message per 10 s, so a decision shows in the store for seconds.
 */
export const quotas = `default:\n  rate: 20/s\n  queue: 1s\nproducers:\n  "slow-*":\n    rate: 1/h\n    queue: 0\n  "tenth-*":\n    rate: 1/10s\n    queue: 1m\n`;

export const createRetryFixture = async (settings: Record<string, string> = {}): Promise<RetryFixture> => {
  const kafka = createKafka();
  const base = randomTopicName('retry');
  const topics = [`${base}.down`, `${base}.retry.1s`, `${base}.retry.3s`, `${base}.dlq`];
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, topics.map((topic, i) => ({ topic, numPartitions: 2, configEntries: i === 0 ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : [] })));
  await admin.disconnect();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-retry-'));
  writeFileSync(join(dir, 'quotas.yaml'), quotas);
  const config = loadConfig({
    env: {
      SLUICE_KAFKA_BROKERS: process.env.SLUICE_KAFKA_BROKERS,
      SLUICE_REDIS_URL: process.env.SLUICE_REDIS_URL,
      SLUICE_INGRESS_TOPIC: base,
      SLUICE_DOWNSTREAM_TOPIC: `${base}.down`,
      SLUICE_RETRY_TOPIC: `${base}.retry`,
      SLUICE_DEAD_LETTER_TOPIC: `${base}.dlq`,
      SLUICE_RETRY_GROUP_ID: randomGroupId('retry'),
      SLUICE_RETRY_TIERS: '1s,3s',
      SLUICE_HOLD_MAX_MS: '1000',
      SLUICE_REDIS_KEY_PREFIX: randomKeyPrefix('retry'),
      SLUICE_QUOTAS_FILE: join(dir, 'quotas.yaml'),
      SLUICE_LOG_LEVEL: 'silent',
      // The limiter's store and client wait 1 s for an answer (the default 50 ms is a production pod's budget, not a busy test machine's).
      SLUICE_REDIS_TIMEOUT_MS: '1000',
      ...settings,
    },
  });
  const logger = pino({ level: process.env.SLUICE_TEST_LOG_LEVEL ?? 'silent' });
  const clock = createStoreClock(systemClock);
  const redis = createRedis(config);
  const store = createLimiterStore(config, redis, { clock });
  const metrics = { ...noMetrics, malformed: 0, malformedRetryHeaders: (n: number) => void (metrics.malformed += n) };
  let storeDown = false;
  const down = () => Promise.reject(new SluiceError('STORE_UNAVAILABLE', 'test: store switched off', { retriable: true }));
  // Both ways into the store are switched: one producer's call, and a round of several (several producers, or one producer's messages decided as of different instants).
  const { decideMany } = store;
  const switchable: LimiterStore = {
    ...store,
    decide: (request) => (storeDown ? down() : store.decide(request)),
    ...(decideMany && { decideMany: (requests: Parameters<typeof decideMany>[0]) => (storeDown ? down() : decideMany.call(store, requests)) }),
  };
  // The limiter `sluice run` and `sluice drain` run (the store-error policy, the coalescing decider), on the switchable store.
  const limiter: Limiter = { ...limiterOn(config, { store: switchable, clock, members: () => 1, metrics, logger }), store };
  const producer: Producer = createProducer(kafka);
  await producer.connect();
  const rules = loadQuotas(config.quotas.file);
  const ruleOf = (id: string): RuleView => resolveRule(rules, id);
  const partitions = new Map(topics.map((topic) => [topic, 2]));
  const deps = { kafka, config, producer, limiter, ruleOf, partitions, clock, logger };
  return {
    kafka, config, store, metrics, deps, ruleOf,
    async startDrainer() {
      const pipeline = createPipeline(config, { producer, limiter, ruleOf, partitions, metrics, logger });
      const flow = parkedFlow(config, kafka, pipeline, { name: 'drainer', topics: config.retry.tiers.map((t) => t.topic), hop: true });
      await flow.start();
      return { joined: () => flow.consumer.joined(), stop: () => stopPipeline(pipeline, 9000) };
    },
    setStoreDown: (down) => void (storeDown = down),
    async park(topic, messages, at = Date.now()) {
      const parked: Message[] = messages.map(({ id, info }) => parkMessage({ key: id, value: id, headers: [{ key: 'test-id', value: id }] }, info, 2, at));
      await produce(kafka, topic, parked);
    },
    async close() {
      await producer.disconnect();
      redis.disconnect();
    },
  };
};

export const parkInfo = (producer: string, change: Partial<ParkInfo> = {}): ParkInfo => {
  const now = Date.now();
  return {
    producer,
    attempt: 1,
    notBefore: now,
    firstSeen: now - 100,
    timestamp: String(now - 200),
    origin: { topic: 'ingress', partition: 0, offset: '0' },
    reason: { kind: 'delayed' },
    ...change,
  };
};
