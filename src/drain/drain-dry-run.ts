/**
 * `sluice drain --dry-run`: reads what a drain would take and says per producer what would
 * happen, changing nothing: it reads through a throwaway group (deleted afterwards), writes
 * nothing and never calls the store (a message that would be decided again is counted as "to
 * decide again", since deciding would charge its producer). Same consumer wrapper and router
 * as every flow.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createOffsetTracker } from '../commit/committer';
import type { Config } from '../config/types';
import type { RuleView } from '../decide/fetch-decider';
import { firstStep, type FlowItem, fromTier, type RoutePolicy } from '../flow/flow-item';
import { createGroupConsumer } from '../flow/group-consumer';
import { noMetrics } from '../metrics/types';
import type { DrainOptions } from './drain-plan';
import { type PartitionRange, rangeKey } from './drain-plan';
import type { SummaryColumn } from './drain-summary';
import { createRangeProgress } from './range-progress';

/** What a drain would do with one message, judged at its not-before (or now with --ignore-delay). Pure. */
export const dryRunColumn = (item: FlowItem, now: number, policy: RoutePolicy, rule: RuleView): SummaryColumn => {
  const at = item.malformed || item.decideAgain ? now : Math.max(now, item.info.notBefore);
  const step = firstStep(item, at, { ...policy, hop: false }, rule);
  if (step.kind === 'release') return 'forwarded';
  if (step.kind === 'dead-letter') return 'deadLettered';
  return 'toDecide';
};

export interface DryRunDeps {
  kafka: Kafka;
  config: Config;
  ruleOf: (producer: string) => RuleView;
  clock: Clock;
  logger: Logger;
  ranges: readonly PartitionRange[];
  topics: readonly string[];
  options: DrainOptions;
  policy: RoutePolicy;
  report: (producer: string, column: SummaryColumn) => void;
  prepare: (item: FlowItem, now: number) => FlowItem;
}

export const runDryDrain = async (deps: DryRunDeps): Promise<void> => {
  const groupId = `${deps.config.retry.group}.dry-run-${randomUUID()}`;
  const tracker = createOffsetTracker();
  const progress = createRangeProgress(deps.ranges, deps.options.max);
  // The throwaway group starts at the earliest offset: what retry.group already committed is passed over.
  const from = new Map(deps.ranges.map((r) => [rangeKey(r.topic, r.partition), r.from]));
  const consumer = createGroupConsumer({
    kafka: deps.kafka, groupId, topics: deps.topics, tracker, commitIntervalMs: 1000, partitionsConsumedConcurrently: 1,
    clock: deps.clock, metrics: noMetrics, logger: deps.logger,
    onRebalancing: async () => undefined,
    onJoin: async () => progress.assigned(consumer.assignment()),
  });
  await consumer.start(async ({ batch, resolveOffset }) => {
    const now = deps.clock.now();
    const first = from.get(rangeKey(batch.topic, batch.partition)) ?? 0;
    for (const message of batch.messages) {
      if (Number(message.offset) < first) {
        resolveOffset(message.offset);
        continue;
      }
      if (!progress.accept(batch.topic, batch.partition, Number(message.offset))) {
        consumer.pauser.stop(batch.topic, batch.partition);
        return;
      }
      const item = deps.prepare(fromTier(message, { topic: batch.topic, partition: batch.partition }, deps.config.identity, now), now);
      deps.report(item.info.producer, dryRunColumn(item, now, deps.policy, deps.ruleOf(item.info.producer)));
      progress.resolved(batch.topic, batch.partition, Number(message.offset));
      resolveOffset(message.offset);
    }
  });
  while (!progress.done(0)) await new Promise((resolve) => setTimeout(resolve, 100));
  await consumer.stop(Date.now() + 5000);
  const admin = deps.kafka.admin();
  await admin.connect();
  await admin.deleteGroups([groupId]).catch(() => undefined).finally(() => admin.disconnect());
};
