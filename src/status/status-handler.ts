/** The `sluice status` handler main.ts passes to the CLI: settings → quota rules and the Redis store (through the wiring module) → runStatus. */
import { withConfig, type HandlerContext } from '../app/handlers';
import { readBudgetState } from '../budget/budget-store';
import { createRedis } from '../app/wiring';
import type { Output, StatusOptions } from '../cli/types';
import { createRedisStore } from '../limit/redis-store';
import { loadQuotas, resolveRule } from '../rules';
import { runStatus } from './status-command';
import { waitReady } from '../limit/wait-ready';

export const statusHandler = (context: HandlerContext, out: Output) => (opts: StatusOptions): Promise<number> =>
  withConfig(context, opts.config, async (config) => {
    const rules = loadQuotas(config.quotas.file);
    // A one-shot command may wait a little longer than the hot path's budget.
    const timeoutMs = Math.max(config.redis.timeoutMs, 2000);
    const redis = createRedis(config, { timeoutMs });
    try {
      await waitReady(redis, 5000);
      const store = createRedisStore({ redis, keyPrefix: config.redis.keyPrefix, timeoutMs });
      const budget = () => readBudgetState(redis, config.redis.keyPrefix, config.group);
      return await runStatus({ store, rules, ruleOf: (id) => resolveRule(rules, id), out, budget }, opts.producer);
    } finally {
      redis.disconnect();
    }
  });
