/**
 * Keeps a producer's releases at least one emission interval apart in local time, in order.
 * Release instants from the limiter are already spaced; but when this process is late (a
 * stalled event loop, a busy machine) several due messages would leave at once and the broker
 * would see a burst above the quota. Here a message due too soon after its producer's previous
 * release waits in that producer's lane; the lane's head sits in the hold scheduler at
 * previous release + interval, the rest queue behind it (so order is kept and a graceful stop
 * can evict them). Only leaky-bucket rules are spaced (a token bucket admits bursts: spacing 0).
 *
 * A message leaves on its own slot (the instant the limiter gave it). A lane behind its slots
 * (this process was late: a busy event loop, a slow send, a stall) catches up at CATCH_UP_PACE
 * × its own pace (the gap between a message's slot and the previous one's, at least one
 * interval) until it is on its slots again, so a stall costs the producer nothing in the end
 * and never turns into a burst; and its clock never trails real time by more than
 * CATCH_UP_MS (or half an interval, if longer), so a timer that fires late releases what fell
 * due meanwhile at once instead of one message per late timer (which starved a producer while
 * the process was busy). With two replicas each lane sees every other slot of a producer and
 * keeps to those slots, so together they keep the producer's spacing; and since each catches up
 * at 1.04 × its own share (gaps of about two intervals), two lanes late together (a machine-wide
 * stall) catch up at 1.04 × the producer's rate, not twice that.
 */
import type { Clock } from '../clock';
import type { HoldScheduler } from './hold-scheduler';

export interface LaneItem {
  bytes: number;
  send(): void;
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
  /** Messages waiting in lanes (beyond those in the hold). */
  waiting(): number;
  /** Takes the queued messages whose owner matches out of their lanes and evicts them (a rebalance hands their partition over). */
  evictOwned(owned: (owner: string) => boolean): void;
  /** Producers whose lane is remembered (at most about maxIdle, plus lanes with messages waiting). */
  tracked(): number;
}

/** Within this many ms of its slot a release goes at once (timers fire a little late). */
export const LANE_TOLERANCE_MS = 2;
/** How far behind real time a lane's clock may trail (what a late timer releases at once). */
export const CATCH_UP_MS = 100;
/**
 * A lane behind its slots releases this many times faster than its rate until it is on them
 * again: with CATCH_UP_MS, at most (1 s + 100 ms) × 1.04 ÷ interval + 1 releases in any second,
 * below 1.15 × the rate plus one slot.
 */
export const CATCH_UP_PACE = 1.04;

interface Lane {
  /** The slot of the lane's last release (ideal time, at most the catch-up window before the actual one). */
  last: number;
  /** The limiter's slot of the message released last (its pace: the gap to the next one's slot). */
  lastOwn: number;
  spacingMs: number;
  queue: LaneItem[];
  /** Stamp of its last use: an entry seen by the prune cursor before a later use is stale. */
  used: number;
  /** Whether its head's slot is waiting in the hold scheduler. */
  armed: boolean;
}

/** The instant `item` leaves `lane`: its own slot, or (behind) the catch-up pace after the previous one, never farther behind `now` than CATCH_UP_MS. */
const slotOf = (lane: Lane, item: LaneItem, now: number): number => {
  const own = item.slot ?? now;
  const gap = Number.isFinite(lane.lastOwn) ? Math.max(lane.spacingMs, own - lane.lastOwn) : lane.spacingMs;
  return Math.max(own, lane.last + gap / CATCH_UP_PACE, now - Math.max(CATCH_UP_MS, lane.spacingMs / 2));
};

/**
 * An idle lane one interval past its last release is forgotten. Its catch-up state goes with it:
 * with many producers, a lane emptied by a stall's first releases is forgotten by the next
 * producer's call, and the stall's messages leave at once (the bench's busiest second). Keeping
 * it until the catch-up floor decides (last + interval < now − CATCH_UP_MS) fixed that but, at
 * 1.04 × the pace, a machine that stalls often then never caught up: 96.3–97 % of the quota at
 * a load average of 3 (README "Backlogs through the retry tiers").
 */
const expired = (lane: Lane, now: number): boolean => lane.last + lane.spacingMs < now;

const released = (lane: Lane, item: LaneItem, slot: number): void => {
  lane.last = slot;
  lane.lastOwn = item.slot ?? slot;
};

export const createReleaseLanes = ({ hold, clock, maxIdle = 50_000 }: { hold: HoldScheduler; clock: Clock; maxIdle?: number }): ReleaseLanes => {
  const lanes = new Map<string, Lane>();
  let waiting = 0;

  // The head's slot sits in the hold scheduler; when it fires, everything at the head that is due
  // by then leaves (a rebalance may have dropped the item it was armed for).
  const scheduleHead = (lane: Lane): void => {
    lane.armed = true;
    hold.add({
      at: slotOf(lane, lane.queue[0], clock.now()),
      bytes: lane.queue[0].bytes,
      release: () => {
        lane.armed = false;
        const now = clock.now();
        while (lane.queue.length > 0) {
          const slot = slotOf(lane, lane.queue[0], now);
          if (slot > now + LANE_TOLERANCE_MS) break;
          const head = lane.queue.shift() as LaneItem;
          waiting -= 1;
          released(lane, head, slot);
          head.send();
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

  // The map is kept in last-use order (a lane is re-inserted on use), so pruning looks only at
  // the oldest end: expired idle lanes go; past maxIdle the oldest idle lanes go anyway (a
  // producer not seen among the last maxIdle has no catch-up left worth spreading); a lane with
  // messages waiting is kept and moved behind, a couple per call. The oldest end is read with
  // one live iterator kept across calls: a new iterator per call would step again over every
  // entry deleted at the front. Amortized O(1) per call.
  let uses = 0;
  let cursor: Iterator<[string, Lane]> | undefined;
  let peeked: { id: string; lane: Lane; used: number } | undefined;
  const oldest = (): { id: string; lane: Lane } | undefined => {
    for (;;) {
      if (peeked && lanes.get(peeked.id) === peeked.lane && peeked.lane.used === peeked.used) return peeked;
      cursor ??= lanes.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        peeked = undefined;
        return undefined;
      }
      peeked = { id: next.value[0], lane: next.value[1], used: next.value[1].used };
    }
  };
  const touch = (id: string, lane: Lane): void => {
    uses += 1;
    lane.used = uses;
    lanes.delete(id);
    lanes.set(id, lane);
  };
  const prune = (now: number): void => {
    let moved = 0;
    for (let entry = oldest(); entry; entry = oldest()) {
      const { id, lane } = entry;
      const idle = lane.queue.length === 0 && !lane.armed;
      if (idle && expired(lane, now)) lanes.delete(id);
      else if (lanes.size < maxIdle) return; // room for the lane being used
      else if (idle) lanes.delete(id);
      else if (++moved > 2) return;
      else touch(id, lane);
    }
  };

  return {
    due(producer, spacingMs, item) {
      if (!(spacingMs > 0)) return item.send();
      const now = clock.now();
      item.slot ??= now;
      const lane = lanes.get(producer) ?? { last: -Infinity, lastOwn: -Infinity, spacingMs, queue: [], used: 0, armed: false };
      lane.spacingMs = spacingMs;
      lanes.delete(producer);
      prune(now);
      touch(producer, lane);
      if (lane.queue.length === 0 && !lane.armed) {
        const slot = slotOf(lane, item, now);
        if (slot <= now + LANE_TOLERANCE_MS) {
          released(lane, item, slot);
          return item.send();
        }
      }
      lane.queue.push(item);
      waiting += 1;
      if (!lane.armed) scheduleHead(lane);
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
    tracked: () => lanes.size,
  };
};
