/** The `sluice usage` handler main.ts passes to the CLI: settings → a Redis client (through the wiring module, as `sluice run`) → runUsage. */
import { withConfig, type HandlerContext } from '../app/handlers';
import { createRedis } from '../app/wiring';
import type { Output, UsageOptions } from '../cli/types';
import { systemClock } from '../clock';
import { waitReady } from '../limit/wait-ready';
import { runUsage } from '../usage/usage-command';
import { createUsageQuery } from '../usage/usage-query';

export const usageHandler = (context: HandlerContext, out: Output) => (opts: UsageOptions): Promise<number> =>
  withConfig(context, opts.config, async (config) => {
    // A one-shot command may wait a little longer than the hot path's budget.
    const redis = createRedis(config, { timeoutMs: Math.max(config.redis.timeoutMs, 2000) });
    try {
      await waitReady(redis, 5000);
      const query = createUsageQuery({ redis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock });
      return await runUsage(query, out, opts);
    } finally {
      redis.disconnect();
    }
  });
