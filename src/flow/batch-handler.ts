/**
 * The one eachBatch handler, for ingress and for the retry tiers alike. It never waits for a
 * release or for memory: it reads the fetched messages in order (skipping offsets this member
 * already took before a rejoin: kafkajs fetches again from the committed offset), stops a tier
 * partition at the first message whose turn has not come (the gate:
 * src/flow/partition-pauser.ts) and pauses it until then, takes the rest into the flow (route
 * → decide → dispatch: takeItems below), tracks each offset until its ack and resolves
 * exactly what it took.
 *
 * A large batch is read, and its actions handed over, in slices when the event loop has not
 * turned for a while (../loop-turns.ts): it lets the loop turn between two slices, so the hold's
 * release timers fire on their slots while a large fetch is taken; the batch is still decided in
 * one call. A graceful stop, a full hold, a revoked or stopped consumer between two slices of
 * reading leaves the rest unread and unresolved (fetched again later); what was decided is
 * handed over whole (the dispatcher holds it back during a rebalance).
 *
 * Taking messages into the flow (takeItems; also how a message whose wait in memory is over is
 * routed again): it routes each from where it stands (the router, src/flow/flow-item.ts), decides those that
 * need it in one decider call (each producer decided once), and hands every action to the
 * dispatcher with the ack its offset needs. A stall (the store down under
 * limiter.onStoreError = park, on a tier) stops there: the rest is not taken and its
 * partition waits.
 */
import type { Batch, KafkaMessage } from 'kafkajs';
import type { BudgetQueue } from '../budget/budget-queue';
import type { Clock } from '../clock';
import type { OffsetTracker } from '../commit/committer';
import type { Candidate, FetchDecider, RuleView, Verdict } from '../decide/fetch-decider';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { IdentityOptions } from '../headers/header-list';
import type { Metrics } from '../metrics/types';
import { type Tier, tierOfTopic } from '../park/park';
import { LOOK_EVERY, type LoopTurns, loopTurns } from '../loop-turns';
import type { Acks, DispatchEntry, Dispatcher } from './dispatch';
import { type Action, afterVerdict, firstStep, type FlowItem, fromIngress, fromTier, fromUnreadable, type RoutePolicy } from './flow-item';
import { type PartitionPauser, readLater } from './partition-pauser';

export interface SourceOptions {
  /** Tiers this source reads (empty for ingress); a topic not among them (the dead-letter topic) is read as parked, with no gate. */
  tiers: readonly Tier[];
  /** Whether the source holds parked messages (retry tiers, dead-letter topic) rather than new ones. */
  parked: boolean;
  /** Wait for each message's turn (the sidecar); sluice drain takes every message at once. */
  waitForTurn: boolean;
  /** How long before its not-before a tier message is taken (hold.maxMs). */
  readAheadMs: number;
  identity: IdentityOptions;
  /** sluice drain: whether to take this message (end offsets, --max); false stops the batch there. */
  accept?(topic: string, partition: number, message: KafkaMessage): boolean;
  /** sluice drain: adjusts a parked message before its first step (--ignore-delay, dead-letter redrive). */
  prepare?(item: FlowItem, now: number): FlowItem;
}

export interface BatchHandlerDeps {
  source: SourceOptions;
  take: TakeDeps;
  dispatcher: Dispatcher;
  hold: HoldScheduler;
  tracker: OffsetTracker;
  pauser: PartitionPauser;
  clock: Clock;
  metrics: Metrics;
  /** True from the graceful stop on, and for partitions stopped on a message that cannot be written. */
  refuses(topic: string, partition: number): boolean;
  /** A taken message was acknowledged (its offset may be committed). */
  acked?(): void;
}

export interface BatchControls {
  batch: Batch;
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  isStale(): boolean;
}

interface Read {
  items: FlowItem[];
  /** Highest offset skipped as already taken before the first new one. */
  skippedUpTo?: string;
  /** The first message whose turn has not come: pause until then. */
  turn?: number;
  /** Read to the batch's end, nothing stopping it. */
  complete: boolean;
  /** The loop is to turn first: the index of the next message to read. */
  next?: number;
}

/**
 * One record read into the flow (from a tier: `parked`); a record that reading throws on becomes
 * an `unreadable` item (dead-lettered), never a crash. `forged` counts the `sluice-*` headers
 * dropped from ingress records.
 */
const readOne = (
  message: KafkaMessage,
  where: { topic: string; partition: number },
  source: SourceOptions,
  now: number,
  metrics: Metrics,
  forged: { count: number },
): FlowItem => {
  try {
    return source.parked ? fromTier(message, where, source.identity, now) : fromIngress(message, where, source.identity, now, forged);
  } catch (error) {
    metrics.unreadableRecords(1);
    return fromUnreadable(message, where, source.identity, now, error);
  }
};

/** The messages of `batch` from index `from` on, until the loop is due to turn. */
const read = (deps: BatchHandlerDeps, { batch, isRunning, isStale }: BatchControls, now: number, from: number): Read => {
  const { source } = deps;
  const turns = turnsOf(deps.take);
  const where = { topic: batch.topic, partition: batch.partition };
  const tier = tierOfTopic(source.tiers, batch.topic);
  const offsets = deps.tracker.partition(batch.topic, batch.partition);
  const result: Read = { items: [], complete: false };
  // Asked once: nothing in the synchronous loop below can stop the consumer or seek (kafkajs's
  // isStale builds a JSON key per call: 0.3 µs a message when asked for each).
  if (!isRunning() || isStale()) return result;
  const forged = { count: 0 };
  let stopped = false;
  const offered = new Map<string, number>();
  const { messages } = batch;
  for (let index = from; index < messages.length; index += 1) {
    if (result.items.length > 0 && result.items.length % LOOK_EVERY === 0 && turns.due()) {
      result.next = index;
      stopped = true;
      break;
    }
    const message = messages[index];
    if (offsets.scheduled(Number(message.offset))) {
      if (result.items.length === 0) result.skippedUpTo = message.offset;
      continue;
    }
    if (source.accept && !source.accept(batch.topic, batch.partition, message)) {
      stopped = true;
      break;
    }
    if (!source.parked) {
      const item = readOne(message, where, source, now, deps.metrics, forged);
      const { producer } = item.info;
      offered.set(producer, (offered.get(producer) ?? 0) + 1);
      result.items.push(item);
      continue;
    }
    let item = readOne(message, where, source, now, deps.metrics, forged);
    if (item.unreadable !== undefined) {
      result.items.push(item);
      continue;
    }
    if (tier && source.waitForTurn) {
      const turn = readLater({ tier, parkedAt: Number(message.timestamp), notBefore: item.malformed ? undefined : item.info.notBefore }, now, source.readAheadMs);
      if (turn !== undefined) {
        result.turn = turn;
        stopped = true;
        break;
      }
    }
    if (item.malformed) deps.metrics.malformedRetryHeaders(1);
    if (source.prepare) item = source.prepare(item, now);
    result.items.push(item);
  }
  if (forged.count > 0) deps.metrics.forgedHeadersDropped(forged.count);
  for (const [producer, count] of offered) deps.metrics.offered?.(producer, count);
  result.complete = !stopped;
  return result;
};

export interface TakeDeps {
  decider: FetchDecider;
  ruleOf(producer: string): RuleView;
  policy: RoutePolicy;
  clock: Clock;
  /** Where messages wait for a contended budget (only with `total:`). */
  budgetQueue?: BudgetQueue;
  /** The event loop's turns while a batch is read and handed over (default: the process's). */
  turns?: LoopTurns;
}

/** The loop's turns a take asks (the process's unless given). */
const turnsOf = (take: TakeDeps): LoopTurns => take.turns ?? loopTurns;

export interface Taken {
  /** How many of the items were dispatched (all, unless a stall stopped them). */
  count: number;
  /** Set on a stall: retry the rest after this instant. */
  stallUntil?: number;
}

/** Each item's first step, and a candidate for each that is to be decided (in order). */
const firstSteps = (deps: TakeDeps, items: readonly FlowItem[]): { steps: Action[]; asked: Candidate[] } => {
  const now = deps.clock.now();
  const steps: Action[] = [];
  const asked: Candidate[] = [];
  const queue = deps.budgetQueue;
  for (const item of items) {
    const rule = deps.ruleOf(item.info.producer);
    let step = firstStep(item, now, deps.policy, rule);
    // Its producer has messages waiting for the budget: it waits behind them, undecided.
    if (step.kind === 'decide' && rule.waits && queue?.joins(item.info.producer, item, item.size)) {
      step = { kind: 'wait-budget', maxWaitMs: rule.waits.maxWaitMs, chunk: rule.waits.chunk, otherwise: { kind: 'wait', until: now } };
    }
    steps.push(step);
    if (step.kind === 'decide') asked.push({ producer: item.info.producer, rule, size: item.size, asOf: step.asOf });
  }
  return { steps, asked };
};

/** Each item's action (after its verdict), tracked and handed to the dispatcher (in slices when the loop is due to turn), up to a stall. */
const dispatchInOrder = async (deps: TakeDeps, dispatcher: Dispatcher, items: readonly FlowItem[], steps: readonly Action[], asked: readonly Candidate[], verdicts: readonly Verdict[], acks: Acks): Promise<Taken> => {
  const turns = turnsOf(deps);
  const decidedAt = deps.clock.now();
  let v = 0;
  let entries: DispatchEntry[] = [];
  const handOver = (): void => {
    dispatcher.dispatchAll(entries, acks);
    entries = [];
  };
  try {
    for (let i = 0; i < items.length; i += 1) {
      if (i > 0 && i % LOOK_EVERY === 0 && turns.due()) {
        handOver();
        await turns.turn();
      }
      const item = items[i];
      const step = steps[i];
      const action = step.kind === 'decide' ? afterVerdict(item, verdicts[v], decidedAt, deps.policy, asked[v++].rule.waits) : step;
      if (action.kind === 'stall') return { count: i, stallUntil: action.until };
      if (action.kind === 'decide') throw new Error('the router asked for a second decision');
      acks.track(item);
      entries.push({ item, action });
    }
  } finally {
    handOver(); // what was tracked is dispatched, even if a later item threw
  }
  return { count: items.length };
};

/** The first steps, the one decider call, then the hand-over. */
export const takeItems = async (deps: TakeDeps, dispatcher: Dispatcher, items: readonly FlowItem[], acks: Acks): Promise<Taken> => {
  const { steps, asked } = firstSteps(deps, items);
  const verdicts = asked.length > 0 ? await deps.decider.decide(asked) : [];
  return dispatchInOrder(deps, dispatcher, items, steps, asked, verdicts, acks);
};

/**
 * The batch read, in slices when the loop is due to turn; a stop, a full hold, a consumer no
 * longer running or a stale batch (read() asks) between two slices ends the reading there.
 */
const readSliced = async (deps: BatchHandlerDeps, controls: BatchControls): Promise<Read> => {
  const { topic, partition } = controls.batch;
  const found = read(deps, controls, deps.clock.now(), 0);
  while (found.next !== undefined) {
    await turnsOf(deps.take).turn();
    if (deps.refuses(topic, partition) || deps.hold.isFull()) return { ...found, next: undefined, complete: false };
    const more = read(deps, controls, deps.clock.now(), found.next);
    found.items.push(...more.items); // a later slice follows a full one: its skippedUpTo means nothing here
    found.turn = more.turn;
    found.complete = more.complete;
    found.next = more.next;
  }
  return found;
};

export const createBatchHandler = (deps: BatchHandlerDeps) =>
  async (controls: BatchControls): Promise<void> => {
    const { batch } = controls;
    const { topic, partition } = batch;
    if (deps.refuses(topic, partition)) return;
    // Full: leave the batch unresolved (fetched again later); the hold's pressure pauses fetching.
    if (deps.hold.isFull()) return;
    const found = await readSliced(deps, controls);
    const offsets = deps.tracker.partition(topic, partition);
    const taken = await takeItems(deps.take, deps.dispatcher, found.items, {
      track: (item) => offsets.add(Number(item.offset)),
      ack: (item) => {
        offsets.ack(Number(item.offset));
        deps.acked?.();
      },
    });
    if (found.complete && taken.count === found.items.length) {
      // Offset gaps (control records, compaction) inside the batch are covered too.
      offsets.covered(Number(batch.lastOffset()));
      controls.resolveOffset(batch.lastOffset());
    } else {
      const last = taken.count > 0 ? found.items[taken.count - 1].offset : found.skippedUpTo;
      if (last !== undefined) controls.resolveOffset(last);
    }
    const until = taken.stallUntil ?? found.turn;
    if (until !== undefined) deps.pauser.pauseUntil(topic, partition, until);
    await controls.heartbeat();
  };
