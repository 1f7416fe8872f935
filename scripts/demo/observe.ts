/**
 * What the demo table shows, sampled once a second: per producer, forwarded / parked /
 * dead-lettered counts and the downstream budget (its rate in force, each producer's share and
 * demand: sluice_budget_*) from the sidecar's /metrics, backlog from the limiter store
 * (LimiterStore.inspect), the quota and weight from the demo quota file.
 */
import { createRedisClient } from '../../src/limit/redis-client';
import { createRedisStore } from '../../src/limit/redis-store';
import { loadQuotas, resolveRule } from '../../src/rules';
import type { DemoProducer } from './demo-plan';
import type { ProducerRow } from './demo-table';
import { parsePromText, sumOf, valueOf } from './prom-text';

export interface Observer {
  sample(offered: (id: string) => number): Promise<ProducerRow[]>;
  /** sluice_store_errors_total at the last sample. */
  storeErrors(): number;
  /** sluice_budget_rate at the last sample (undefined before the budget's first cadence). */
  budgetInForce(): number | undefined;
  close(): Promise<void>;
}

export const createObserver = (o: { root: string; redisUrl: string; keyPrefix: string; httpPort: number; producers: readonly DemoProducer[]; quotasFile: string }): Observer => {
  const rules = loadQuotas(o.quotasFile);
  const redis = createRedisClient({ url: o.redisUrl, timeoutMs: 1000 });
  const store = createRedisStore({ redis, keyPrefix: o.keyPrefix, timeoutMs: 1000 });
  const last = new Map<string, { at: number; offered: number; forwarded: number }>();
  const metric = 'sluice_producer_messages_total';
  let storeErrors = 0;
  let budgetInForce: number | undefined;

  const quotaOf = (id: string): string => {
    const rule = resolveRule(rules, id);
    if (!rule.limit) return 'unlimited';
    return [rule.limit.labels.rate, ...rule.limit.windows.map((w) => w.label)].join(' + ');
  };

  return {
    async sample(offered) {
      const text = await fetch(`http://127.0.0.1:${o.httpPort}/metrics`).then((r) => r.text()).catch(() => '');
      const samples = parsePromText(text);
      storeErrors = sumOf(samples, 'sluice_store_errors_total', {}) || storeErrors;
      budgetInForce = valueOf(samples, 'sluice_budget_rate', {}) ?? budgetInForce;
      const now = Date.now();
      return Promise.all(
        o.producers.map(async ({ id }) => {
          const count = (outcome: string): number => sumOf(samples, metric, { producer: id, outcome });
          const forwarded = count('forwarded');
          const rule = resolveRule(rules, id);
          const backlogMs = rule.limit ? await store.inspect(id, rule.limit).then((s) => s.backlogMs, () => 0) : 0;
          const previous = last.get(id) ?? { at: now - 1000, offered: 0, forwarded: 0 };
          const seconds = Math.max(0.001, (now - previous.at) / 1000);
          last.set(id, { at: now, offered: offered(id), forwarded });
          return {
            id,
            quota: quotaOf(id),
            weight: rule.weight ?? 1,
            share: valueOf(samples, 'sluice_budget_share', { producer: id }),
            demand: valueOf(samples, 'sluice_budget_demand', { producer: id }),
            offeredPerS: (offered(id) - previous.offered) / seconds,
            forwardedPerS: (forwarded - previous.forwarded) / seconds,
            backlogMs,
            parked: count('delayed') + count('overflowed'),
            offered: offered(id),
            forwarded,
            deadLettered: count('dead_lettered'),
          };
        }),
      );
    },
    storeErrors: () => storeErrors,
    budgetInForce: () => budgetInForce,
    async close() {
      redis.disconnect();
    },
  };
};
