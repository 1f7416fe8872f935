/** The three window kinds behind one interface for the rule combiner. */
import type { WindowLimit } from '../types';
import type { WindowState } from './key-state';
import { fixedCharge, fixedCheck, fixedEnd, fixedPrune } from './window-fixed';
import { logCharge, logCheck, logEnd, logPrune } from './window-log';
import { slidingCharge, slidingCheck, slidingEnd, slidingPrune } from './window-sliding';

export const windowPrune = (limit: WindowLimit, ws: WindowState, now: number): void => {
  if (limit.kind === 'log') logPrune(ws, limit.windowMs, now);
  else if (limit.kind === 'fixed') fixedPrune(ws, limit.windowMs, now);
  else slidingPrune(ws, limit.windowMs, now);
};

/** undefined when the window admits one more decision, else the instant it admits again. */
export const windowCheck = (limit: WindowLimit, ws: WindowState): number | undefined => {
  if (limit.kind === 'log') return logCheck(limit, ws);
  if (limit.kind === 'fixed') return fixedCheck(limit, ws);
  return slidingCheck(limit, ws);
};

export const windowCharge = (limit: WindowLimit, ws: WindowState, now: number): void => {
  if (limit.kind === 'log') logCharge(ws, now);
  else if (limit.kind === 'fixed') fixedCharge(ws);
  else slidingCharge(ws, limit.windowMs, now);
};

/** When the window holds nothing any more (0 when empty). */
export const windowEnd = (limit: WindowLimit, ws: WindowState): number => {
  if (limit.kind === 'log') return logEnd(ws, limit.windowMs);
  if (limit.kind === 'fixed') return fixedEnd(ws, limit.windowMs);
  return slidingEnd(ws, limit.windowMs);
};
