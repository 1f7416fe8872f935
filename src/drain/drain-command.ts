/**
 * `sluice drain`: a one-shot operator drain of the retry tiers (or, with --topic, the
 * dead-letter topic) up to the end offsets seen at start, consuming and committing as
 * retry.group. The same flow engine as the sidecar's drainer, with a different source: every
 * message is taken at once (no gate), a message not due yet waits in memory instead of hopping
 * tiers, `delayed` ones leave at their not-before without a new decision, the others are
 * decided again (at their not-before; --ignore-delay: now); dead-lettered messages are decided
 * again as new.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Config } from '../config/types';
import type { RuleView } from '../decide/fetch-decider';
import type { FlowItem } from '../flow/flow-item';
import { countToDrain, planDrain, refuseWhileGroupActive } from './drain-plan';
import { createProgress, type TextOut } from './drain-progress';
import { runDryDrain } from './drain-dry-run';
import type { DrainOptions } from './drain-plan';
import { createDrainSummary, type DrainSummary, formatSummary } from './drain-summary';
import { createRangeProgress } from './range-progress';
import type { LateBroadcast } from '../hold/late-broadcast';
import { createPipeline, type Limiter, parkedFlow, routePolicyOf, stopPipeline } from '../app/wiring';
import { noMetrics } from '../metrics/types';

export interface DrainCommandDeps {
  kafka: Kafka;
  config: Config;
  producer: Producer;
  limiter: Limiter;
  ruleOf: (producer: string) => RuleView;
  partitions: ReadonlyMap<string, number>;
  clock: Clock;
  logger: Logger;
  /** Late releases shared with the sidecars' lanes (none: the drain's lanes bound only its own). */
  late?: LateBroadcast;
  /** The Redis client of the rebalance hand-off fences, as `sluice run`'s (none: a partition gained waits the whole bound). */
  fences?: Parameters<typeof createPipeline>[1]['fences'];
  stdout: TextOut;
  stderr: TextOut;
}

/** --ignore-delay moves not-before to now; a dead-lettered message starts again as new (attempts and age reset). */
export const prepareForDrain = (options: DrainOptions, redrive: boolean) => (item: FlowItem, now: number): FlowItem => {
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
  const prepare = prepareForDrain(options, redrive);
  if (total > 0 && options.dryRun) await runDryDrain({ ...deps, ranges, topics, options, report, policy: routePolicyOf(config, false), prepare });
  else if (total > 0) await drainForReal(deps, { ranges, topics, options, prepare, report });
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
  prepare: (item: FlowItem, now: number) => FlowItem;
  report: (producer: string, column: 'forwarded' | 'reparked' | 'deadLettered') => void;
}

const drainForReal = async (deps: DrainCommandDeps, run: RealRun): Promise<void> => {
  const { config, kafka } = deps;
  const pipeline = createPipeline(config, { producer: deps.producer, limiter: deps.limiter, ruleOf: deps.ruleOf, partitions: deps.partitions, metrics: noMetrics, logger: deps.logger, late: deps.late, fences: deps.fences });
  const range = createRangeProgress(run.ranges, run.options.max);
  const flow = parkedFlow(config, kafka, pipeline, {
    name: 'drain', topics: run.topics, hop: false,
    report: (producer, outcome) => run.report(producer, outcome === 'dead-lettered' ? 'deadLettered' : outcome),
    source: {
      waitForTurn: false,
      prepare: run.prepare,
      accept: (topic, partition, message) => {
        const taken = range.accept(topic, partition, Number(message.offset));
        if (!taken) flow.consumer.pauser.stop(topic, partition);
        else range.resolved(topic, partition, Number(message.offset));
        return taken;
      },
    },
  });
  const joined = (): void => {
    range.assigned(flow.consumer.assignment());
    const notOurs = range.notOurs();
    if (notOurs.length) deps.logger.warn({ partitions: notOurs }, 'other members of the group own these partitions: not drained by this run');
  };
  await flow.start();
  while (flow.busy() || !range.done(flow.tracker.inFlight())) {
    if (flow.consumer.joined()) joined();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopPipeline(pipeline, 9000);
};
