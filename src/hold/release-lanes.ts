/**
 * A producer's releases, in order, on their slots: a message due too soon after its producer's
 * previous release waits in that producer's lane; the lane's head sits in the hold scheduler,
 * the rest queue behind it (so order is kept and a graceful stop can evict them). Only
 * leaky-bucket rules are spaced (a token bucket admits bursts: spacing 0). A message leaves on
 * its own slot (the instant the limiter gave it); a lane behind its slots (this process was late)
 * catches up, so a stall costs the producer nothing in the end, under three rules:
 * - **The second** (./second-rule.ts): the broker gets within any second only messages whose
 *   slots span at most SECOND_SPAN_MS, in whichever order they leave, and a lane sends no more
 *   in any second than slots fit in that span (the count: what the span does not count too).
 *   Bound: **1.1 × the rate + 1 per replica in any second**, however late the timers fire and
 *   however long the stall.
 * - **The pace.** Inside that, a late lane releases at CATCH_UP_PACE × its own pace (the gap
 *   between its slots, at least one interval; exactly one after two slots closer than that,
 *   which came from two limiters, or farther apart than SECOND_SPAN_MS: a hole, not a pace),
 *   and its clock trails real time by at most CATCH_UP_MS (or half an interval): a late timer
 *   releases what fell due meanwhile at once.
 * - **The outage.** A message counts where the broker could take it: a lane with a send
 *   unanswered for more than STUCK_MS, none of its sends answered meanwhile, releases nothing
 *   more until it is answered, so what went into an outage is at most STUCK_MS of sends. For
 *   CALM_MS after an answer that ends such a silence, every lane keeps to its slots (no catch-up
 *   allowance; what is let through at once counts too). A send waiting behind a slow request
 *   is no outage while the lane's earlier sends are answered (a broker answering in 300 ms,
 *   one request in flight, leaves sends unanswered for 600 ms). Bound: in the second the broker
 *   returns a producer gets those releases, in the next two at most its rate + 1 per replica,
 *   later the second's bound.
 * - **Far below its rate.** The only replica of its group (`members`) lets a fetch's messages of
 *   a producer decided late leave at once, uncounted, on the fast path (`farBelow`), while the
 *   producer sends at most a FAR_BELOW_SHARE-th of its second's bound in a second — by the
 *   process's count of its sends, lane or not (./recent-sends.ts), so a lane made at a start's
 *   first late fetch qualifies too: a start that fell behind (a cold, busy process hands a fetch
 *   over hundreds of ms after its slots were decided) catches up at once rather than a tenth of
 *   a second a second, and on the cheaper way. Alone, the count keeps it within the bound; with
 *   other replicas, which would not know of those sends, and for a producer the count does not
 *   keep (past RECENT_SENDS_MAX_PRODUCERS), they are counted late as before.
 * Replicas: each lane sees its share of a producer's slots; what a lane counts late is told to
 * the other replicas (`onLate`, late-broadcast.ts) and what they tell is remembered here as if
 * counted here (`lateElsewhere`), so together they keep the second. Measurements and why each
 * constant has its value: docs/faults.md and bench/HISTORY.md.
 */
import type { Clock } from '../clock';
import type { HoldScheduler } from './hold-scheduler';
import { createRecencyMap } from './recency-map';
import { createRecentSends } from './recent-sends';
import { binds, COUNTED_LATE_MS, countOf, createSentClock, dueNow, LANE_TOLERANCE_MS, type LateReleases, landed, mark, remember, SECOND_MS, SECOND_SPAN_MS, secondOf, type SentClock, type SentMarks, sentLately, slotsInSpan } from './second-rule';

/** What the broker's acknowledgement of a send says (src/produce/batch-sender.ts, SendAnswer). */
export interface LaneAnswer {
  /** The broker's append time, when the topic records it. */
  appendedAt?: number;
  /** The partition's broker is slow (src/produce/slow-broker.ts): the send counts at its release. */
  slow?: boolean;
}

export interface LaneItem {
  bytes: number;
  /** Sends it; its promise settles at the broker's acknowledgement, with its answer when it has one. */
  send(): void | PromiseLike<LaneAnswer | undefined>;
  /** Let through at once (its producer under its rate, its slots sparse): the second rule does not count it. */
  conforming?: boolean;
  /** Taken out before it could leave (graceful stop). */
  evict(): void;
  /** The partition the message came from: a rebalance hands over what it owns. */
  owner?: string;
  /** Its release instant from the limiter (none: the instant it became due). */
  slot?: number;
}

export interface ReleaseLanes {
  /** A message of `producer` is due now: sent at once, or queued behind the producer's previous release. */
  due(producer: string, spacingMs: number, item: LaneItem): void;
  /**
   * A message let through at once with release instant `slot`: true when the caller may send it
   * now (its lane records it), false when it must go through `due`. `far`: its producer's lane
   * answered `farBelow` for this fetch, so being late does not keep it off.
   */
  sendsNow(producer: string, spacingMs: number, slot: number, far?: boolean): boolean;
  /**
   * `n` messages of `producer` were decided late in one fetch: whether it is far below its rate
   * with them (FAR_BELOW_SHARE) by the process's count, this replica its group's only member, so
   * they may leave at once, uncounted.
   */
  farBelow(producer: string, spacingMs: number, n: number): boolean;
  /**
   * Whether the process's count knows `producer` to have sent in the last second, and with one
   * more beyond the FAR_BELOW_SHARE-th of its second's bound: a lone message of it decided late
   * then goes through its lane, counted late. One of a producer not known, silent for a second
   * (a flood of new ids at any rate) or below the share leaves at once: one message is no burst.
   */
  busy(producer: string, spacingMs: number): boolean;
  /** Messages waiting in lanes (beyond those in the hold). */
  waiting(): number;
  /** Takes the queued messages whose owner matches out of their lanes and evicts them (a rebalance hands their partition over). */
  evictOwned(owned: (owner: string) => boolean): void;
  /** Producers whose lane is remembered (at most about maxIdle, plus lanes with messages waiting). */
  tracked(): number;
  /** Another replica counted a message of `producer` with this slot as sent late, at `sent`: the second rule holds back this replica's messages of it too. */
  lateElsewhere(producer: string, spacingMs: number, slot: number, sent: number): void;
  /**
   * Messages let through at once (`sendsNow`), `count` of each producer, released at `released`,
   * were answered now: the count counts them at their answer (at `released` when a partition's
   * broker among them is `slow` for good).
   */
  answered(released: number, sent: ReadonlyMap<string, { count: number }>, slow?: boolean): void;
}

/** A message counted late here: for the other replicas (late-broadcast.ts). */
export type OnLate = (producer: string, spacingMs: number, slot: number, sent: number) => void;

/** How far behind real time a lane's clock may trail (what a late timer releases at once). */
export const CATCH_UP_MS = 100;
/** A lane behind its slots releases this many times faster than its own pace (the second bounds it). */
export const CATCH_UP_PACE = 1.25;
/** The limiter's slots are whole milliseconds: two an interval apart may lie this much closer. */
const SLOT_ROUNDING_MS = 1;
/** A send unanswered this long means an outage (above a loaded machine's answers; what went meanwhile spans well under SECOND_SPAN_MS). */
export const STUCK_MS = 500;
/** After an outage every lane keeps to its slots this long: the replicas learn each other's late releases only once answered. */
export const CALM_MS = 2000;
/** A lane's span is asked of `spanOf` at most this often. */
const SPAN_REFRESH_MS = 250;
/** How often a lane held back by a stuck send looks again (the hold has no wake-up of its own). */
export const STUCK_POLL_MS = 50;
/**
 * A lane is far below its rate while it sends at most 1 / this of its second's bound (1.1 × the
 * rate + 1) in a second (`farBelow`): a producer of 100/s while it sends at most 2 a second, one
 * of 20/s never, one of 1,000,000/s up to 27,500.
 */
export const FAR_BELOW_SHARE = 40;

interface Lane extends SentMarks {
  producer: string;
  /** The slot of the lane's last release (ideal time, at most the catch-up window before the actual one). */
  last: number;
  /** The limiter's slot of the message released last (its pace: the gap to the next one's slot). */
  lastOwn: number;
  spacingMs: number;
  queue: LaneItem[];
  /** Stamp of its last use (recency-map.ts). */
  used: number;
  /** Whether its head's slot is waiting in the hold scheduler. */
  armed: boolean;
  /** Until when it keeps to one interval: it released two slots closer than that (two limiters). */
  mixedUntil: number;
  /** The release instants of its sends not answered yet, oldest first (it is kept until they are: their answers count). */
  sending: number[];
  /** Its messages counted late in the last second (none: undefined). */
  late?: LateReleases;
  /** Its second rule's span (SECOND_SPAN_MS unless `spanOf` gives a shorter one), asked at `spanAt`. */
  spanMs: number;
  spanAt: number;
  /** When a send of it was last answered (the outage rule: a silence, not a slow answer). */
  answeredAt: number;
}

/**
 * The instant a message with slot `own` leaves `lane`: that slot, or (behind) the catch-up pace
 * after the previous one (`paced`; unpaced, the previous one), never farther behind `now` than
 * CATCH_UP_MS, and never before the second allows.
 */
const slotOf = (lane: Lane, own: number, now: number, span: number, paced: boolean, answers: SentClock): number => {
  const gap = Number.isFinite(lane.lastOwn) ? own - lane.lastOwn : lane.spacingMs;
  // Slots closer than an interval came from two limiters (the local fallback's beside Redis's,
  // a rule changed): the second rule cannot count those, so for a second after such a pair (the
  // two streams interleave) the lane keeps to one interval.
  const single = gap >= lane.spacingMs - SLOT_ROUNDING_MS && !(lane.mixedUntil > now);
  // A gap wider than the second's span is no pace: slots nobody asked for (the ingress unread
  // through a broker pause: paced at the gap, a backlogged producer lost 2 s after a 6 s pause),
  // or another replica's stretch: told if late (the second keeps them apart), else sent before.
  const pace = !paced ? 0 : single ? (gap > SECOND_SPAN_MS ? lane.spacingMs : Math.max(gap, lane.spacingMs)) / CATCH_UP_PACE : lane.spacingMs;
  const turn = Math.max(own, lane.last + pace, now - Math.max(CATCH_UP_MS, lane.spacingMs / 2));
  const lagging = answers.laggingMs(now);
  return Math.max(turn, secondOf(lane, own, now, span, lagging), countOf(lane, lane.spacingMs, now, span, answers, lane.sending, lagging));
};

/**
 * Whether slot `own` continues a run of the lane's slots: within two intervals of the previous
 * one (or before it: slots of several partitions come out of order), as a backlogged producer's
 * are, or the lane's first (nothing before it tells a run from a sparse slot). A slot farther
 * from the last is sparse: its producer is under its rate there.
 */
const inRun = (lane: Lane, own: number): boolean => lane.lastOwn === -Infinity || own - lane.lastOwn <= 2 * lane.spacingMs + SLOT_ROUNDING_MS;

/**
 * Whether a send of `lane` has waited more than STUCK_MS for its answer and none of its sends was
 * answered meanwhile (the outage rule).
 */
const stuck = (lane: Lane, now: number): boolean => lane.sending.length > 0 && now - lane.sending[0] > STUCK_MS && now - lane.answeredAt > STUCK_MS;

/** The slot of a queued message (`due` sets one). */
const ownOf = (item: LaneItem, now: number): number => item.slot ?? now;

/** An idle lane one interval past its last release is forgotten, unless it sent in the last second (its marks, and the rest of a stall, would be lost). */
const expired = (lane: Lane, now: number): boolean => lane.last + lane.spacingMs < now && !binds(lane.late, now) && !sentLately(lane, now);

export const createReleaseLanes = ({ hold, clock, maxIdle = 50_000, onLate, spanOf, members = () => 1 }: {
  hold: HoldScheduler;
  clock: Clock;
  maxIdle?: number;
  onLate?: OnLate;
  /** The replicas that share the producers' slots (the ingress group's members): only a lone one lets late messages far below their rate go uncounted. */
  members?(): number;
  /** A producer's second-rule span when shorter than SECOND_SPAN_MS (a contended budget's 1.05 ×), else undefined. */
  spanOf?(producer: string): number | undefined;
}): ReleaseLanes => {
  const lanes = createRecencyMap<Lane>({ maxIdle, idle: (lane) => lane.queue.length === 0 && !lane.armed && lane.sending.length === 0, expired });
  const sentAt = createSentClock();
  // Every send of this process, lane or not, a producer at a time (a lane made now has not seen those that left without one).
  const recent = createRecentSends();
  let waiting = 0;
  /** Until when every lane keeps to its slots (an outage just ended: CALM_MS). */
  let calmUntil = -Infinity;
  const calm = (now: number): boolean => calmUntil > now;
  const spanNow = (lane: Lane, now: number): number => (calm(now) ? Math.min(lane.spanMs, SECOND_MS + LANE_TOLERANCE_MS) : lane.spanMs);
  const slot = (lane: Lane, own: number, now: number, paced = true): number => slotOf(lane, own, now, spanNow(lane, now), paced, sentAt);
  /** Whether a message with slot `own` that counts as sent at `at` is later than the second rule lets pass uncounted. */
  const late = (lane: Lane, own: number, at: number): boolean => at - own > COUNTED_LATE_MS - (SECOND_SPAN_MS - spanNow(lane, at));
  /**
   * Whether `lane`, sending `n` more now, stays far below its rate (FAR_BELOW_SHARE), by the
   * process's count of its producer's sends in the last second (`recent`: lane or not). (A
   * process started within a second of the last sends of one before it — a restart that quick —
   * does not know those: at most the fortieth more, as with a member count not refreshed yet.)
   * Without that count (more producers than it keeps), not far below: its late messages go
   * through the lane, counted late, as with other members.
   */
  const farBelowNow = (producer: string, spacingMs: number, n: number, now: number): boolean => {
    const sent = recent.inLastSecond(producer, now);
    return sent !== undefined && sent + n <= shareOf(producer, spacingMs, now);
  };
  /** A FAR_BELOW_SHARE-th of the producer's second's bound, by its lane's span (a producer without one: the span a lane made now would have). */
  const shareOf = (producer: string, spacingMs: number, now: number): number => {
    const lane = lanes.get(producer);
    const span = lane ? spanNow(lane, now) : Math.min(spanOf?.(producer) ?? SECOND_SPAN_MS, calm(now) ? SECOND_MS + LANE_TOLERANCE_MS : Infinity);
    return Math.floor(slotsInSpan(span, spacingMs) / FAR_BELOW_SHARE);
  };

  /**
   * A message of `lane` counts as sent at `at` (its acknowledgement less this replica's quickest
   * answer, or its release): remembered, and told, if late. The other replicas are told
   * `answered` (when its answer arrived, by which it was surely appended): their sends may reach
   * the broker quicker than this replica's quickest, and a second counted from `at` would close
   * early for them (24 at 20/s, bound 23, in the chaos suite's catch-up after a broker pause).
   */
  const counted = (lane: Lane, own: number, at: number, answered = at): void => {
    if (!late(lane, own, at)) return;
    remember(lane, own, at);
    onLate?.(lane.producer, lane.spacingMs, own, Math.max(at, answered));
  };

  const record = (lane: Lane, own: number, slot: number, now: number): void => {
    if (own - lane.lastOwn < lane.spacingMs - SLOT_ROUNDING_MS) lane.mixedUntil = now + SECOND_MS;
    lane.last = slot;
    lane.lastOwn = own;
    mark(lane, own, now);
    recent.add(lane.producer, now);
  };
  const send = (lane: Lane, item: LaneItem, slot: number, now: number): void => {
    const own = item.slot ?? slot;
    // Let through at once: not counted (sparse slots say nothing of a second's count; a slow broker
    // holds back nothing under the quota), unless it waited more than STUCK_MS (it heads a
    // catch-up: three such gave 26 at 20/s, bound 25) or left late within a run of slots an
    // interval apart (the first messages of a backlog, let through at once when decided, behind a
    // catch-up or a stall: uncounted, they gave 112 at 100/s, bound 111, in the bench's accuracy
    // phase). Asked before `record` moves the lane's last slot.
    const exempt = item.conforming === true && now - own <= STUCK_MS && !(late(lane, own, now) && inRun(lane, own));
    record(lane, own, slot, now);
    const pending = item.send();
    if (!pending) return exempt && !calm(now) ? undefined : counted(lane, own, now);
    lane.sending.push(now);
    const acknowledged = (answer?: LaneAnswer): void => {
      lane.sending.splice(lane.sending.indexOf(now), 1);
      const at = clock.now();
      if (at - Math.max(now, lane.answeredAt) > STUCK_MS) calmUntil = Math.max(calmUntil, at + CALM_MS);
      lane.answeredAt = Math.max(lane.answeredAt, at);
      // The second rule counts it at its acknowledgement (./second-rule.ts says why): the count
      // always, the span unless it was let through at once and left on time.
      const slow = answer?.slow === true;
      const sent = sentAt.at(now, at, answer?.appendedAt, slow);
      landed(lane, sent, 1);
      if (exempt && !calm(at)) return;
      // Behind a slow broker the bound holds for the releases: the other replicas are told the release too.
      counted(lane, own, sent, slow ? sent : at);
    };
    pending.then(acknowledged, () => acknowledged());
  };

  // The head's slot sits in the hold scheduler; when it fires, everything at the head that is due
  // by then leaves (a rebalance may have dropped the item it was armed for). A stuck lane's head
  // sits there too, looked at again every STUCK_POLL_MS (so a graceful stop still evicts it).
  const scheduleHead = (lane: Lane): void => {
    lane.armed = true;
    const armedAt = clock.now();
    const headSlot = slot(lane, ownOf(lane.queue[0], armedAt), armedAt);
    hold.add({
      at: stuck(lane, armedAt) ? Math.max(headSlot, armedAt + STUCK_POLL_MS) : headSlot,
      conforming: lane.queue[0].conforming,
      bytes: lane.queue[0].bytes,
      release: () => {
        lane.armed = false;
        const now = clock.now();
        while (lane.queue.length > 0 && !stuck(lane, now)) {
          const at = slot(lane, ownOf(lane.queue[0], now), now);
          if (at > now + LANE_TOLERANCE_MS) break;
          const head = lane.queue.shift() as LaneItem;
          waiting -= 1;
          send(lane, head, at, now);
        }
        if (lane.queue.length > 0) scheduleHead(lane);
      },
      evict: () => {
        lane.armed = false;
        const items = lane.queue.splice(0);
        waiting -= items.length;
        for (const item of items) item.evict();
      },
    });
  };

  /** The producer's lane, made if need be and moved to the newest end (older idle lanes pruned). */
  const laneOf = (producer: string, spacingMs: number, now: number): Lane => {
    // Every field in the literal, none added later: one hidden class for every lane, so the
    // optimized lane code is not thrown away when a lane first mixes or counts late (deopts: "wrong map").
    const lane = lanes.get(producer) ?? { producer, last: -Infinity, lastOwn: -Infinity, spacingMs, queue: [], used: 0, armed: false, mixedUntil: -Infinity, sending: [], late: undefined, spanMs: SECOND_SPAN_MS, spanAt: -Infinity, highOwn: -Infinity, highAt: -Infinity, recent: undefined, recentHead: 0, landed: undefined, answeredAt: -Infinity };
    lane.spacingMs = spacingMs;
    // Asked again at most every SPAN_REFRESH_MS (a budget's shares change no faster).
    if (spanOf && !(now - lane.spanAt < SPAN_REFRESH_MS)) {
      lane.spanMs = spanOf(producer) ?? SECOND_SPAN_MS;
      lane.spanAt = now;
    }
    lanes.use(producer, lane, now);
    return lane;
  };

  return {
    due(producer, spacingMs, item) {
      if (!(spacingMs > 0)) return void item.send();
      const now = clock.now();
      item.slot ??= now;
      const lane = laneOf(producer, spacingMs, now);
      const at = lane.queue.length === 0 && !lane.armed && !stuck(lane, now) ? slot(lane, item.slot, now) : Infinity;
      if (dueNow(at, now)) return send(lane, item, at, now);
      lane.queue.push(item);
      waiting += 1;
      if (!lane.armed) scheduleHead(lane);
    },
    sendsNow(producer, spacingMs, own, far = false) {
      // No lane: nothing of it waits or left lately, and the limiter spaced this slot: it leaves on
      // it, and no lane is made for it (~180 bytes of heap each, for as long as its interval);
      // the process's count of recent sends counts it.
      if (!(spacingMs > 0)) return true;
      const now = clock.now();
      if (!far && !lanes.has(producer)) {
        recent.add(producer, now);
        return true;
      }
      const lane = laneOf(producer, spacingMs, now);
      // Just after an outage every release goes through its lane (counted: CALM_MS).
      if (lane.queue.length > 0 || lane.armed || stuck(lane, now) || calm(now)) return false;
      // Far below its rate (`farBelow`, asked for the fetch's late ones together), a lane catches
      // up unpaced: late as the hand-over was, its slots are as far apart as they were decided.
      const at = slot(lane, own, now, !far);
      // Late within a run of slots: through the lane, counted there (as send() counts it), unless far below.
      if (at > now + LANE_TOLERANCE_MS || (!far && inRun(lane, own) && late(lane, own, now))) return false;
      record(lane, own, at, now);
      return true;
    },
    farBelow(producer, spacingMs, n) {
      if (!(spacingMs > 0)) return true;
      if (members() > 1) return false;
      return farBelowNow(producer, spacingMs, n, clock.now());
    },
    busy(producer, spacingMs) {
      if (!(spacingMs > 0)) return false;
      const now = clock.now();
      const sent = recent.inLastSecond(producer, now);
      return sent !== undefined && sent > 0 && sent + 1 > shareOf(producer, spacingMs, now);
    },
    waiting: () => waiting,
    evictOwned(owned) {
      for (const lane of lanes.values()) {
        if (lane.queue.length === 0) continue;
        const taken = lane.queue.filter((item) => item.owner !== undefined && owned(item.owner));
        if (taken.length === 0) continue;
        lane.queue = lane.queue.filter((item) => !taken.includes(item));
        waiting -= taken.length;
        for (const item of taken) item.evict();
      }
    },
    tracked: () => lanes.size(),
    lateElsewhere(producer, spacingMs, slot, sent) {
      if (!(spacingMs > 0)) return;
      remember(laneOf(producer, spacingMs, clock.now()), slot, sent);
    },
    answered(released, sent, slow = false) {
      const now = clock.now();
      const at = sentAt.at(released, now, undefined, slow);
      sent.forEach(({ count }, producer) => {
        // A producer without a lane has nothing to bind (none is made for it).
        const lane = lanes.get(producer);
        if (!lane) return;
        landed(lane, at, count);
        lane.answeredAt = Math.max(lane.answeredAt, now);
      });
    },
  };
};
