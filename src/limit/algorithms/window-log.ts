/** `log` window: the exact sliding log of admission instants; at most N entries per key. */
import type { WindowLimit } from '../types';
import type { WindowState } from './key-state';

/** Forgets instants that left the window (t <= now - W); instants ahead of now (clock jump) count as now. */
export const logPrune = (ws: WindowState, windowMs: number, now: number): void => {
  ws.times = ws.times.filter((t) => t > now - windowMs).map((t) => Math.min(t, now));
};

/** undefined when admitted, else the instant the window admits again. */
export const logCheck = (limit: WindowLimit, ws: WindowState): number | undefined =>
  ws.times.length < limit.max ? undefined : ws.times[ws.times.length - limit.max] + limit.windowMs;

export const logCharge = (ws: WindowState, now: number): void => {
  ws.times.push(now);
};

export const logEnd = (ws: WindowState, windowMs: number): number =>
  ws.times.length === 0 ? 0 : ws.times[ws.times.length - 1] + windowMs;
