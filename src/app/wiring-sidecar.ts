/**
 * The parts `sluice run` adds to the wiring's (./wiring.ts): the topics checked, the quota
 * rules held, the limiter's Redis client (its trouble logged at most every 30 s) and the usage
 * history's own, the Prometheus metrics, the group members counted, the downstream budget, the
 * late releases, both flows, the status answers, the HTTP server and the consumer-lag
 * collector. Each part registers its clean-up step as it is built, so a start that fails half
 * way undoes what it built; run-sidecar.ts starts them, waits for the stop and stops them.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Budget } from '../budget/budget';
import { createBudgetMetrics } from '../budget/budget-metrics';
import type { Config } from '../config/types';
import { type GroupMembers, watchGroupMembers } from '../decide/group-members';
import type { Flow } from '../flow/flow';
import { createHttpServer, type HttpServer } from '../http/http-server';
import { checkEvictionPolicy } from '../limit/eviction-policy';
import { waitReady } from '../limit/wait-ready';
import { createLagCollector, type LagCollector } from '../metrics/lag-collector';
import { createPromMetrics, type PromMetrics } from '../metrics/prom-metrics';
import { checkTopics } from '../topics/check-topics';
import { createUsageRecorder, withUsage } from '../usage';
import { systemClock } from '../clock';
import { holdQuotas } from './quota-holder';
import { createStatusProvider } from './status';
import { createBudgetOf, createLateBroadcastOf, createLimiter, createPipeline, createProducer, createRedis, ingressFlow, parkedFlow, type Pipeline, usageQueryOf } from './wiring';

type Step = () => Promise<unknown> | unknown;

/** The clean-up steps of a run: `first` ones run before those already there, `last` ones after; a failing step is logged and the next runs. */
export interface Cleanups {
  first(step: Step): void;
  last(step: Step): void;
  run(logger: Logger): Promise<void>;
}

export const createCleanups = (): Cleanups => {
  const steps: Step[] = [];
  return {
    first: (step) => void steps.unshift(step),
    last: (step) => void steps.push(step),
    async run(logger) {
      for (const step of steps) {
        try {
          await step();
        } catch (error) {
          logger.debug({ err: error }, 'cleanup step failed');
        }
      }
    },
  };
};

const throttled = (logger: Logger, everyMs: number) => {
  let last = 0;
  return (error: Error): void => {
    if (Date.now() - last < everyMs) return;
    last = Date.now();
    logger.warn({ err: error }, 'redis connection trouble (limiter.onStoreError applies until it answers)');
  };
};

/** The topics `sluice run` reads and writes, checked (or created, topics.create): their partition counts. */
const checkRunTopics = (config: Config, admin: Admin, logger: Logger): Promise<Map<string, number>> => {
  const tiers = config.retry.tiers;
  return checkTopics(admin, {
    ingress: config.topics.ingress,
    downstream: config.topics.downstream,
    parking: [...tiers.map((t) => t.topic), config.topics.deadLetter],
    deadLetter: config.topics.deadLetter,
    largestTierMs: tiers[tiers.length - 1].delayMs,
    create: config.topics.create,
  }, logger);
};

export interface SidecarParts {
  prom: PromMetrics;
  members: GroupMembers;
  budget: Budget;
  pipeline: Pipeline;
  ingress: Flow;
  drainer: Flow;
  /** Built, not listening yet. */
  http: HttpServer;
}

/**
 * Everything `sluice run` runs, connected (Redis waited for at most 2 s, the producer
 * connected) but not started: no listener, no flow, no budget tick yet.
 */
export const buildSidecar = async (config: Config, deps: { kafka: Kafka; admin: Admin; logger: Logger; secrets: readonly string[]; cleanups: Cleanups }): Promise<SidecarParts> => {
  const { kafka, admin, logger, cleanups } = deps;
  const partitions = await checkRunTopics(config, admin, logger);
  const prom = createPromMetrics({ processMetrics: true });
  const quotas = holdQuotas({ file: config.quotas.file, logger, metrics: prom });
  cleanups.last(() => quotas.close());
  const redis = createRedis(config, { onError: throttled(logger, 30_000) });
  cleanups.last(() => redis.disconnect());
  // Give Redis a moment to connect, so the first fetch is decided by it; never wait longer.
  await waitReady(redis, 2000).then(
    () => checkEvictionPolicy(redis, logger),
    (error: unknown) => logger.warn({ err: error }, 'Redis not ready at start; limiter.onStoreError applies until it answers'),
  );
  // The usage history has its own connection, so its writes never queue before a decision.
  const usageRedis = createRedis(config, { timeoutMs: Math.max(config.redis.timeoutMs, 1000) });
  cleanups.last(() => usageRedis.disconnect());
  const usage = createUsageRecorder({
    redis: usageRedis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock, logger,
    hasOwnRule: (producer) => quotas.rules().exact.has(producer),
  });
  cleanups.first(() => usage.close());
  const metrics = withUsage(prom, usage);
  const members = watchGroupMembers({ admin, group: config.group, logger });
  cleanups.first(() => members.stop());
  const limiter = createLimiter(config, { redis, members: members.count, metrics, logger });
  const budget = createBudgetOf(config, {
    redis, admin, rules: quotas.rules, limiter, members: members.count, logger, onTick: createBudgetMetrics(prom.registry),
    countShare: (producer, messages) => usage.count(producer, 'budgetShare', messages),
  });
  cleanups.first(() => budget.stop());
  const producer = createProducer(kafka);
  await producer.connect();
  cleanups.first(() => producer.disconnect());
  const late = createLateBroadcastOf(config, redis, logger);
  cleanups.last(() => late.close());
  const pipeline = createPipeline(config, { producer, limiter: { ...limiter, decider: budget.decider(limiter.decider) }, ruleOf: budget.ruleOf, partitions, metrics, logger, late, fences: redis, members: members.count });
  const ingress = ingressFlow(config, kafka, pipeline);
  const drainer = parkedFlow(config, kafka, pipeline, { name: 'drainer', topics: config.retry.tiers.map((t) => t.topic), hop: true });
  const status = createStatusProvider({ config, flows: [ingress, drainer], hold: pipeline.shared.hold, guarded: limiter.guarded, store: limiter.store, quotas, sender: pipeline.sender, budget: budget.status });
  const http = createHttpServer({
    host: config.http.host, port: config.http.port, admin: { host: config.http.adminHost, port: config.http.adminPort },
    metricsRegistry: prom.registry, status, logger, secrets: deps.secrets, adminToken: config.http.adminToken,
    usage: usageQueryOf(config, usageRedis),
  });
  return { prom, members, budget, pipeline, ingress, drainer, http };
};

/** The consumer lag of both groups and the retry tiers' depth, as Prometheus gauges (every 15 s once started). */
export const createRunLag = (config: Config, deps: { admin: Admin; prom: PromMetrics; logger: Logger }): LagCollector =>
  createLagCollector({
    admin: deps.admin, registry: deps.prom.registry,
    groups: [
      { groupId: config.group, topics: [config.topics.ingress] },
      { groupId: config.retry.group, topics: config.retry.tiers.map((t) => t.topic), retryTiers: true },
    ],
    onError: (error: unknown) => deps.logger.debug({ err: error }, 'consumer lag not read this time'),
  });
