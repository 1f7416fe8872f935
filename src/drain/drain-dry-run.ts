/**
 * `sluice drain --dry-run`: reads what a drain would take and says per producer what would
 * happen, changing nothing: it reads through a throwaway group (deleted afterwards), commits
 * nothing to retry.group, writes nothing and never calls the store (a message that would be
 * decided again is counted as "to decide again", since deciding would charge its producer).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Kafka } from 'kafkajs';
import type { Clock } from '../clock';
import { createOffsetTracker } from '../commit/offset-tracker';
import type { Config } from '../config/types';
import type { RuleView } from '../decide/verdict';
import { consumeRanges } from './consume-ranges';
import type { DrainOptions } from './drain-command';
import { type PartitionRange, rangeKey } from './drain-plan';
import type { SummaryColumn } from './drain-summary';
import { readRetryItem, type RetryItem } from './retry-item';
import { limitReached, type RetryPolicy, stepWhenTierDue } from './retry-steps';

/** What a drain would do with one message, judged at its not-before (or now with --ignore-delay). Pure. */
export const dryRunColumn = (item: RetryItem, now: number, policy: RetryPolicy, intervalMs: number | undefined): SummaryColumn => {
  if (item.malformed || item.decideAgain) return limitReached(item.info, now, policy) ? 'deadLettered' : 'toDecide';
  const at = Math.max(now, item.info.notBefore);
  const step = stepWhenTierDue(item.info, at, policy, intervalMs);
  if (step.kind === 'forward') return 'forwarded';
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
  redrive: boolean;
  policy: RetryPolicy;
  report: (producer: string, column: SummaryColumn) => void;
  prepare: (item: RetryItem, now: number) => RetryItem;
}

export const runDryDrain = async (deps: DryRunDeps): Promise<void> => {
  const groupId = `${deps.config.retry.group}.dry-run-${randomUUID()}`;
  const from = new Map(deps.ranges.map((r) => [rangeKey(r.topic, r.partition), r.from]));
  const noCommit = { start: () => undefined, stop: () => undefined, commitNow: async () => undefined };
  await consumeRanges({
    kafka: deps.kafka,
    groupId,
    ranges: deps.ranges,
    max: deps.options.max,
    tracker: createOffsetTracker(),
    logger: deps.logger,
    commitIntervalMs: 1000,
    createCommitter: () => noCommit,
    onBatch: async ({ batch, resolveOffset }, accept) => {
      const now = deps.clock.now();
      const first = from.get(rangeKey(batch.topic, batch.partition)) ?? 0;
      for (const message of batch.messages) {
        if (Number(message.offset) >= first) {
          if (!accept(batch.topic, batch.partition, message)) return;
          const item = deps.prepare(readRetryItem(batch.topic, batch.partition, message, deps.config.identity, now), now);
          deps.report(item.info.producer, dryRunColumn(item, now, deps.policy, deps.ruleOf(item.info.producer).limit?.intervalMs));
        }
        resolveOffset(message.offset);
      }
    },
  });
  const admin = deps.kafka.admin();
  await admin.connect();
  await admin.deleteGroups([groupId]).catch(() => undefined).finally(() => admin.disconnect());
};
