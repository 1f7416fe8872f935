/**
 * The StatusProvider the HTTP server asks (/healthz, /readyz, /v1/status, /v1/producers/{id},
 * /v1/quotas), answered from the running pieces. Per-producer counts are this replica's.
 */
import type { BudgetStatus } from '../budget/budget';
import type { Config } from '../config/types';
import type { Flow } from '../flow/flow';
import type { GuardedStore } from '../decide/fetch-decider';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { ProducerReport, QuotasReport, StatusProvider, StatusReport } from '../http/status-provider';
import type { LimiterStore } from '../limit/types';
import type { QuotaEntry } from '../rules';
import type { Sender } from '../produce/batch-sender';
import type { QuotaHolder } from './quota-holder';

export interface StatusDeps {
  config: Config;
  /** The ingress flow first, then the drainer of the retry tiers. */
  flows: readonly Flow[];
  hold: HoldScheduler;
  guarded: GuardedStore;
  store: LimiterStore;
  quotas: QuotaHolder;
  sender: Pick<Sender, 'failing'>;
  /** The downstream budget's status, while the quota file has `total:`. */
  budget?(): BudgetStatus | undefined;
  now?(): number;
}

const entryView = (entry: QuotaEntry): { match: string } & Record<string, unknown> => ({
  match: entry.pattern,
  ...entry.spec,
  ...(entry.resolved.unlimited ? { unlimited: true } : {}),
  ...(entry.resolved.shadow ? { shadow: true } : {}),
});

export const createStatusProvider = (deps: StatusDeps): StatusProvider => {
  const { config, guarded } = deps;
  const [ingress, drainer] = deps.flows.map((flow) => flow.consumer);
  const now = deps.now ?? Date.now;
  const illness = (): string | undefined => {
    if (deps.flows.some((flow) => flow.consumer.crashed())) return 'consumer crashed';
    const out = deps.flows.findIndex((flow) => flow.consumer.rejoinFailed());
    if (out >= 0) return `the consumer of group ${out === 0 ? config.group : config.retry.group} dropped out of its group and could not rejoin`;
    const silent = deps.flows
      .map((flow, i) => ({ group: i === 0 ? config.group : config.retry.group, ms: flow.consumer.silentMs() }))
      .find((c) => c.ms >= config.kafka.stuckAfterMs);
    if (silent) return `the consumer of group ${silent.group} has not heard from its group (no heartbeat, fetch or join) for ${Math.round(silent.ms / 1000)} s`;
    const stuck = deps.sender.failing().find((t) => now() - t.since >= config.kafka.stuckAfterMs);
    return stuck && `sends to ${stuck.destination} have failed for ${Math.round((now() - stuck.since) / 1000)} s (${stuck.code})`;
  };
  return {
    alive: () => illness() === undefined,
    illness,
    ready: () => deps.flows.every((flow) => flow.consumer.joined()),
    status(): StatusReport {
      const held = deps.hold.held();
      return {
        mode: config.mode,
        store: { healthy: guarded.failures() === 0 },
        fallbackActive: guarded.fallbackActive(),
        onStoreError: config.limiter.onStoreError,
        groups: [
          {
            groupId: config.group,
            joined: ingress.joined(),
            crashed: ingress.crashed(),
            topics: [config.topics.ingress],
            assigned: ingress.assignment(),
          },
          { groupId: config.retry.group, joined: drainer.joined(), crashed: drainer.crashed(), topics: config.retry.tiers.map((t) => t.topic), assigned: drainer.assignment() },
        ],
        held,
        sendErrors: deps.sender.failing().map((t) => ({ destination: t.destination, failingSinceMs: now() - t.since, failures: t.failures, code: t.code, error: t.error })),
        ...(deps.budget?.() ? { budget: deps.budget() } : {}),
      };
    },
    async producer(id): Promise<ProducerReport | undefined> {
      const rule = deps.quotas.ruleOf(id);
      const base: ProducerReport = { id, rule: { match: rule.name }, backlogMs: 0, nextFreeSlot: null, counts: {} };
      if (rule.unlimited || !rule.limit) return { ...base, rule: { match: rule.name, unlimited: true } };
      const state = await deps.store.inspect(id, rule.limit);
      return {
        ...base,
        rule: { match: rule.name, rate: rule.limit.labels.rate, ...(rule.shadow ? { shadow: true } : {}) },
        ratePerSecond: 1000 / rule.limit.intervalMs,
        backlogMs: state.backlogMs,
        nextFreeSlot: state.nextFreeAt ?? null,
      };
    },
    quotas(): QuotasReport {
      const rules = deps.quotas.rules();
      const def = rules.entries.find((e) => e.kind === 'default');
      const report: QuotasReport = {
        file: rules.file,
        loadedAt: deps.quotas.loadedAt(),
        default: def ? entryView(def) : {},
        producers: rules.entries.filter((e) => e.kind !== 'default').map(entryView),
      };
      const lastError = deps.quotas.lastError();
      if (lastError) report.lastError = lastError;
      return report;
    },
  };
};
