/**
 * Carries out the router's actions for one flow (src/flow/flow-item.ts): hold a message until its
 * instant, queue it in its producer's release lane, write it downstream, to a tier or to the
 * dead-letter topic, and call its `ack` once the broker acknowledged it (its offset may then
 * be committed). Every message counts against the one hold's caps from dispatch until its ack
 * (in the heap while held, tracked otherwise).
 *
 * Send failures: a message refused as too large goes to the dead-letter topic (`too-large`);
 * any other failure (the sender closed at shutdown with sends still failing) leaves it
 * unacknowledged — it is delivered again — and `onStuck` stops its partition. Nothing skipped.
 *
 * Rebalance: `handOver()` (REBALANCING) holds back every forward until `resume(lost)`
 * (GROUP_JOIN): then what belongs to partitions kept re-enters its lane (spaced, not a burst)
 * and everything held for partitions lost is parked — `delayed` with its slot kept, a tier
 * message back on a tier — so it is acknowledged and committed before a new owner reads the
 * partition: nothing is sent twice, no slot charged twice. What stays (partitions kept) leaves
 * on its slot: parking it would bring it back late. A message out being decided again at the join
 * (its round in Redis) is parked likewise when its round answers; so is every such message at a
 * stop, once the hold is emptied (`parkOut`).
 */
import type { Logger } from 'pino';
import type { BudgetQueue } from '../budget/budget-queue';
import type { Clock } from '../clock';
import { SluiceError } from '../errors';
import type { HoldScheduler } from '../hold/hold-scheduler';
import type { ReleaseLanes } from '../hold/release-lanes';
import { COUNTED_LATE_MS, dueNow, LANE_TOLERANCE_MS } from '../hold/second-rule';
import type { Metrics } from '../metrics/types';
import type { DeadLetterReason, ParkInfo } from '../park/park';
import type { MessageWriter, SendAnswer } from '../produce/batch-sender';
import { type Action, type FlowItem, ownerOf, parkTier } from './flow-item';

/** Where the offsets of taken items are tracked until their writes are acknowledged. */
export interface Acks {
  /** The item is taken (called in fetch order, before it is dispatched). */
  track(item: FlowItem): void;
  /** Its write (downstream, to a tier or the dead-letter topic) was acknowledged. */
  ack(item: FlowItem): void;
}

export type Outcome = 'forwarded' | 'reparked' | 'dead-lettered';

interface Count {
  done(): void;
  forget(): void;
}

export interface DispatchDeps {
  hold: HoldScheduler;
  lanes: ReleaseLanes;
  writer: MessageWriter;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  tiers: Parameters<typeof parkTier>[0];
  /** A message whose wait in memory is over: route it again (takeItems, src/flow/batch-handler.ts); settles once taken. */
  again(item: FlowItem, ack: () => void): Promise<unknown>;
  /** Where a message waits for a contended budget (src/budget/budget-queue.ts); none: it goes its other way. */
  budgetQueue?: BudgetQueue;
  /** A message that cannot be written anywhere: stop its partition (nothing after it is committed). */
  onStuck(item: FlowItem, error: unknown): void;
  /** Every outcome, per producer (sluice drain's summary). */
  report?(producer: string, outcome: Outcome): void;
}

export type Dispatched = Exclude<Action, { kind: 'decide' } | { kind: 'stall' }>;

/** One message's action (its offset tracked in the fetch's `Acks`). */
export interface DispatchEntry {
  item: FlowItem;
  action: Dispatched;
}

export interface Dispatcher {
  dispatch(item: FlowItem, action: Dispatched, ack: () => void): void;
  /**
   * The actions of one fetch, in order. First decisions released at once, of producers with
   * nothing held or queued, go out together (one send, one promise, counted together); the
   * rest as `dispatch`.
   */
  dispatchAll(entries: readonly DispatchEntry[], acks: Acks): void;
  /** A rebalance starts: hold every forward back until resume. */
  handOver(): void;
  /** The group joined: forward again; park what is still held for partitions lost (and what is out being decided again, once decided). */
  resume(lost: (owner: string) => boolean): void;
  /** A stop, once the hold is emptied: what is out being decided again is parked as its round answers; resolves when none is out. */
  parkOut(): Promise<void>;
}

/**
 * A decision that came back more than COUNTED_LATE_MS after its slot (a slow round, a start): let
 * through at once and uncounted, a fetch's worth of one producer's slots would go together.
 */
const decidedLate = (slot: number | undefined, now: number): boolean => slot !== undefined && now - slot > COUNTED_LATE_MS;

/**
 * Producers with ingress messages of a fetch decided late, and how many of each (with its
 * spacing): those go through their lane (counted late), unless the producer is far below its
 * rate (`farBelow`). A lone one leaves with the fetch's unit, as one on its slot, unless the
 * process's count knows its producer to be sending near its rate (`busy`): one message is no
 * burst, and a lane made for each of a flood of new producers decided in many rounds was kept as
 * long as its interval (450 bytes of heap a producer); but a fetch is handed over a partition at
 * a time, and the messages of a producer whose keys spread over the partitions come one a
 * partition — each of them lone, none counted, however many a slow round bunched.
 */
const lateOf = (entries: readonly DispatchEntry[], now: number, busy: (producer: string, spacingMs: number) => boolean): Map<string, { n: number; spacingMs: number }> => {
  const late = new Map<string, { n: number; spacingMs: number }>();
  for (const { item, action } of entries) {
    if (action.kind !== 'release' || item.fromTier || !decidedLate(action.slot, now)) continue;
    const seen = late.get(item.info.producer);
    if (seen) seen.n += 1;
    else late.set(item.info.producer, { n: 1, spacingMs: action.spacingMs });
  }
  for (const [producer, { n, spacingMs }] of late) if (n === 1 && !busy(producer, spacingMs)) late.delete(producer);
  return late;
};

/** A message parked to be released on its turn (`delayed`): its info with this attempt and, given one, that slot. */
const delayedInfo = (item: FlowItem, attempt: number, notBefore = item.info.notBefore): ParkInfo =>
  ({ ...item.info, attempt, notBefore, reason: { kind: 'delayed' } });

const isTooLarge = (error: unknown): boolean => error instanceof SluiceError && error.code === 'MESSAGE_TOO_LARGE';

export const createDispatcher = (deps: DispatchDeps): Dispatcher => {
  const { hold, lanes, writer, clock, metrics, logger } = deps;
  let frozen = false;
  let heldBack: { owner: string; go(): void; park(): void }[] = [];

  /**
   * Counts the message against the hold's caps until it is acknowledged (`done`) or forgotten
   * unsent (`forget`: a rebalance moved its partition, or it cannot be written: never committed).
   */
  const counted = (item: FlowItem, ack: () => void): Count => {
    const release = hold.track(item.size);
    return {
      done: () => {
        release();
        ack();
      },
      forget: release,
    };
  };

  const failed = (item: FlowItem, info: ParkInfo, count: Count) => (error: unknown): void => {
    if (!isTooLarge(error)) {
      count.forget();
      return deps.onStuck(item, error);
    }
    logger.error({ err: error, origin: `${info.origin.topic}/${info.origin.partition}/${info.origin.offset}`, producer: info.producer }, 'message refused as too large; dead-lettering it');
    deadLetter(item, info, 'too-large', count);
  };

  const deadLetter = (item: FlowItem, info: ParkInfo, reason: DeadLetterReason, count: Count): void => {
    writer.deadLetter(item.content, info, reason).then(
      () => {
        metrics.message('dead_lettered', info.producer);
        deps.report?.(info.producer, 'dead-lettered');
        count.done();
      },
      (error) => {
        count.forget();
        deps.onStuck(item, error);
      },
    );
  };

  /**
   * While a rebalance is under way the forward waits: `again` (kept partition) or `parkBack` (lost)
   * when it ends. Returns what settles once the write was answered, with the broker's answer (the
   * lane counts it then, and by that answer: release-lanes.ts).
   */
  const forward = (item: FlowItem, attempt: number, count: Count, again: () => void, parkBack: () => void): Promise<SendAnswer | undefined> | undefined => {
    if (frozen) return void heldBack.push({ owner: ownerOf(item.topic, item.partition), go: again, park: parkBack });
    const waitedMs = clock.now() - item.info.firstSeen;
    return writer.forward(item.content, { timestamp: item.info.timestamp, waitedMs, attempt: item.fromTier ? attempt : undefined }).then(
      (answer) => {
        metrics.message('forwarded', item.info.producer);
        metrics.forwardedBytes?.(item.info.producer, item.size);
        metrics.releaseDelay(waitedMs);
        deps.report?.(item.info.producer, 'forwarded');
        count.done();
        return answer;
      },
      (error: unknown) => void failed(item, delayedInfo(item, attempt), count)(error),
    );
  };

  const park = (item: FlowItem, info: ParkInfo, moved: boolean, count: Count, tier = parkTier(deps.tiers, info.notBefore - clock.now())): void => {
    writer.park(item.content, info, tier).then(
      () => {
        if (!moved) {
          metrics.message(info.reason.kind === 'delayed' ? 'delayed' : 'overflowed', info.producer);
          deps.report?.(info.producer, 'reparked');
        }
        count.done();
      },
      failed(item, info, count),
    );
  };

  // Messages of a producer waiting in the heap: one due now must not overtake them.
  const heldOf = new Map<string, number>();
  const unheld = (producer: string): void => {
    const n = heldOf.get(producer) ?? 0;
    if (n <= 1) heldOf.delete(producer);
    else heldOf.set(producer, n - 1);
  };

  /**
   * Into the producer's lane: sent on its turn, at least spacingMs after the previous one. A
   * message that waited for its slot (`queued`: its producer is backlogged, so its slots are
   * contiguous) counts in the lane's second rule at its acknowledgement; one let through at once
   * is not counted if it leaves on its slot or its slot is sparse (the rule's span says nothing
   * about the count of sparse slots), so a slow broker or a stall never holds back traffic under
   * its quota (the lane says when it is counted: release-lanes.ts).
   */
  const toLane = (item: FlowItem, attempt: number, slot: number, spacingMs: number, queued: boolean, ack: () => void): void => {
    const count = counted(item, ack);
    const { producer } = item.info;
    const parkBack = (): void => park(item, delayedInfo(item, attempt, slot), item.fromTier, count);
    const enter = (): void =>
      lanes.due(producer, spacingMs, {
        bytes: item.size,
        owner: ownerOf(item.topic, item.partition),
        slot,
        conforming: !queued,
        send: () => forward(item, attempt, count, enter, parkBack),
        evict: parkBack,
      });
    enter();
  };

  const release = (item: FlowItem, at: number, attempt: number, spacingMs: number, ack: () => void, slot = at): void => {
    const { producer } = item.info;
    // Waited more than two intervals (and the limiter's rounding to whole milliseconds), or parked.
    const queued = item.fromTier || at - clock.now() > 2 * spacingMs + LANE_TOLERANCE_MS;
    // Due within LANE_TOLERANCE_MS, it goes now, as a lane lets one go (a timer could not fire it
    // sooner): above 1,000/s a fetch's messages of one producer have slots within a millisecond,
    // and a timer for each cost more than the rest of its way (docs/performance.md).
    if (dueNow(at, clock.now()) && !heldOf.has(producer)) {
      // Ingress decided after its slot (a slow round): its lane gets that slot, and counts it like
      // any late release when it is later than the second rule lets pass uncounted. (A retry
      // decided as of its turn keeps the instant it is released at, as before.)
      if (item.fromTier) return toLane(item, attempt, at, spacingMs, queued, ack);
      return toLane(item, attempt, slot, spacingMs, queued || decidedLate(slot, clock.now()), ack);
    }
    heldOf.set(producer, (heldOf.get(producer) ?? 0) + 1);
    hold.add({
      at,
      conforming: !queued,
      bytes: item.size,
      owner: ownerOf(item.topic, item.partition),
      release: () => {
        unheld(producer);
        toLane(item, attempt, at, spacingMs, queued, ack);
      },
      evict: () => {
        unheld(producer);
        parkHeld(item, attempt, at, ack);
      },
    });
  };

  // What is taken out of the hold or the budget's queue (a join lost its partition, a stop) is parked:
  /** a release `delayed` with its slot (a tier message goes back to a tier); */
  const parkHeld = (item: FlowItem, attempt: number, at: number, ack: () => void): void =>
    park(item, delayedInfo(item, attempt, at), item.fromTier, counted(item, ack));
  /** one waiting to be decided again, as it is; */
  const parkWaiting = (item: FlowItem, ack: () => void): void => park(item, item.info, true, counted(item, ack));
  /**
   * one waiting for the budget, to be decided again at once: taken out by a hand-over (a join, a
   * stop), with the attempt it came with (at least 1, its ingress decision), since a hand-over is
   * no refusal of its own — counted, each join of a churning group would bring a message waiting
   * its turn nearer to the dead-letter topic; one that waited its whole queue (`overflow`) counts
   * the refusal, as one parked at once would have.
   */
  const parkUndecided = (item: FlowItem, ack: () => void, overflow = false): void =>
    park(item, { ...item.info, attempt: overflow ? item.info.attempt + 1 : Math.max(1, item.info.attempt), notBefore: clock.now(), reason: { kind: 'overflow', limit: 'rate' } }, false, counted(item, ack));

  /**
   * Messages out being decided again (from the hold or the budget's queue), and whether a join
   * lost their partition meanwhile: that join found nothing of them to park, so what their round
   * answers is parked instead (`evict`). Dispatched as if the partition were kept, one could wait
   * here past the hand-off bound while the new owner reads it again.
   */
  const redeciding = new Map<FlowItem, { lost: boolean }>();
  /** Their rounds (each settles once its answer was dispatched); after `parkOut` every answer is parked. */
  const out = new Set<Promise<unknown>>();
  let parkingOut = false;
  const decideAgain = (item: FlowItem, ack: () => void): Promise<unknown> => {
    redeciding.set(item, { lost: parkingOut });
    const round = deps.again(item, ack).finally(() => {
      redeciding.delete(item);
      out.delete(round);
    });
    out.add(round);
    return round;
  };
  /** Whether the message comes back from a round of deciding it again during which a join lost its partition. */
  const lostMeanwhile = (item: FlowItem): boolean => {
    const round = redeciding.get(item);
    if (round === undefined) return false;
    redeciding.delete(item);
    return round.lost;
  };
  const evict = (item: FlowItem, action: Dispatched, ack: () => void): void => {
    switch (action.kind) {
      case 'release':
        return parkHeld(item, action.attempt, action.at, ack);
      case 'wait':
        return parkWaiting(item, ack);
      case 'wait-budget':
        return parkUndecided(item, ack);
      default:
        return dispatch(item, action, ack);
    }
  };

  const wait = (item: FlowItem, until: number, ack: () => void): void =>
    hold.add({
      at: until,
      bytes: item.size,
      owner: ownerOf(item.topic, item.partition),
      release: () => decideAgain(item, ack),
      evict: () => parkWaiting(item, ack),
    });

  /**
   * Waits for the budget behind its producer's earlier messages; taken out undecided (its own
   * queue waited, a rebalance, a stop) it is parked to be decided again at once.
   */
  const waitBudget = (item: FlowItem, action: Extract<Dispatched, { kind: 'wait-budget' }>, ack: () => void): void => {
    const queued = deps.budgetQueue?.push(item, {
      producer: item.info.producer,
      owner: ownerOf(item.topic, item.partition),
      bytes: item.size,
      redecide: () => decideAgain(item, ack),
      evict: () => parkUndecided(item, ack),
      expire: () => parkUndecided(item, ack, true),
    }, action.maxWaitMs, action.chunk);
    if (!queued) dispatch(item, action.otherwise as Dispatched, ack);
  };

  const dispatch = (item: FlowItem, action: Dispatched, ack: () => void): void => {
    if (redeciding.size > 0 && lostMeanwhile(item)) return evict(item, action, ack);
    switch (action.kind) {
      case 'wait-budget':
        return waitBudget(item, action, ack);
      case 'release':
        return release(item, action.at, action.attempt, action.spacingMs, ack, action.slot);
      case 'wait':
        return wait(item, action.until, ack);
      case 'park':
        return park(item, action.info, action.moved, counted(item, ack), action.tier);
      case 'dead-letter':
        return deadLetter(item, action.info, action.reason, counted(item, ack));
    }
  };

  /**
   * Releases let through at once (first decisions of ingress messages), written together:
   * counted against the caps as one, one promise for all, the outcome counted per producer. A
   * message the broker refused goes the way a single forward's would (`failed`), the others are
   * acknowledged. Only the items are kept until the answer: the fetch's dispatch entries and
   * their actions are garbage once handed over, so they die young rather than survive the
   * scavenges a produce request's round trip spans.
   */
  const forwardTogether = (unit: readonly FlowItem[], acks: Acks, now: number): void => {
    let bytes = 0;
    for (const item of unit) bytes += item.size;
    const release = hold.track(bytes, unit.length);
    writer.forwardAll(unit, now).then(({ errors, slow }) => {
      release();
      const sent = new Map<string, { count: number; bytes: number }>();
      // The delays in runs of one value (a fetch's messages were read at one instant): one
      // histogram call for each run.
      let delayMs = 0;
      let delayed = 0;
      for (let i = 0; i < unit.length; i += 1) {
        const item = unit[i];
        if (i in errors) {
          // A first decision: its release's attempt is one more than its info's (settle, flow-item.ts).
          failed(item, delayedInfo(item, item.info.attempt + 1), counted(item, () => acks.ack(item)))(errors[i]);
          continue;
        }
        const { producer } = item.info;
        const tally = sent.get(producer);
        if (tally) {
          tally.count += 1;
          tally.bytes += item.size;
        } else sent.set(producer, { count: 1, bytes: item.size });
        const waitedMs = now - item.info.firstSeen;
        if (delayed > 0 && waitedMs !== delayMs) {
          metrics.releaseDelay(delayMs, delayed);
          delayed = 0;
        }
        delayMs = waitedMs;
        delayed += 1;
        deps.report?.(producer, 'forwarded');
        acks.ack(item);
      }
      if (delayed > 0) metrics.releaseDelay(delayMs, delayed);
      for (const [producer, tally] of sent) {
        metrics.message('forwarded', producer, tally.count);
        metrics.forwardedBytes?.(producer, tally.bytes);
      }
      // A slow answer: what the request held up counts where the broker took it (release-lanes.ts).
      lanes.answered(now, sent, slow);
    });
  };

  return {
    dispatch,
    dispatchAll(entries, acks) {
      const now = clock.now();
      const unit: FlowItem[] = [];
      const late = lateOf(entries, now, lanes.busy);
      // Producers far below their rates: their late messages join the unit on their own slots.
      // Asked once for all of a producer's late ones, so none of them is refused for being late
      // once another is in the unit (it would be written before it).
      const far = new Set<string>();
      for (const [producer, { n, spacingMs }] of late) if (lanes.farBelow(producer, spacingMs, n)) far.add(producer);
      for (const { item, action } of entries) {
        const { producer } = item.info;
        if (redeciding.size > 0 && lostMeanwhile(item)) {
          evict(item, action, () => acks.ack(item));
          continue;
        }
        // A message of a producer with nothing held and an idle lane, due now: the lane records
        // it as sent. A later one of the same producer in this fetch either joins the unit too
        // or waits (held, or in the lane behind it), so the unit, written after the loop, keeps
        // the producer's order.
        if (action.kind === 'release' && !frozen && !item.fromTier && dueNow(action.at, now) && !heldOf.has(producer)
          && (far.has(producer) ? lanes.sendsNow(producer, action.spacingMs, action.slot ?? action.at, true)
            : !late.has(producer) && lanes.sendsNow(producer, action.spacingMs, action.at))) unit.push(item);
        else dispatch(item, action, () => acks.ack(item));
      }
      if (unit.length > 0) forwardTogether(unit, acks, now);
    },
    handOver() {
      // Once until the join (a commit refused as stale, then REBALANCING): the budget's queue,
      // shared by the flows, counts one pause of each.
      if (frozen) return;
      frozen = true;
      deps.budgetQueue?.pause();
    },
    resume(lost) {
      const wasFrozen = frozen;
      frozen = false;
      deps.budgetQueue?.evictOwned(lost);
      if (wasFrozen) deps.budgetQueue?.resume();
      for (const [item, round] of redeciding) if (lost(ownerOf(item.topic, item.partition))) round.lost = true;
      for (const entry of hold.takeOwned(lost)) entry.evict();
      lanes.evictOwned(lost);
      const waiting = heldBack;
      heldBack = [];
      for (const entry of waiting) (lost(entry.owner) ? entry.park : entry.go)();
    },
    async parkOut() {
      parkingOut = true;
      for (const round of redeciding.values()) round.lost = true;
      await Promise.allSettled([...out]);
    },
  };
};
