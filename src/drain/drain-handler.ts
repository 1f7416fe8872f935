/**
 * The `sluice drain` handler main.ts passes to the CLI: builds what a drain needs through the
 * wiring module (the same pieces as `sluice run`), runs the drain, prints the summary and
 * returns the exit code.
 */
import type { Logger } from 'pino';
import { withConfig, type HandlerContext } from '../app/handlers';
import { createLateBroadcastOf, createLimiter, createProducer, createRedis, partitionCounts, startKafka } from '../app/wiring';
import type { DrainOptions as CliDrainOptions, Output } from '../cli/types';
import type { Config } from '../config/types';
import { watchGroupMembers } from '../decide/group-members';
import { noMetrics } from '../metrics/types';
import { loadQuotas, resolveRule } from '../rules';
import { waitReady } from '../limit/wait-ready';
import { runDrain } from './drain-command';

export interface DrainIO {
  stdout: Output;
  stderr: Output;
}

export const drainWithConfig = async (config: Config, logger: Logger, opts: CliDrainOptions, io: DrainIO): Promise<number> => {
  const rules = loadQuotas(config.quotas.file);
  const { kafka, admin } = await startKafka(config, logger);
  const redis = createRedis(config);
  const producer = createProducer(kafka);
  const members = watchGroupMembers({ admin, group: config.group, logger });
  try {
    const partitions = await partitionCounts(admin, [config.topics.downstream, ...config.retry.tiers.map((t) => t.topic), config.topics.deadLetter, ...(opts.topic ? [opts.topic] : [])]);
    await members.refresh();
    // Not ready in time: the store-error policy applies, as in `sluice run`.
    await waitReady(redis, 3000).catch((error: unknown) => logger.warn({ err: error }, 'Redis not ready; limiter.onStoreError applies'));
    await producer.connect();
    // This drain is one more member beside the sidecars' ingress group when the store fails (local policy).
    const limiter = createLimiter(config, { redis, members: () => members.count() + 1, metrics: noMetrics, logger });
    const options = { ignoreDelay: opts.ignoreDelay, dryRun: opts.dryRun, force: opts.force, max: opts.max, topic: opts.topic };
    const ruleOf = (producerId: string) => resolveRule(rules, producerId);
    const late = createLateBroadcastOf(config, redis, logger);
    try {
      await runDrain({ kafka, config, producer, limiter, ruleOf, partitions, clock: limiter.clock, logger, late, fences: redis, stdout: io.stdout, stderr: io.stderr }, options);
    } finally {
      late.close();
    }
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
