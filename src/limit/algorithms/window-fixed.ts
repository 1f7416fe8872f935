/**
 * `fixed` window: one counter per calendar window [k × W, (k + 1) × W) of epoch time (UTC
 * days for 1d). Up to 2N decisions can fall within W across a boundary.
 */
import type { WindowLimit } from '../types';
import type { WindowState } from './key-state';

export const fixedPrune = (ws: WindowState, windowMs: number, now: number): void => {
  const index = Math.floor(now / windowMs);
  if (ws.index < index) {
    ws.index = index;
    ws.count = 0;
  } else if (ws.index > index) {
    ws.index = index; // clock went back: keep the count in the current window
  }
};

export const fixedCheck = (limit: WindowLimit, ws: WindowState): number | undefined =>
  ws.count < limit.max ? undefined : (ws.index + 1) * limit.windowMs;

export const fixedCharge = (ws: WindowState): void => {
  ws.count += 1;
};

export const fixedEnd = (ws: WindowState, windowMs: number): number =>
  ws.count === 0 ? 0 : (ws.index + 1) * windowMs;
