/**
 * `sluice drain`: a one-shot operator drain of the retry tiers (or, with --topic, the
 * dead-letter topic) up to the end offsets seen at start, consuming and committing as
 * retry.group. Delayed messages leave at their not-before without a new decision, the others
 * are decided again (at their not-before; --ignore-delay: now); dead-lettered messages are
 * decided again as new. Same router as the sidecar's drainer, except that nothing hops tiers:
 * a message not due yet waits in memory.
 */
import { createCommitter } from '../commit/committer';
import { createOffsetTracker } from '../commit/offset-tracker';
import { createHoldScheduler } from '../hold/hold-scheduler';
import { noMetrics } from '../metrics/types';
import { consumeRanges } from './consume-ranges';
import { handleDrainBatch } from './drain-batch';
import { countToDrain, planDrain, refuseWhileGroupActive } from './drain-plan';
import { createProgress, type TextOut } from './drain-progress';
import { runDryDrain } from './drain-dry-run';
import { createDrainSummary, type DrainSummary, formatSummary } from './drain-summary';
import type { RetryItem } from './retry-item';
import type { PartitionPauser } from './partition-pauser';
import type { DrainerDeps } from './drainer';
import { createRetryRouter } from './retry-router';
import { fetchPartitionCounts, retryPolicyOf } from './retry-setup';

export interface DrainOptions {
  /** A topic to drain instead of the retry tiers, normally the dead-letter topic. */
  topic?: string;
  ignoreDelay: boolean;
  dryRun: boolean;
  /** Drain at most this many messages. */
  max?: number;
  force: boolean;
}

/** What the drainer inside `sluice run` gets, less metrics (a one-shot drain serves none), plus its output. */
export interface DrainCommandDeps extends Omit<DrainerDeps, 'metrics'> {
  stdout: TextOut;
  stderr: TextOut;
}

/** --ignore-delay moves not-before to now; a dead-lettered message starts again as new (attempts and age reset). */
export const prepareForDrain = (options: DrainOptions, redrive: boolean) => (item: RetryItem, now: number): RetryItem => {
  if (redrive) return { ...item, decideAgain: true, info: { ...item.info, attempt: 0, firstSeen: now, notBefore: now } };
  if (options.ignoreDelay) return { ...item, info: { ...item.info, notBefore: Math.min(item.info.notBefore, now) } };
  return item;
};

export const runDrain = async (deps: DrainCommandDeps, options: DrainOptions): Promise<DrainSummary> => {
  const { kafka, config } = deps;
  const tierTopics = config.retry.tiers.map((t) => t.topic);
  const topics = options.topic ? [options.topic] : tierTopics;
  const redrive = options.topic !== undefined && !tierTopics.includes(options.topic);
  const admin = kafka.admin();
  await admin.connect();
  const ranges = await (async () => {
    try {
      await fetchPartitionCounts(kafka, topics);
      if (!redrive && !options.force && !options.dryRun) await refuseWhileGroupActive(admin, config.retry.group);
      return await planDrain(admin, config.retry.group, topics);
    } finally {
      await admin.disconnect();
    }
  })();
  const summary = createDrainSummary();
  const total = Math.min(countToDrain(ranges), options.max ?? Infinity);
  const progress = createProgress(deps.stderr, total);
  const report = (producer: string, column: Parameters<DrainSummary['add']>[1]): void => {
    summary.add(producer, column);
    progress.tick();
  };
  if (total > 0 && options.dryRun) await runDryDrain({ ...deps, ranges, topics, options, redrive, report, policy: retryPolicyOf(config), prepare: prepareForDrain(options, redrive) });
  else if (total > 0) await drainForReal(deps, { ranges, topics, options, redrive, report });
  progress.stop();
  const what = `${topics.join(', ')} as ${config.retry.group}`;
  if (total === 0) deps.stdout.write(`nothing to drain: ${what} is at the end offsets\n`);
  else deps.stdout.write(`${options.dryRun ? 'would drain' : 'drained'} ${summary.total()} message(s) of ${what}:\n${formatSummary(summary, { dryRun: options.dryRun })}`);
  return summary;
};

interface RealRun {
  ranges: Awaited<ReturnType<typeof planDrain>>;
  topics: string[];
  options: DrainOptions;
  redrive: boolean;
  report: (producer: string, column: 'forwarded' | 'reparked' | 'deadLettered') => void;
}

const drainForReal = async (deps: DrainCommandDeps, run: RealRun): Promise<void> => {
  const { config, clock, kafka } = deps;
  const partitions = await fetchPartitionCounts(kafka, [...config.retry.tiers.map((t) => t.topic), config.topics.deadLetter]);
  const tracker = createOffsetTracker();
  // Messages wait in memory until their not-before: past the hold caps, fetching pauses.
  let pauser: PartitionPauser | undefined;
  const scheduler = createHoldScheduler({
    clock, maxMessages: config.hold.maxMessages, maxBytes: config.hold.maxBytes, onPressure: (full) => pauser?.setBlocked(full),
  });
  const router = createRetryRouter({
    ...deps,
    scheduler,
    metrics: noMetrics,
    hop: false,
    partitionsOf: (topic) => partitions.get(topic) ?? 1,
    policy: retryPolicyOf(config),
    topics: { downstream: config.topics.downstream, deadLetter: config.topics.deadLetter },
    report: (producer, outcome) => run.report(producer, outcome === 'dead-lettered' ? 'deadLettered' : outcome),
  });
  await consumeRanges({
    kafka,
    groupId: config.retry.group,
    ranges: run.ranges,
    max: run.options.max,
    tracker,
    logger: deps.logger,
    commitIntervalMs: config.commit.intervalMs,
    createCommitter,
    onBatch: (controls, accept, batchPauser) => {
      pauser = batchPauser;
      return handleDrainBatch(
        {
          router,
          tracker,
          pauser: batchPauser,
          tiers: config.retry.tiers,
          identity: config.identity,
          clock,
          metrics: noMetrics,
          waitForTier: false,
          accept,
          prepare: prepareForDrain(run.options, run.redrive),
        },
        controls,
      );
    },
  });
  scheduler.close();
};
