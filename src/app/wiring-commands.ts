/**
 * The one-shot commands' parts, built by the wiring as `sluice run` builds its own: `sluice
 * drain` (Kafka, the producer, the limiter, the late releases and the fences), `sluice status`
 * (the quota rules, the store, the budget's reports) and `sluice usage` (the usage query). Each
 * returns its parts and a `close()` the command calls when it is done.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { readBudgetState } from '../budget/budget-store';
import type { Config } from '../config/types';
import type { RuleView } from '../decide/fetch-decider';
import { watchGroupMembers } from '../decide/group-members';
import type { LateBroadcast } from '../hold/late-broadcast';
import type { LimiterStore } from '../limit/types';
import { waitReady } from '../limit/wait-ready';
import { noMetrics } from '../metrics/types';
import { loadQuotas, resolveRule, type QuotaRules } from '../rules';
import { existingPartitionCounts } from '../topics/check-topics';
import type { UsageQuery } from '../usage';
import { createLateBroadcastOf, createLimiter, createLimiterStore, createProducer, createRedis, type Limiter, startKafka, usageQueryOf } from './wiring';

/** A one-shot command may wait a little longer than the hot path's budget: at least 2 s a command, 5 s for the connection. */
const oneShotRedis = (config: Config) => {
  const timeoutMs = Math.max(config.redis.timeoutMs, 2000);
  const redis = createRedis(config, { timeoutMs });
  return { redis, timeoutMs, ready: () => waitReady(redis, 5000), close: () => redis.disconnect() };
};

/** What `sluice drain` runs on: the same pieces as `sluice run`'s drainer. */
export interface DrainParts {
  kafka: Kafka;
  config: Config;
  producer: Producer;
  limiter: Limiter;
  ruleOf(producer: string): RuleView;
  partitions: ReadonlyMap<string, number>;
  clock: Limiter['clock'];
  logger: Logger;
  late: LateBroadcast;
  fences: ReturnType<typeof createRedis>;
}

/**
 * Connects what a drain needs (`topic`: the topic drained instead of the tiers, counted with
 * them). The store-error policy applies while Redis is not ready, as in `sluice run`; the drain
 * counts as one more member beside the sidecars' ingress group under the `local` policy.
 */
export const openDrain = async (config: Config, logger: Logger, topic?: string): Promise<{ parts: DrainParts; close(): Promise<void> }> => {
  const rules = loadQuotas(config.quotas.file);
  const { kafka, admin } = await startKafka(config, logger);
  const redis = createRedis(config);
  const producer = createProducer(kafka);
  const members = watchGroupMembers({ admin, group: config.group, logger });
  const disconnect = async (): Promise<void> => {
    members.stop();
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    redis.disconnect();
  };
  try {
    const partitions = await existingPartitionCounts(admin, [config.topics.downstream, ...config.retry.tiers.map((t) => t.topic), config.topics.deadLetter, ...(topic ? [topic] : [])]);
    await members.refresh();
    await waitReady(redis, 3000).catch((error: unknown) => logger.warn({ err: error }, 'Redis not ready; limiter.onStoreError applies'));
    await producer.connect();
    const limiter = createLimiter(config, { redis, members: () => members.count() + 1, metrics: noMetrics, logger });
    const ruleOf = (producerId: string): RuleView => resolveRule(rules, producerId);
    const late = createLateBroadcastOf(config, redis, logger);
    return {
      parts: { kafka, config, producer, limiter, ruleOf, partitions, clock: limiter.clock, logger, late, fences: redis },
      close: async () => {
        late.close();
        await disconnect();
      },
    };
  } catch (error) {
    await disconnect();
    throw error;
  }
};

/** What `sluice status` reads: the quota rules (a bad file stops it before it connects), the store, the budget's reports. */
export interface StatusParts {
  store: Pick<LimiterStore, 'inspect'>;
  rules: QuotaRules;
  ruleOf(producer: string): RuleView;
  budget(): ReturnType<typeof readBudgetState>;
}

export const openStatus = (config: Config): { parts: StatusParts; ready(): Promise<void>; close(): void } => {
  const rules = loadQuotas(config.quotas.file);
  const { redis, timeoutMs, ready, close } = oneShotRedis(config);
  return {
    parts: {
      store: createLimiterStore(config, redis, { timeoutMs }),
      rules,
      ruleOf: (id) => resolveRule(rules, id),
      budget: () => readBudgetState(redis, config.redis.keyPrefix, config.group),
    },
    ready,
    close,
  };
};

/** What `sluice usage` reads: the usage history, on the settings' Redis (password and TLS included). */
export const openUsage = (config: Config): { query: UsageQuery; ready(): Promise<void>; close(): void } => {
  const { redis, ready, close } = oneShotRedis(config);
  return { query: usageQueryOf(config, redis), ready, close };
};
