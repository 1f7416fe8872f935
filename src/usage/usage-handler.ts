/** The `sluice usage` handler main.ts passes to the CLI: settings → a Redis client → runUsage. */
import { withConfig, type HandlerContext } from '../app/handlers';
import type { Output, UsageOptions } from '../cli/types';
import { systemClock } from '../clock';
import { createRedisClient } from '../limit/redis-client';
import { waitReady } from '../status/wait-ready';
import { runUsage } from './usage-command';
import { createUsageQuery } from './usage-query';

export const usageHandler = (context: HandlerContext, out: Output) => (opts: UsageOptions): Promise<number> =>
  withConfig(context, opts.config, async (config) => {
    const redis = createRedisClient({
      url: config.redis.url,
      clusterNodes: config.redis.clusterNodes.length > 0 ? [...config.redis.clusterNodes] : undefined,
      // A one-shot command may wait a little longer than the hot path's budget.
      timeoutMs: Math.max(config.redis.timeoutMs, 2000),
    });
    try {
      await waitReady(redis, 5000);
      const query = createUsageQuery({ redis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock });
      return await runUsage(query, out, opts);
    } finally {
      redis.disconnect();
    }
  });
