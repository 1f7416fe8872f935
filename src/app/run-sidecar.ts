/**
 * `sluice run`: builds every piece from the settings through the wiring module, starts the
 * HTTP server (its main and admin listeners), the ingress flow and the drainer of the retry
 * tiers (a second flow of the same engine, in its own group), and waits for a stop signal.
 * Graceful stop within 10 s. Returns the exit code.
 */
import type { Logger } from 'pino';
import { systemClock } from '../clock';
import type { Config } from '../config/types';
import { watchGroupMembers } from '../decide/group-members';
import { SluiceError } from '../errors';
import { adminListenerProblem } from '../http/admin-access';
import { createHttpServer } from '../http/http-server';
import { checkEvictionPolicy } from '../limit/eviction-policy';
import { createBudgetMetrics } from '../budget/budget-metrics';
import { createLagCollector } from '../metrics/lag-collector';
import { createPromMetrics } from '../metrics/prom-metrics';
import { createUsageQuery, createUsageRecorder, withUsage } from '../usage';
import { waitReady } from '../limit/wait-ready';
import { checkTopics } from '../topics/check-topics';
import { holdQuotas } from './quota-holder';
import { createStatusProvider } from './status';
import { createBudgetOf, createLateBroadcastOf, createLimiter, createPipeline, createProducer, createRedis, ingressFlow, parkedFlow, startKafka, stopPipeline } from './wiring';

export interface RunSidecarOptions {
  config: Config;
  logger: Logger;
  /** Resolves when the process is asked to stop (SIGTERM, SIGINT). */
  stopSignal: Promise<unknown>;
  /** Literal secrets the HTTP answers must mask. */
  secrets?: readonly string[];
  stopBudgetMs?: number;
}

const throttled = (logger: Logger, everyMs: number) => {
  let last = 0;
  return (error: Error): void => {
    if (Date.now() - last < everyMs) return;
    last = Date.now();
    logger.warn({ err: error }, 'redis connection trouble (limiter.onStoreError applies until it answers)');
  };
};

export const runSidecar = async ({ config, logger, stopSignal, secrets = [], stopBudgetMs = 9000 }: RunSidecarOptions): Promise<number> => {
  // Before anything connects: an admin listener that would answer anyone is a settings error (exit 1).
  const adminProblem = adminListenerProblem(config.http);
  if (adminProblem) throw new SluiceError('CONFIG_INVALID', adminProblem);
  const { kafka, admin } = await startKafka(config, logger);
  const cleanups: (() => Promise<unknown> | unknown)[] = [() => admin.disconnect()];
  try {
    const tiers = config.retry.tiers;
    const partitions = await checkTopics(admin, {
      ingress: config.topics.ingress,
      downstream: config.topics.downstream,
      parking: [...tiers.map((t) => t.topic), config.topics.deadLetter],
      deadLetter: config.topics.deadLetter,
      largestTierMs: tiers[tiers.length - 1].delayMs,
      create: config.topics.create,
    }, logger);
    const prom = createPromMetrics({ processMetrics: true });
    const quotas = holdQuotas({ file: config.quotas.file, logger, metrics: prom });
    cleanups.push(() => quotas.close());
    const redis = createRedis(config, { onError: throttled(logger, 30_000) });
    cleanups.push(() => redis.disconnect());
    // Give Redis a moment to connect, so the first fetch is decided by it; never wait longer.
    await waitReady(redis, 2000).then(
      () => checkEvictionPolicy(redis, logger),
      (error: unknown) => logger.warn({ err: error }, 'Redis not ready at start; limiter.onStoreError applies until it answers'),
    );
    // The usage history has its own connection, so its writes never queue before a decision.
    const usageRedis = createRedis(config, { timeoutMs: Math.max(config.redis.timeoutMs, 1000) });
    cleanups.push(() => usageRedis.disconnect());
    const usage = createUsageRecorder({
      redis: usageRedis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock, logger,
      hasOwnRule: (producer) => quotas.rules().exact.has(producer),
    });
    cleanups.unshift(() => usage.close());
    const metrics = withUsage(prom, usage);
    const members = watchGroupMembers({ admin, group: config.group, logger });
    cleanups.unshift(() => members.stop());
    const limiter = createLimiter(config, { redis, members: members.count, metrics, logger });
    const budget = createBudgetOf(config, { redis, admin, rules: quotas.rules, limiter, members: members.count, logger, onTick: createBudgetMetrics(prom.registry) });
    cleanups.unshift(() => budget.stop());
    const producer = createProducer(kafka);
    await producer.connect();
    cleanups.unshift(() => producer.disconnect());
    const late = createLateBroadcastOf(config, redis, logger);
    cleanups.push(() => late.close());
    const pipeline = createPipeline(config, { producer, limiter: { ...limiter, decider: budget.decider(limiter.decider) }, ruleOf: budget.ruleOf, partitions, metrics, logger, late, fences: redis });
    const ingress = ingressFlow(config, kafka, pipeline);
    const drainer = parkedFlow(config, kafka, pipeline, { name: 'drainer', topics: tiers.map((t) => t.topic), hop: true });
    const status = createStatusProvider({ config, flows: [ingress, drainer], hold: pipeline.shared.hold, guarded: limiter.guarded, store: limiter.store, quotas, sender: pipeline.sender, budget: budget.status });
    const http = createHttpServer({
      host: config.http.host, port: config.http.port, admin: { host: config.http.adminHost, port: config.http.adminPort },
      metricsRegistry: prom.registry, status, logger, secrets, adminToken: config.http.adminToken,
      usage: createUsageQuery({ redis: usageRedis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock }),
    });
    const bound = await http.listen();
    cleanups.push(() => http.close());
    logger.info({ http: bound, ingress: config.topics.ingress, downstream: config.topics.downstream, mode: config.mode }, 'sluice run starting');
    budget.start();
    await ingress.start();
    await drainer.start();
    void members.refresh();
    const lag = createLagCollector({
      admin, registry: prom.registry,
      groups: [
        { groupId: config.group, topics: [config.topics.ingress] },
        { groupId: config.retry.group, topics: tiers.map((t) => t.topic), retryTiers: true },
      ],
      onError: (error: unknown) => logger.debug({ err: error }, 'consumer lag not read this time'),
    });
    lag.start();
    cleanups.unshift(() => lag.stop());

    const crashed = new Promise<'crash'>((resolve) => {
      const timer = setInterval(() => (ingress.consumer.crashed() || drainer.consumer.crashed()) && resolve('crash'), 500);
      timer.unref();
      cleanups.push(() => clearInterval(timer));
    });
    const why = await Promise.race([stopSignal.then(() => 'signal' as const), crashed]);
    logger.info({ why }, 'sluice run stopping');
    http.shuttingDown();
    const stopAt = Date.now();
    await stopPipeline(pipeline, stopBudgetMs);
    logger.info({ ms: Date.now() - stopAt, inFlight: ingress.tracker.inFlight() + drainer.tracker.inFlight() }, 'sluice run stopped: held messages finished or parked, offsets committed');
    return why === 'crash' ? 3 : 0;
  } finally {
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch (error) {
        logger.debug({ err: error }, 'cleanup step failed');
      }
    }
  }
};
