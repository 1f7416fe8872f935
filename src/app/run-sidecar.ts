/**
 * `sluice run`: builds every piece from the settings (the only place besides main.ts that
 * knows concrete types), starts the HTTP server, the ingress pipeline and the drainer of the
 * retry tiers, and waits for a stop signal. Graceful stop within 10 s: readiness off, stop
 * fetching, finish or park what is held, commit, disconnect. Returns the exit code.
 */
import type { Logger } from 'pino';
import { systemClock } from '../clock';
import { registerCodecs } from '../codecs/register-codecs';
import type { Config } from '../config/types';
import { coalesceDecider, createFetchDecider } from '../decide/fetch-decider';
import { watchGroupMembers } from '../decide/group-members';
import { createGuardedStore } from '../decide/guarded-store';
import { startDrainer } from '../drain/drainer';
import { createHttpServer } from '../http/http-server';
import { createMemoryStore } from '../limit/memory-store';
import { createRedisClient } from '../limit/redis-client';
import { createRedisStore } from '../limit/redis-store';
import { scaleRule } from '../limit/scale-rule';
import { createLagCollector } from '../metrics/lag-collector';
import { createPromMetrics } from '../metrics/prom-metrics';
import { createBatchSender } from '../produce/batch-sender';
import { createPacedSender } from '../produce/paced-sender';
import { identify } from '../identify/identify';
import { spacingOf } from '../decide/verdict';
import { waitReady } from '../status/wait-ready';
import { checkTopics } from '../topics/check-topics';
import { createIngressPipeline } from './ingress-pipeline';
import { connectAdmin, createKafka } from './kafka-client';
import { holdQuotas } from './quota-holder';
import { createStatusProvider } from './status';

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
  registerCodecs();
  const clock = systemClock;
  const kafka = createKafka(config, logger);
  const admin = await connectAdmin(kafka, config.kafka.brokers);
  const cleanups: (() => Promise<unknown> | unknown)[] = [() => admin.disconnect()];
  try {
    const tiers = config.retry.tiers;
    const partitions = await checkTopics(admin, {
      ingress: config.topics.ingress,
      downstream: config.topics.downstream,
      parking: [...tiers.map((t) => t.topic), config.topics.deadLetter],
      largestTierMs: tiers[tiers.length - 1].delayMs,
      create: config.topics.create,
    }, logger);
    const metrics = createPromMetrics();
    const quotas = holdQuotas({ file: config.quotas.file, logger, metrics });
    cleanups.push(() => quotas.close());
    const redis = createRedisClient({
      url: config.redis.url,
      clusterNodes: config.redis.clusterNodes.length > 0 ? [...config.redis.clusterNodes] : undefined,
      timeoutMs: config.redis.timeoutMs,
      onError: throttled(logger, 30_000),
    });
    cleanups.push(() => redis.disconnect());
    // Give Redis a moment to connect, so the first fetch is decided by it; never wait longer.
    await waitReady(redis, 2000).catch((error: unknown) => logger.warn({ err: error }, 'Redis not ready at start; limiter.onStoreError applies until it answers'));
    const store = createRedisStore({ redis, keyPrefix: config.redis.keyPrefix, timeoutMs: config.redis.timeoutMs });
    const members = watchGroupMembers({ admin, group: config.group, logger });
    cleanups.unshift(() => members.stop());
    const guarded = createGuardedStore({
      store, local: createMemoryStore({ clock }), policy: config.limiter.onStoreError, members: members.count, scaleRule,
      clock, metrics, logger, parkDelayMs: tiers[0].delayMs,
    });
    const decider = coalesceDecider(createFetchDecider({ store: guarded, clock, holdMaxMs: config.hold.maxMs, mode: config.mode }));
    const producer = kafka.producer({ allowAutoTopicCreation: false, maxInFlightRequests: 1, idempotent: false });
    await producer.connect();
    cleanups.unshift(() => producer.disconnect());
    const sender = createBatchSender({ producer, logger });
    const pipeline = createIngressPipeline({ kafka, config, sender, decider, ruleOf: quotas.ruleOf, partitions, clock, metrics, logger });
    const started: { drainer?: Awaited<ReturnType<typeof startDrainer>> } = {};
    const status = createStatusProvider({ config, ingress: pipeline.consumer, hold: pipeline.hold, drainer: () => started.drainer, guarded, store, quotas });
    const http = createHttpServer({ host: config.http.host, port: config.http.port, metricsRegistry: metrics.registry, status, logger, secrets });
    const bound = await http.listen();
    cleanups.push(() => http.close());
    logger.info({ http: bound, ingress: config.topics.ingress, downstream: config.topics.downstream, mode: config.mode }, 'sluice run starting');
    await pipeline.start();
    const drainerSender = createPacedSender({
      sender, lanes: pipeline.lanes, downstream: config.topics.downstream,
      producerOf: (message) => identify({ key: message.key ?? null, headers: message.headers }, config.identity),
      spacingOf: (producer) => {
        const rule = quotas.ruleOf(producer);
        return rule.limit && !rule.unlimited ? spacingOf(rule.limit) : 0;
      },
    });
    const drainer = await startDrainer({ kafka, config, decider, ruleOf: quotas.ruleOf, sender: drainerSender, clock, metrics, logger });
    started.drainer = drainer;
    void members.refresh();
    const lag = createLagCollector({
      admin, registry: metrics.registry,
      groups: [
        { groupId: config.group, topics: [config.topics.ingress] },
        { groupId: config.retry.group, topics: tiers.map((t) => t.topic), retryTiers: true },
      ],
      onError: (error: unknown) => logger.debug({ err: error }, 'consumer lag not read this time'),
    });
    lag.start();
    cleanups.unshift(() => lag.stop());

    const crashed = new Promise<'crash'>((resolve) => {
      const timer = setInterval(() => (pipeline.consumer.crashed() || drainer.crashed()) && resolve('crash'), 500);
      timer.unref();
      cleanups.push(() => clearInterval(timer));
    });
    const why = await Promise.race([stopSignal.then(() => 'signal' as const), crashed]);
    logger.info({ why }, 'sluice run stopping');
    http.shuttingDown();
    const stopAt = Date.now();
    await Promise.all([pipeline.stop(stopBudgetMs), drainer.stop()]);
    logger.info({ ms: Date.now() - stopAt }, 'sluice run stopped: held messages finished or parked, offsets committed');
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
