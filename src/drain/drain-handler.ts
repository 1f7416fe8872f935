/**
 * The `sluice drain` handler main.ts passes to the CLI: builds the pieces a drain needs from
 * the settings (Kafka, quota rules, the Redis store behind the store-error policy, the
 * decider, a sender) the same way `sluice run` does, runs the drain, prints the summary and
 * returns the exit code.
 */
import { Partitioners } from 'kafkajs';
import type { Logger } from 'pino';
import { withConfig, type HandlerContext } from '../app/handlers';
import { connectAdmin, createKafka } from '../app/kafka-client';
import type { DrainOptions as CliDrainOptions, Output } from '../cli/types';
import { systemClock } from '../clock';
import { registerCodecs } from '../codecs/register-codecs';
import type { Config } from '../config/types';
import { createFetchDecider } from '../decide/fetch-decider';
import { watchGroupMembers } from '../decide/group-members';
import { createGuardedStore } from '../decide/guarded-store';
import { createMemoryStore } from '../limit/memory-store';
import { createRedisClient } from '../limit/redis-client';
import { createRedisStore } from '../limit/redis-store';
import { scaleRule } from '../limit/scale-rule';
import { noMetrics } from '../metrics/types';
import { createBatchSender } from '../produce/batch-sender';
import { loadQuotas, resolveRule } from '../rules';
import { waitReady } from '../status/wait-ready';
import { runDrain } from './drain-command';

export interface DrainIO {
  stdout: Output;
  stderr: Output;
}

export const drainWithConfig = async (config: Config, logger: Logger, opts: CliDrainOptions, io: DrainIO): Promise<number> => {
  registerCodecs();
  const clock = systemClock;
  const rules = loadQuotas(config.quotas.file);
  const kafka = createKafka(config, logger);
  const admin = await connectAdmin(kafka, config.kafka.brokers);
  const redis = createRedisClient({
    url: config.redis.url,
    clusterNodes: config.redis.clusterNodes.length > 0 ? [...config.redis.clusterNodes] : undefined,
    timeoutMs: config.redis.timeoutMs,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false, maxInFlightRequests: 1, idempotent: false, createPartitioner: Partitioners.DefaultPartitioner });
  const members = watchGroupMembers({ admin, group: config.group, logger });
  try {
    await members.refresh();
    // Not ready in time: the store-error policy applies, as in `sluice run`.
    await waitReady(redis, 3000).catch((error: unknown) => logger.warn({ err: error }, 'Redis not ready; limiter.onStoreError applies'));
    await producer.connect();
    const store = createRedisStore({ redis, keyPrefix: config.redis.keyPrefix, timeoutMs: config.redis.timeoutMs });
    const guarded = createGuardedStore({
      store, local: createMemoryStore({ clock }), policy: config.limiter.onStoreError, members: () => members.count() + 1, scaleRule,
      clock, metrics: noMetrics, logger, parkDelayMs: config.retry.tiers[0].delayMs,
    });
    const decider = createFetchDecider({ store: guarded, clock, holdMaxMs: config.hold.maxMs, mode: config.mode });
    const sender = createBatchSender({ producer, logger });
    const options = { ignoreDelay: opts.ignoreDelay, dryRun: opts.dryRun, force: opts.force, max: opts.max, topic: opts.topic };
    const ruleOf = (producerId: string) => resolveRule(rules, producerId);
    await runDrain({ kafka, config, decider, ruleOf, sender, clock, logger, stdout: io.stdout, stderr: io.stderr }, options);
    await sender.flush();
    return 0;
  } finally {
    members.stop();
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    redis.disconnect();
  }
};

export const drainHandler = (context: HandlerContext, io: DrainIO) => (opts: CliDrainOptions): Promise<number> =>
  withConfig(context, opts.config, (config, logger) => drainWithConfig(config, logger, opts, io));
