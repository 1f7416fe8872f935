/** The `sluice usage` handler main.ts passes to the CLI: settings → the usage query (on a Redis client built by the wiring, as `sluice run`'s) → runUsage. */
import { withConfig, type HandlerContext } from '../app/handlers';
import { openUsage } from '../app/wiring-commands';
import type { Output, UsageOptions } from '../cli/types';
import { runUsage } from '../usage/usage-command';

export const usageHandler = (context: HandlerContext, out: Output) => (opts: UsageOptions): Promise<number> =>
  withConfig(context, opts.config, async (config) => {
    const usage = openUsage(config);
    try {
      await usage.ready();
      return await runUsage(usage.query, out, opts);
    } finally {
      usage.close();
    }
  });
