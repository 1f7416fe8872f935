/**
 * The second rule of the release lanes (./release-lanes.ts), and what it remembers.
 *
 * **The second.** Within any second the broker gets only messages whose slots span at most
 *   SECOND_SPAN_MS: the limiter spaces a producer's slots an interval apart across all
 *   replicas, so that is at most 1.1 × the rate + 1 in any second, however late the timers fire
 *   and however long the stall. A send that reports its acknowledgement (a message that waited
 *   for its slot) counts then, less the quickest answer of any lane in the last ten seconds
 *   (appended by then; the answers of a process's first second, with too few to measure
 *   against, count at their arrival): a release on its slot whose request waited behind a slow one is
 *   appended late, together with what was released meanwhile, and what follows waits for that
 *   second to pass; a broker slow for every request delays nothing. When the answer carries
 *   the broker's append time (LogAppendTime), it counts at that, less the quickest of those
 *   (the broker's clock is not this one's). One that reports none
 *   counts at its release; one let through at once (`conforming`) is not counted when it leaves
 *   on its slot, nor when its slot is sparse (more than two intervals after the lane's last: a
 *   span of sparse slots says nothing about their count; a lane's first is not sparse); one
 *   that leaves late within a run of slots an interval apart is counted like any late release.
 *   Only messages counted late are remembered (one on its slot can never hold a later one
 *   back), for a second. The other way, a lane marks the
 *   greatest slot it sent in the last second (`SentMarks`): a message whose slot lies more than
 *   the span before it (a parked message back late, behind those decided after it that left on
 *   their slots) waits until a second after that send, and what queues behind it with it.
 * **The count.** Beside the span, a lane sends no more messages in any second than slots fit in
 *   its span, whether the span counted them or not, counted at their sends and, once answered,
 *   where they landed; those sent too lately to have been answered count there too (`countOf`).
 *
 * Bound: a producer's messages whose slots lie more than SECOND_SPAN_MS apart never reach the
 * broker within one second, so a producer gets at most 1.1 × its rate + 1 in any second. A lane
 * may keep a shorter span (`span`): a producer held back by a contended downstream budget keeps
 * to 1.05 × its share (the budget's bound, docs/budget.md), and every lane keeps to its rate for
 * a while after an outage (./release-lanes.ts). Behind a partition whose broker is slow, for good
 * or by turns (src/produce/slow-broker.ts: its requests took longer than the span's slack by twice
 * what a lane wins back), the bound holds for the releases, and the broker's own bunching comes
 * on top (up to two requests' time of sends): counted at the answers, the producer fell ever
 * further behind its slots and still got 123–139 in a second at 100/s.
 */

/** Within this many ms of its slot a release goes at once (timers fire a little late). */
export const LANE_TOLERANCE_MS = 2;
/** Whether a release at `at` goes at once at `now` (within LANE_TOLERANCE_MS): in a lane and in the dispatcher alike. */
export const dueNow = (at: number, now: number): boolean => at <= now + LANE_TOLERANCE_MS;
/** Within any second a lane sends only messages whose slots lie at most this far apart. */
export const SECOND_SPAN_MS = 1100;
export const SECOND_MS = 1000;
/** A release later than this after its slot is remembered for the second rule (an earlier one cannot bind it). */
export const COUNTED_LATE_MS = SECOND_SPAN_MS - SECOND_MS - LANE_TOLERANCE_MS;
/**
 * How long the quickest answer is remembered: longer than a slow spell (a busy machine answers
 * every request slowly for a second or two), so what was sent in it counts late when answers
 * are quick again; a broker slow for good is measured as such after this long.
 */
const QUICKEST_WINDOW_MS = 10_000;
/**
 * For this long after its first answer a process counts every answer at its arrival: the
 * quickest of so few says nothing yet. A start answers slowly while connections and code warm
 * up (the bench's accuracy phase: 56–184 ms in the first 200 ms, 2–3 ms a second later), and
 * measured against the quickest of those, messages appended together 80 ms late counted on
 * time (121 in a second at 100/s in a unit test of that shape).
 */
export const FIRST_ANSWERS_MS = 1000;
/**
 * A lane's messages counted late, in slot order from `head` (acknowledgements from several
 * partitions arrive out of slot order), with when each counted as sent. Those whose slot lies
 * more than SECOND_SPAN_MS before the message now leaving are taken out into `from`, the
 * instant until which they hold every later message back.
 */
export interface LateReleases {
  slot: number[];
  sent: number[];
  head: number;
  from: number;
  /** The latest instant one counted at: a second after it, none binds anything. */
  latest: number;
}

/**
 * Parallel arrays read from `head` (entries before it are spent): once most are spent, drops
 * them; returns the new head. Amortized O(1) per entry.
 */
const compacted = (head: number, ...arrays: number[][]): number => {
  if (head <= 64 || head * 2 <= arrays[0].length) return head;
  for (const array of arrays) array.splice(0, head);
  return 0;
};

/**
 * The acknowledgements of the last QUICKEST_WINDOW_MS that may still be the quickest (ms after
 * the release, and when), of every lane: the broker's answer time is no producer's own, and an
 * idle lane is forgotten with whatever it kept. Times rise from `head`, so the one at `head` is the least
 * (a sliding minimum: each newer, quicker one drops the slower before it). The answer before the
 * newest is kept however old: after an outage longer than the window, the first answers (all
 * late) are measured against the last one before it, not against themselves.
 */
interface Answers {
  took: number[];
  at: number[];
  head: number;
  /** When the first answer arrived. */
  first: number;
}

const newAnswers = (): Answers => ({ took: [], at: [], head: 0, first: NaN });

/** Whether what a lane counted late still binds anything at `now` (a second after the latest, nothing does). */
export const binds = (late: LateReleases | undefined, now: number): boolean =>
  late !== undefined && late.latest + SECOND_MS + LANE_TOLERANCE_MS > now;

/**
 * The quickest acknowledgement of the last QUICKEST_WINDOW_MS, `took` at `at` among them; none
 * (undefined) in the FIRST_ANSWERS_MS from the first one: too few to measure against yet.
 */
const quickest = (a: Answers, took: number, at: number): number | undefined => {
  if (a.took.length === 0) a.first = at;
  let n = a.took.length;
  while (n > a.head && a.took[n - 1] >= took) n -= 1;
  a.took.length = n;
  a.at.length = n;
  a.took.push(took);
  a.at.push(at);
  while (a.head < a.took.length - 2 && a.at[a.head] < at - QUICKEST_WINDOW_MS) a.head += 1;
  a.head = compacted(a.head, a.took, a.at);
  return at - a.first < FIRST_ANSWERS_MS ? undefined : a.took[a.head];
};

/**
 * The greatest slot a lane sent while its sends came less than a second apart, and the latest of
 * those sends: on time or late, whatever the rule counts. A message whose slot lies more than a
 * span before it must not reach the broker in the same second (a parked message back late,
 * behind the ones decided after it that left on their slots).
 */
export interface SentMarks {
  highOwn: number;
  highAt: number;
  /** When it sent in the last second, oldest first from `recentHead` (none sent yet: undefined): the count beside the span. */
  recent?: number[];
  recentHead: number;
  /** Its sends answered in the last LANDED_KEPT_MS, at the instants they count from (`landed`). */
  landed?: Tally;
}

/** Instants, oldest first from `head`, `n` at each; `sum` of them from the head. */
export interface Tally {
  at: number[];
  n: number[];
  head: number;
  sum: number;
}

/** Whether a lane sent anything in the last second (it is kept until not: its marks count). */
export const sentLately = (lane: SentMarks, now: number): boolean => lane.highAt + SECOND_MS + LANE_TOLERANCE_MS > now;

/** Drops the sends of `lane` that lie a second or more before `now` from its count. */
const trimRecent = (lane: SentMarks, recent: number[], now: number): void => {
  let head = lane.recentHead;
  while (head < recent.length && recent[head] + SECOND_MS + LANE_TOLERANCE_MS <= now) head += 1;
  if (head === recent.length) {
    recent.length = 0;
    head = 0;
  }
  lane.recentHead = compacted(head, recent);
};

/** How many messages `lane` sent in the second before `now`. */
const sentInSecond = (lane: SentMarks, now: number): number => {
  const { recent } = lane;
  if (recent === undefined) return 0;
  trimRecent(lane, recent, now);
  return recent.length - lane.recentHead;
};

/** A message with slot `own` of a lane leaves at `at`. */
export const mark = (lane: SentMarks, own: number, at: number): void => {
  lane.highOwn = sentLately(lane, at) ? Math.max(lane.highOwn, own) : own;
  lane.highAt = at;
  const recent = (lane.recent ??= []);
  trimRecent(lane, recent, at);
  recent.push(at);
};

/**
 * How long a lane keeps its answered sends: a second, and a second more for the counts that a
 * quicker answer shows to have been early (`laggingMs`, at most a second).
 */
const LANDED_KEPT_MS = 2 * SECOND_MS + LANE_TOLERANCE_MS;

/** Drops what lies at or before `cutoff`. */
const trimTally = (t: Tally, cutoff: number): void => {
  let { head } = t;
  while (head < t.at.length && t.at[head] <= cutoff) {
    t.sum -= t.n[head];
    head += 1;
  }
  if (head === t.at.length) {
    t.at.length = 0;
    t.n.length = 0;
    head = 0;
    t.sum = 0;
  }
  t.head = compacted(head, t.at, t.n);
};

/**
 * `n` sends of `lane` were answered; they count from `at` (./release-lanes.ts: the answer, less
 * the quickest, or its arrival in a process's first second). What waited behind a slow request
 * was appended with the next one, together: counted only at their releases, the count saw them
 * spread over the wait (140 at 100/s in a unit model of a start whose first request took
 * 400 ms; 121 in the bench).
 */
export const landed = (lane: SentMarks, at: number, n: number): void => {
  const t = (lane.landed ??= { at: [], n: [], head: 0, sum: 0 });
  trimTally(t, at - LANDED_KEPT_MS);
  // Answers of several partitions come a little out of order: kept in order from the end.
  let i = t.at.length;
  while (i > t.head && t.at[i - 1] > at) i -= 1;
  if (i > t.head && t.at[i - 1] === at) t.n[i - 1] += n;
  else {
    t.at.splice(i, 0, at);
    t.n.splice(i, 0, n);
  }
  t.sum += n;
};

/**
 * The earliest instant from which fewer than `most` of the lane's answered sends count within the
 * second before it, each `laggingMs` later than it was counted (none binding: -Infinity).
 */
const landedOf = (lane: SentMarks, most: number, now: number, laggingMs = 0): number => {
  const t = lane.landed;
  if (t === undefined) return -Infinity;
  trimTally(t, now - LANDED_KEPT_MS);
  if (t.sum < most) return -Infinity;
  const from = now - laggingMs - SECOND_MS - LANE_TOLERANCE_MS;
  let seen = 0;
  for (let i = t.at.length - 1; i >= t.head && t.at[i] > from; i -= 1) {
    seen += t.n[i];
    if (seen >= most) return t.at[i] + laggingMs + SECOND_MS + LANE_TOLERANCE_MS + 1;
  }
  return -Infinity;
};

/** How many of `times` (ascending from `head`) lie after `after`. */
const countAfter = (times: readonly number[], head: number, after: number): number => {
  let lo = head;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] > after) hi = mid;
    else lo = mid + 1;
  }
  return times.length - lo;
};

/** How many slots `spacingMs` apart fit in `span` (1.1 × the rate + 1 at SECOND_SPAN_MS): the most a lane sends in any second. */
export const slotsInSpan = (span: number, spacingMs: number): number => Math.floor(span / spacingMs) + 1;

/**
 * The count beside the span: the earliest instant a lane with slots `spacingMs` apart may send
 * again and still have sent at most as many in any second as slots fit in `span` (1.1 × the rate
 * + 1 at SECOND_SPAN_MS), counted both at the sends (what it released at once after a stall) and
 * where the answered ones landed (what waited behind a slow request, appended together). The
 * span alone misses messages it does not count — let through at once, then sent late in a burst
 * after a stall (116 at 100/s, bound 115, in a shape CI found) — the count sees every send of
 * this replica, counted or not.
 * - **Sends not answered yet** count among the landed ones: those of the last
 *   `answers.quickestMs()` (the quickest answer of the last ten seconds) cannot have been
 *   answered, and those of the last second still `unanswered` have not been; either way they
 *   land with what leaves now. A lane held by the count as a start's slow answers quickened
 *   released 13 at once into a second whose answered sends held 110 (123 at 100/s in a unit
 *   model); a start's lane whose two sends of 40 ms before were not answered yet (released
 *   longer ago than the quickest answer, 6 ms, took) sent two more into a second that then held
 *   113 (the real broker's first start). They count up to the span's room above the rate (10 at
 *   100/s), so they hold back only a lane whose answered sends already fill a second at its
 *   rate. Every send not answered yet, counted at its release until its answer and without that
 *   cap, held a producer at 0.9 × its rate 450 ms behind its slots under a broker answering
 *   every request in 200 ms (bench/HISTORY.md, "Where a slow request's messages land").
 * - **What leaves now lands `answers.aheadMs()` later** at the soonest, against answers counted
 *   at their arrival (a process's first second of answers): counted as if it landed at once, a
 *   start whose every request took 300 ms held its lane back and never caught up (734 ms behind
 *   its slots 5 s in, in a unit model).
 * - **Counts made early** (against a quickest answer that a quicker one has since replaced) count
 *   `laggingMs` later (SentClock.laggingMs).
 */
export const countOf = (lane: SentMarks, spacingMs: number, now: number, span = SECOND_SPAN_MS, answers?: SentClock, unanswered: readonly number[] = [], laggingMs = 0): number => {
  const { recent } = lane;
  if (recent === undefined) return -Infinity;
  const most = slotsInSpan(span, spacingMs);
  const n = sentInSecond(lane, now);
  // A release goes up to LANE_TOLERANCE_MS early (dueNow), and the instants need not be whole
  // ms: one more ms keeps the sends a whole second apart, not 999.99… ms.
  const sends = n < most ? -Infinity : recent[recent.length - most] + SECOND_MS + LANE_TOLERANCE_MS + 1;
  const room = most - slotsInSpan(SECOND_MS, spacingMs);
  const quickestMs = answers?.quickestMs() ?? 0;
  const flying = room > 0 ? Math.min(Math.max(countAfter(recent, lane.recentHead, now - quickestMs), countAfter(unanswered, 0, now - SECOND_MS)), room) : 0;
  return Math.max(sends, landedOf(lane, most - flying, now, laggingMs) - (answers?.aheadMs(now) ?? 0));
};

/**
 * The earliest instant the second rule lets a message with slot `own` leave, both ways: a second
 * after the latest release whose slot lies more than `span` before it (counted late, here or by
 * another replica), and a second after the latest whose slot lies more than `span` after it (the
 * lane's marks; counted late elsewhere). Releases sent a second ago bind nothing any more and
 * are dropped. Those counted late count `laggingMs` later (SentClock.laggingMs).
 */
export const secondOf = (lane: { late?: LateReleases } & SentMarks, own: number, now: number, span = SECOND_SPAN_MS, laggingMs = 0): number => {
  const after = lane.highOwn > own + span && sentLately(lane, now) ? lane.highAt + SECOND_MS + LANE_TOLERANCE_MS : -Infinity;
  const { late } = lane;
  if (!late) return after;
  if (!binds(late, now - laggingMs)) {
    lane.late = undefined;
    return after;
  }
  for (; late.head < late.slot.length && late.slot[late.head] < own - span; late.head += 1) {
    late.from = Math.max(late.from, late.sent[late.head] + SECOND_MS + LANE_TOLERANCE_MS);
  }
  late.head = compacted(late.head, late.slot, late.sent);
  let until = late.from;
  for (let i = late.slot.length - 1; i >= late.head && late.slot[i] > own + span; i -= 1) {
    until = Math.max(until, late.sent[i] + SECOND_MS + LANE_TOLERANCE_MS);
  }
  return Math.max(until + laggingMs, after);
};

/** A message of `lane` with slot `own` counts as sent late, at `at`. */
export const remember = (lane: { late?: LateReleases }, own: number, at: number): void => {
  const late = (lane.late ??= { slot: [], sent: [], head: 0, from: -Infinity, latest: -Infinity });
  let i = late.slot.length;
  while (i > late.head && late.slot[i - 1] > own) i -= 1;
  late.slot.splice(i, 0, own);
  late.sent.splice(i, 0, at);
  late.latest = Math.max(late.latest, at);
};

export interface SentClock {
  /**
   * When a sent message counts for the second rule, from its release and its answer: at the
   * answer less the quickest answer of any lane in the last ten seconds; when the answer carries
   * the broker's append time, at that less the quickest of those (the broker's clock is not this
   * one's); in the process's first FIRST_ANSWERS_MS of answers, with too few to measure against,
   * at its arrival. When its partition's broker is `slow` (src/produce/slow-broker.ts:
   * its requests of the last ten seconds took longer than the second's slack by twice what a lane
   * wins back), at its release.
   */
  at(released: number, answered: number, appendedAt?: number, slow?: boolean): number;
  /**
   * The quickest answer (from its release) of the last ten seconds (in the first second of
   * answers, the quickest yet): a send released less long ago cannot have been answered. None
   * yet: Infinity.
   */
  quickestMs(): number;
  /**
   * How much later than `now` a message leaving now counts, at the soonest, against answers
   * counted at their arrival: the quickest answer yet while the count may hold such answers (the
   * first FIRST_ANSWERS_MS of answers and the second after); else 0 (every answer then counts
   * less the quickest, and so does the message).
   */
  aheadMs(now: number): number;
  /**
   * How much too early the counts of the last second may lie, by what the answers show now: each
   * counted less the quickest answer of its time, and when a quicker one has come since (a start
   * whose requests took 60 ms and then 3; the end of a slow spell), it landed that much later
   * than counted. The second rule counts them that much later (at most a second): counted less a
   * start's 60 ms, what it sent then and what followed at 3 ms held 118 in a second at 100/s (a
   * unit model; bench/HISTORY.md, "A start's first seconds, counted").
   */
  laggingMs(now: number): number;
}

/**
 * The quickest answers that the counts of the last second were made against, the greatest first
 * from `head` (a sliding maximum), each with the last instant it was used at.
 */
interface Used {
  least: number[];
  at: number[];
  head: number;
}

const newUsed = (): Used => ({ least: [], at: [], head: 0 });

const use = (u: Used, least: number, at: number): void => {
  let n = u.least.length;
  while (n > u.head && u.least[n - 1] <= least) n -= 1;
  u.least.length = n;
  u.at.length = n;
  u.least.push(least);
  u.at.push(at);
};

/** How much greater the greatest quickest answer a count of the last second was made against is than `a`'s quickest now. */
const lagOf = (u: Used, a: Answers, now: number): number => {
  while (u.head < u.least.length && u.at[u.head] + SECOND_MS + LANE_TOLERANCE_MS <= now) u.head += 1;
  u.head = compacted(u.head, u.least, u.at);
  return u.head < u.least.length ? Math.max(0, u.least[u.head] - a.took[a.head]) : 0;
};

export const createSentClock = (): SentClock => {
  const answers = newAnswers();
  const appends = newAnswers();
  const usedAnswers = newUsed();
  const usedAppends = newUsed();
  return {
    at(released, answered, appendedAt, slow = false) {
      const least = quickest(answers, answered - released, answered);
      if (typeof appendedAt !== 'number') {
        if (slow) return released;
        if (least === undefined) return answered;
        use(usedAnswers, least, answered);
        return released + Math.max(0, answered - released - least);
      }
      const took = appendedAt - released;
      const leastAppended = quickest(appends, took, answered);
      if (slow) return released;
      if (leastAppended === undefined) return answered;
      use(usedAppends, leastAppended, answered);
      return released + Math.max(0, took - leastAppended);
    },
    laggingMs: (now) => Math.min(SECOND_MS, Math.max(lagOf(usedAnswers, answers, now), lagOf(usedAppends, appends, now))),
    quickestMs: () => (answers.took.length === 0 ? Infinity : answers.took[answers.head]),
    aheadMs: (now) => (answers.took.length > 0 && now < answers.first + FIRST_ANSWERS_MS + SECOND_MS ? answers.took[answers.head] : 0),
  };
};
