/**
 * Keeps a producer's releases at least one emission interval apart in local time, in order.
 * Release instants from the limiter are already spaced; but when this process is late (a
 * stalled event loop, a busy machine) several due messages would leave at once and the broker
 * would see a burst above the quota. Here a message due too soon after its producer's previous
 * release waits in that producer's lane; the lane's head sits in the hold scheduler at
 * previous release + interval, the rest queue behind it (so order is kept and a graceful stop
 * can evict them). Only leaky-bucket rules are spaced (a token bucket admits bursts: spacing 0).
 */
import type { Clock } from '../clock';
import type { HoldScheduler } from './hold-scheduler';

export interface LaneItem {
  bytes: number;
  send(): void;
  /** Taken out before it could leave (graceful stop). */
  evict(): void;
}

export interface ReleaseLanes {
  /** A message of `producer` is due now: sent at once, or queued behind the producer's previous release. */
  due(producer: string, spacingMs: number, item: LaneItem): void;
  /** Messages waiting in lanes (beyond those in the hold). */
  waiting(): number;
}

/** Within this many ms of its slot a release goes at once (timers fire a little late). */
export const LANE_TOLERANCE_MS = 2;

interface Lane {
  last: number;
  spacingMs: number;
  queue: LaneItem[];
}

export const createReleaseLanes = ({ hold, clock, maxIdle = 50_000 }: { hold: HoldScheduler; clock: Clock; maxIdle?: number }): ReleaseLanes => {
  const lanes = new Map<string, Lane>();
  let waiting = 0;

  const scheduleHead = (lane: Lane): void => {
    const head = lane.queue[0];
    hold.add({
      at: lane.last + lane.spacingMs,
      bytes: head.bytes,
      release: () => {
        lane.queue.shift();
        waiting -= 1;
        lane.last = clock.now();
        head.send();
        if (lane.queue.length > 0) scheduleHead(lane);
      },
      evict: () => {
        const items = lane.queue.splice(0);
        waiting -= items.length;
        for (const item of items) item.evict();
      },
    });
  };

  const prune = (now: number): void => {
    if (lanes.size <= maxIdle) return;
    for (const [id, lane] of lanes) if (lane.queue.length === 0 && lane.last + lane.spacingMs < now) lanes.delete(id);
  };

  return {
    due(producer, spacingMs, item) {
      if (!(spacingMs > 0)) return item.send();
      const now = clock.now();
      const lane = lanes.get(producer) ?? { last: -Infinity, spacingMs, queue: [] };
      lane.spacingMs = spacingMs;
      lanes.set(producer, lane);
      if (lane.queue.length > 0) {
        lane.queue.push(item);
        waiting += 1;
        return;
      }
      if (now + LANE_TOLERANCE_MS >= lane.last + spacingMs) {
        lane.last = now;
        prune(now);
        return item.send();
      }
      lane.queue.push(item);
      waiting += 1;
      scheduleHead(lane);
    },
    waiting: () => waiting,
  };
};
