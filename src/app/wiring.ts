/**
 * The one wiring module: the only place where concrete types meet. `sluice run`, `sluice
 * drain`, `sluice status`, `sluice usage` and the tests' fixtures build what they need from the
 * settings here, the same way — Kafka client and producer, Redis client, limiter store behind
 * the store-error policy, the store's clock, decider, sender and writer, the one hold and its
 * release lanes, and the flows. What only `sluice run` adds (metrics, quota holder, usage
 * history, budget, status, HTTP, lag) is built in ./wiring-sidecar.ts; what the one-shot
 * commands open, in ./wiring-commands.ts. The commands only call these and orchestrate.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { createBudget, REPORT_TTL_MS, RESERVE, type Budget, type BudgetStatus } from '../budget/budget';
import { createBudgetQueue } from '../budget/budget-queue';
import { createBudgetStore } from '../budget/budget-store';
import { readLag } from '../budget/follow-lag';
import { systemClock } from '../clock';
import { registerCodecs } from '../codecs/register-codecs';
import type { Config } from '../config/types';
import { createSlotLeases } from '../decide/slot-leases';
import { coalesceDecider, createFetchDecider, createGuardedStore, type FetchDecider, type GuardedStore, type RuleView, spacingOf } from '../decide/fetch-decider';
import { createRedisStore } from '../limit/redis-store';
import { createStoreClock, type StoreClock } from '../decide/store-clock';
import type { SourceOptions } from '../flow/batch-handler';
import type { Outcome } from '../flow/dispatch';
import { type BlockReason, createFlow, type Flow, type FlowShared } from '../flow/flow';
import { createRedisFenceStore, HANDOFF_BOUND_MS } from '../flow/handoff-fence';
import type { RoutePolicy } from '../flow/flow-item';
import { subscriptionAssigner } from '../flow/subscription-assigner';
import { createHoldScheduler } from '../hold/hold-scheduler';
import { createLateBroadcast, lateChannel, type LateBroadcast } from '../hold/late-broadcast';
import { createReleaseLanes, STUCK_MS } from '../hold/release-lanes';
import { LANE_TOLERANCE_MS, SECOND_MS, SECOND_SPAN_MS } from '../hold/second-rule';
import { createMemoryStore } from '../limit/memory-store';
import { createRedisClient, redisClientOptionsOf } from '../limit/redis-client';
import { scaleRule } from '../limit/scale-rule';
import type { LimiterStore } from '../limit/types';
import type { Metrics } from '../metrics/types';
import { resolveRule, type QuotaRules } from '../rules';
import { createBatchSender, createMessageWriter, type Sender } from '../produce/batch-sender';
import { PRODUCER_SETTINGS } from '../produce/producer-settings';
import { setTimer } from '../timers';
import { createUsageQuery, type UsageQuery } from '../usage';
import { connectAdmin, createKafka } from './kafka-client';

export { connectAdmin };

export const startKafka = async (config: Config, logger: Logger): Promise<{ kafka: Kafka; admin: Admin }> => {
  registerCodecs();
  const kafka = createKafka(config, logger);
  return { kafka, admin: await connectAdmin(kafka, config.kafka.brokers) };
};

/**
 * No retries inside kafkajs (it still refreshes metadata or reconnects before it throws): the
 * sender retries every failed send itself, per topic and with its own back-off, so a failing
 * topic shows in sendErrors at its first failure, not after kafkajs's ~5 s of retries.
 */
export const createProducer = (kafka: Kafka): Producer => kafka.producer({ ...PRODUCER_SETTINGS, retry: { retries: 0 } });

export const createRedis = (config: Config, options: { timeoutMs?: number; onError?: (error: Error) => void } = {}) =>
  createRedisClient({ ...redisClientOptionsOf(config), timeoutMs: options.timeoutMs ?? config.redis.timeoutMs, onError: options.onError });

/** The usage history as `/v1/usage` and `sluice usage` read it, on the client given. */
export const usageQueryOf = (config: Config, redis: ReturnType<typeof createRedis>): UsageQuery =>
  createUsageQuery({ redis, keyPrefix: config.redis.keyPrefix, resolutions: config.usage.resolutions, clock: systemClock });

/**
 * Tells the other replicas which messages this one sent late, and hears theirs: the release
 * lanes then keep the second across replicas (src/hold/late-broadcast.ts). Publishes on the
 * limiter's client; listens on a connection of its own (a subscribed connection sends nothing
 * else). `close()` ends that connection.
 */
export const createLateBroadcastOf = (config: Config, redis: ReturnType<typeof createRedis>, logger: Logger): LateBroadcast => {
  const subscriber = createRedis(config, { onError: (error) => logger.debug({ err: error }, 'late-releases connection: error') });
  return createLateBroadcast({ publisher: redis, subscriber, channel: lateChannel(config.redis.keyPrefix), logger });
};

export interface Limiter {
  store: LimiterStore;
  guarded: GuardedStore;
  decider: FetchDecider;
  /** The flow's clock: the store's time (docs/design.md "One clock"). */
  clock: StoreClock;
}

/**
 * The limiter's Redis store. The limiter's carries the store's clock (every decide has a "not
 * after" instant); a one-shot reader (`sluice status`) passes its own, longer timeout and no clock.
 */
export const createLimiterStore = (config: Config, redis: ReturnType<typeof createRedis>, options: { clock?: StoreClock; timeoutMs?: number } = {}): LimiterStore =>
  createRedisStore({ redis, keyPrefix: config.redis.keyPrefix, timeoutMs: options.timeoutMs ?? config.redis.timeoutMs, clock: options.clock });

/** The store behind the store-error policy and the coalescing decider on it, as every command runs them. */
export const limiterOn = (config: Config, deps: { store: LimiterStore; clock: StoreClock; members: () => number; metrics: Metrics; logger: Logger }): Limiter => {
  const { store, clock } = deps;
  const guarded = createGuardedStore({
    store, local: createMemoryStore({ clock }), policy: config.limiter.onStoreError, members: deps.members, scaleRule,
    clock, metrics: deps.metrics, logger: deps.logger, parkDelayMs: config.retry.tiers[0].delayMs,
  });
  const decider = coalesceDecider(createFetchDecider({ store: guarded, clock, holdMaxMs: config.hold.maxMs, mode: config.mode, observe: clock.observe, leases: createSlotLeases() }));
  return { store, guarded, decider, clock };
};

export const createLimiter = (config: Config, deps: { redis: ReturnType<typeof createRedis>; members: () => number; metrics: Metrics; logger: Logger }): Limiter => {
  const clock = createStoreClock(systemClock);
  return limiterOn(config, { store: createLimiterStore(config, deps.redis, { clock }), clock, members: deps.members, metrics: deps.metrics, logger: deps.logger });
};

/**
 * The downstream budget (`total:`, src/budget): its reports exchanged on the limiter's client (the
 * command is defined here, before any flow fills an auto-pipeline), the followed group's lag read
 * with the admin client. Inert while the quota file has no `total:`.
 */
export const createBudgetOf = (config: Config, deps: {
  redis: ReturnType<typeof createRedis>;
  admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>;
  rules(): QuotaRules;
  limiter: Limiter;
  members(): number;
  logger: Logger;
  onTick?(status: BudgetStatus): void;
  countShare?(producer: string, messages: number): void;
}): Budget =>
  createBudget({
    rules: deps.rules, resolve: resolveRule,
    store: createBudgetStore({ redis: deps.redis, keyPrefix: config.redis.keyPrefix, group: config.group, replica: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`, ttlMs: REPORT_TTL_MS }),
    clock: deps.limiter.clock, members: deps.members, fallbackActive: () => deps.limiter.guarded.fallbackActive(),
    readLag: (group) => readLag(deps.admin, group, config.topics.downstream),
    logger: deps.logger, onTick: deps.onTick, countShare: deps.countShare,
  });

export const routePolicyOf = (config: Config, hop: boolean): RoutePolicy => ({
  tiers: config.retry.tiers,
  holdMaxMs: config.hold.maxMs,
  maxAttempts: config.retry.maxAttempts,
  maxAgeMs: config.retry.maxAgeMs,
  hop,
});

export interface Pipeline {
  shared: FlowShared;
  sender: Sender;
  flows: Flow[];
  add(flow: Flow): Flow;
}

/** The pieces every flow of a process shares: one sender, one writer, one hold with one set of caps, one set of lanes. */
export const createPipeline = (config: Config, deps: {
  producer: Producer;
  limiter: Limiter;
  ruleOf(producer: string): RuleView;
  partitions: ReadonlyMap<string, number>;
  metrics: Metrics;
  logger: Logger;
  /** Late releases told to and heard from the other replicas (none: each replica's lanes bound only its own). */
  late?: LateBroadcast;
  /** The Redis client that keeps the rebalance hand-off fences (none: partitions gained wait the whole bound). */
  fences?: ReturnType<typeof createRedis>;
  /** The ingress group's members (none: one): only a lone replica sends late messages of producers far below their rates uncounted. */
  members?(): number;
}): Pipeline => {
  const { clock } = deps.limiter;
  const flows: Flow[] = [];
  /** Late releases and a nearly full hold pause only the flow that takes new messages: what was admitted comes first. */
  const blockIngress = (reason: Exclude<BlockReason, 'full'>, on: boolean): void => {
    for (const flow of flows) if (flow.name === 'ingress') flow.block(reason, on);
  };
  const sender = createBatchSender({
    producer: deps.producer, logger: deps.logger, onError: (destination, code) => deps.metrics.sendError?.(destination, code),
    // Slower than the second rule's slack, a partition's sends count at their releases; a request longer than an outage is the outage rule's.
    slowBounds: { afterMs: SECOND_SPAN_MS - SECOND_MS, outageMs: STUCK_MS },
  });
  const hold = createHoldScheduler({
    clock, maxMessages: config.hold.maxMessages, maxBytes: config.hold.maxBytes,
    onPressure: (full) => {
      deps.logger.debug({ counted: hold.counted() }, full ? 'hold full: pausing fetches' : 'hold freed: resuming fetches');
      for (const flow of flows) flow.block('full', full);
    },
    onLate: (late) => {
      deps.logger.debug(late ? 'releases run late: the ingress flow pauses so admitted messages leave on their slot' : 'releases on time: the ingress flow fetches again');
      blockIngress('late', late);
    },
    onYield: (nearlyFull) => {
      deps.logger.debug({ counted: hold.counted() }, nearlyFull ? 'hold nearly full: the ingress flow pauses, what was admitted keeps the rest of the room' : 'hold below its share again: the ingress flow fetches again');
      blockIngress('nearly-full', nearlyFull);
    },
    onHeldChange: (messages, bytes) => deps.metrics.held(messages, bytes),
  });
  const writer = createMessageWriter({
    sender, clock,
    topics: { downstream: config.topics.downstream, deadLetter: config.topics.deadLetter, tiers: config.retry.tiers, partitions: deps.partitions },
  });
  // A producer a contended budget holds back keeps to the budget's 1.05 × in any second, its own
  // slot included (a span one interval shorter), so the budget's producers together stay within
  // 1.05 × the budget (docs/budget.md); never below a second, or a late lane could not catch up.
  const budgetSpan = (producer: string): number | undefined => {
    const view = deps.ruleOf(producer);
    if (!view.waits || !view.limit) return undefined;
    return Math.max(SECOND_MS + LANE_TOLERANCE_MS, SECOND_MS * (1 + RESERVE) - view.limit.intervalMs);
  };
  const lanes = createReleaseLanes({ hold, clock, onLate: deps.late?.publish, spanOf: budgetSpan, members: deps.members });
  // What other replicas tell is checked against the store's clock; a lane keeps this replica's interval for its producer.
  const ownSpacing = (producer: string): number => {
    const rule = deps.ruleOf(producer);
    return rule.limit && !rule.unlimited ? spacingOf(rule.limit) : 0;
  };
  deps.late?.listen(lanes.lateElsewhere, { clock, metrics: deps.metrics, spacingOf: ownSpacing });
  // What a contended budget refuses waits in at most half the hold's room (docs/budget.md).
  const budgetQueue = createBudgetQueue({
    clock, limit: { messages: Math.floor(config.hold.maxMessages / 2), bytes: Math.floor(config.hold.maxBytes / 2) }, track: (bytes) => hold.track(bytes),
  });
  const shared: FlowShared = {
    hold, lanes, writer, sender, decider: deps.limiter.decider, ruleOf: deps.ruleOf, budgetQueue,
    clock, metrics: deps.metrics, logger: deps.logger, commitIntervalMs: config.commit.intervalMs,
    ...(deps.fences ? { fences: { store: createRedisFenceStore(deps.fences), keyPrefix: config.redis.keyPrefix } } : {}),
  };
  return { shared, sender, flows, add: (flow) => (flows.push(flow), flow) };
};

/** The longest a partition gained in a rebalance waits for its previous owner to release it (src/flow/handoff-fence.ts). */
export const HANDOFF_MS = HANDOFF_BOUND_MS;

export const ingressFlow = (config: Config, kafka: Kafka, pipeline: Pipeline): Flow =>
  pipeline.add(createFlow(pipeline.shared, {
    name: 'ingress', kafka, groupId: config.group, topics: [config.topics.ingress], policy: routePolicyOf(config, true), partitionsConsumedConcurrently: 8, handoffMs: HANDOFF_MS,
    source: { tiers: [], parked: false, waitForTurn: false, readAheadMs: 0, identity: config.identity },
  }));

/** The retry tiers (the sidecar's drainer), or what `sluice drain` reads: retry.group, each member taking only what it subscribed to. */
export const parkedFlow = (config: Config, kafka: Kafka, pipeline: Pipeline, options: {
  name: string;
  topics: readonly string[];
  hop: boolean;
  source?: Partial<SourceOptions>;
  report?(producer: string, outcome: Outcome): void;
}): Flow =>
  pipeline.add(createFlow(pipeline.shared, {
    name: options.name, kafka, groupId: config.retry.group, topics: options.topics, policy: routePolicyOf(config, options.hop),
    partitionsConsumedConcurrently: Math.max(1, options.topics.length),
    consumerConfig: { partitionAssigners: [subscriptionAssigner] },
    report: options.report,
    handoffMs: HANDOFF_MS,
    source: { tiers: config.retry.tiers, parked: true, waitForTurn: true, readAheadMs: config.hold.maxMs, identity: config.identity, ...options.source },
  }));

const until = (work: Promise<unknown>, deadline: number): Promise<unknown> =>
  Promise.race([work, new Promise((resolve) => void setTimer(() => resolve(undefined), deadline - Date.now()).unref())]);

/**
 * The graceful stop of docs/design.md "Kafka mechanics", bounded by `budgetMs`: fetch nothing more; held messages
 * due within a second leave, later ones are parked (`delayed`, their slot kept; a tier message
 * goes back to a tier), and so is what is out being decided again once answered; wait for the
 * writes; commit; leave the groups; disconnect. A write
 * still failing at the end is left unacknowledged (delivered again after a restart: nothing is lost).
 */
export const stopPipeline = async (pipeline: Pipeline, budgetMs: number): Promise<void> => {
  const deadline = Date.now() + budgetMs;
  const { hold, clock, lanes, logger } = pipeline.shared;
  logger.info({ held: hold.held(), laneQueued: lanes.waiting(), budgetWaiting: pipeline.shared.budgetQueue?.waiting(), sending: pipeline.sender.pending(), inFlight: pipeline.flows.map((f) => f.tracker.inFlight()) }, 'graceful stop: what is in hand');
  await Promise.all(pipeline.flows.map((flow) => flow.halt(deadline - 6000)));
  // What waits for the budget is parked to be decided again (once none is out being decided).
  const { budgetQueue } = pipeline.shared;
  if (budgetQueue) {
    budgetQueue.pause();
    await until(budgetQueue.settled(), deadline - 6000);
    budgetQueue.close();
  }
  for (const held of hold.takeLaterThan(clock.now() + 1000)) held.evict();
  await until(hold.whenEmpty(), deadline - 4000);
  for (const held of hold.takeLaterThan(-Infinity)) held.evict();
  // The hold is empty for good: what is still out being decided again is parked as it is answered.
  await until(Promise.all(pipeline.flows.map((flow) => flow.parkOut())), deadline - 2500);
  await until(pipeline.sender.flush(), deadline - 2000);
  pipeline.sender.close();
  await until(pipeline.sender.flush(), deadline - 1500);
  hold.close();
  await Promise.all(pipeline.flows.map((flow) => flow.stop(deadline)));
};
