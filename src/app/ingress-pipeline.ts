/**
 * The ingress side of `sluice run`, assembled: consumer → identify → rule → decide → hold or
 * park → produce → commit. Also exposes the shared pieces the drainer reuses (sender,
 * decider, rules). `stop()` is the graceful stop of DESIGN.md: stop fetching, let held
 * messages due soon leave and park the later ones as `delayed` (their slot stays reserved),
 * wait for every send, commit, then stop the consumer.
 */
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createCommitter } from '../commit/committer';
import { createOffsetTracker } from '../commit/offset-tracker';
import { createBatchHandler } from '../consume/batch-handler';
import { createDispatcher } from '../consume/dispatch';
import { createIngressConsumer, INGRESS_CONSUMER_SETTINGS, IngressConsumer } from '../consume/ingress-consumer';
import type { Config } from '../config/types';
import type { FetchDecider } from '../decide/fetch-decider';
import type { RuleView } from '../decide/verdict';
import { createHoldScheduler, HoldScheduler } from '../hold/hold-scheduler';
import { createReleaseLanes, ReleaseLanes } from '../hold/release-lanes';
import type { Metrics } from '../metrics/types';
import type { Sender } from '../produce/batch-sender';
import { createMessageWriter } from '../produce/message-writer';

export interface IngressPipeline {
  consumer: IngressConsumer;
  hold: HoldScheduler;
  /** Spaces each producer's releases; the drainer's downstream sends share them (createPacedSender). */
  lanes: ReleaseLanes;
  start(): Promise<void>;
  /** Graceful stop within `budgetMs`; resolves when committed and disconnected. */
  stop(budgetMs: number): Promise<void>;
}

export interface IngressPipelineDeps {
  kafka: Kafka;
  config: Config;
  sender: Sender;
  decider: FetchDecider;
  ruleOf(producer: string): RuleView;
  partitions: ReadonlyMap<string, number>;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
}

export const createIngressPipeline = (deps: IngressPipelineDeps): IngressPipeline => {
  const { config, clock, metrics } = deps;
  const logger = deps.logger.child({ component: 'ingress', group: config.group });
  const topic = config.topics.ingress;
  let stopping = false;
  let active = 0;
  const kafkaConsumer: Consumer = deps.kafka.consumer({ groupId: config.group, allowAutoTopicCreation: false, ...INGRESS_CONSUMER_SETTINGS });
  const tracker = createOffsetTracker();
  const committer = createCommitter({ tracker, target: kafkaConsumer, logger, intervalMs: config.commit.intervalMs });
  // The hold's pressure callback needs the consumer, which needs the hold: tie the knot here.
  const late: { consumer?: IngressConsumer } = {};
  const hold = createHoldScheduler({
    clock,
    maxMessages: config.hold.maxMessages,
    maxBytes: config.hold.maxBytes,
    onPressure: (full) => {
      logger.debug({ held: hold.held() }, full ? 'hold full: pausing the ingress consumer' : 'hold freed: resuming the ingress consumer');
      if (full) late.consumer?.pauseAll();
      else late.consumer?.resumeAll();
    },
    onHeldChange: (messages, bytes) => metrics.held(messages, bytes),
  });
  const ingress = createIngressConsumer({
    consumer: kafkaConsumer, topic, group: config.group, tracker, committer, metrics, logger,
    shouldPause: () => stopping || hold.isFull(),
  });
  late.consumer = ingress;
  const writer = createMessageWriter({
    sender: deps.sender,
    clock,
    topics: { downstream: config.topics.downstream, deadLetter: config.topics.deadLetter, tiers: config.retry.tiers, partitions: deps.partitions },
  });
  const lanes = createReleaseLanes({ hold, clock });
  const dispatcher = createDispatcher({
    hold, writer, clock, metrics, logger, lanes,
    onStuck(inbound, error) {
      ingress.stopPartition(inbound.partition);
      logger.error({ err: error, origin: `${inbound.topic}/${inbound.partition}/${inbound.offset}`, producer: inbound.producer },
        'a message could not be written anywhere: its partition is stopped (nothing after it is committed) until an operator acts');
    },
  });
  const handle = createBatchHandler({
    identity: config.identity, resolveRule: deps.ruleOf, decider: deps.decider, dispatcher, hold, tracker, clock, metrics,
    refuses: (_t, partition) => stopping || ingress.stoppedPartitions().includes(partition),
    onFull: () => ingress.pauseAll(),
  });

  return {
    consumer: ingress,
    hold,
    lanes,
    start: () =>
      ingress.start(async (payload) => {
        active += 1;
        try {
          await handle(payload);
        } finally {
          active -= 1;
        }
      }),
    async stop(budgetMs) {
      const deadline = clock.now() + budgetMs;
      stopping = true;
      ingress.pauseAll();
      while (active > 0 && clock.now() < deadline - 3000) await new Promise((r) => setTimeout(r, 10));
      // Leave time to park and commit: what is due later than 2 s before the deadline is parked.
      for (const held of hold.takeLaterThan(Math.min(deadline - 2500, clock.now() + config.hold.maxMs))) held.evict();
      await Promise.race([hold.whenEmpty(), new Promise((r) => setTimeout(r, Math.max(0, deadline - 2000 - clock.now())))]);
      for (const held of hold.takeLaterThan(-Infinity)) held.evict();
      await deps.sender.flush();
      committer.stop();
      await committer.commitNow();
      hold.close();
      await kafkaConsumer.stop();
      await kafkaConsumer.disconnect();
      logger.info({ inFlight: tracker.inFlight() }, 'ingress stopped');
    },
  };
};
