/**
 * `sliding` window: SLIDING_SLOTS sub-windows of W / SLIDING_SLOTS on the epoch grid. A
 * decision at `now` counts every sub-window from the one holding now - W up to now's, the
 * oldest one whole, so no span of W ever holds more than N admitted decisions (it errs on the
 * strict side by at most one sub-window, W / 10). Memory: at most 11 counters per key.
 */
import type { WindowLimit } from '../types';
import type { WindowState } from './key-state';

/** 10 sub-windows: at most 10% stricter than an exact log, 11 numbers of state per key. */
export const SLIDING_SLOTS = 10;

const slotOf = (windowMs: number, now: number): number => Math.floor(now / (windowMs / SLIDING_SLOTS));

export const slidingPrune = (ws: WindowState, windowMs: number, now: number): void => {
  const current = slotOf(windowMs, now);
  const kept: Array<[number, number]> = [];
  for (const [index, count] of ws.slots) {
    if (index < current - SLIDING_SLOTS) continue;
    const last = kept[kept.length - 1];
    const at = Math.min(index, current); // clock went back: fold into now's sub-window
    if (last !== undefined && last[0] === at) last[1] += count;
    else kept.push([at, count]);
  }
  ws.slots = kept;
};

export const slidingCheck = (limit: WindowLimit, ws: WindowState): number | undefined => {
  let total = 0;
  for (const [, count] of ws.slots) total += count;
  if (total < limit.max) return undefined;
  for (const [index, count] of ws.slots) {
    total -= count;
    if (total < limit.max) return (index + SLIDING_SLOTS + 1) * (limit.windowMs / SLIDING_SLOTS);
  }
  return undefined; // unreachable: total reaches 0 < max
};

export const slidingCharge = (ws: WindowState, windowMs: number, now: number): void => {
  const current = slotOf(windowMs, now);
  const last = ws.slots[ws.slots.length - 1];
  if (last !== undefined && last[0] === current) last[1] += 1;
  else ws.slots.push([current, 1]);
};

export const slidingEnd = (ws: WindowState, windowMs: number): number => {
  const last = ws.slots[ws.slots.length - 1];
  return last === undefined ? 0 : (last[0] + SLIDING_SLOTS + 1) * (windowMs / SLIDING_SLOTS);
};
