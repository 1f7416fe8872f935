/**
 * A producer's rule under the budget (pure): its own rule at min(own rate, share) — and the same
 * for bytes when the budget has bytes — with its slots reserved at most HORIZON_MS ahead (its
 * queue past that waits as overflow, decided again at its turn), so a share given today is not
 * still spent by reservations made at yesterday's (src/budget/share-ledger.ts). The fingerprint
 * stays the own rule's: a share change keeps the bucket's slots and its tail of refusals
 * (decide-1.lua restarts the tail only under another fingerprint). Windows stay as written.
 */
import type { LimitRule } from '../limit/types';

/** How far ahead a producer's slots are reserved while a budget is in force. */
export const HORIZON_MS = 250;

export const effectiveRule = (own: LimitRule, share: { rate: number; bytes?: number }): LimitRule => {
  const ownRate = 1000 / own.intervalMs;
  const byRate = share.rate < ownRate;
  const intervalMs = byRate ? 1000 / share.rate : own.intervalMs;
  const ownBytes = own.byteIntervalMs === undefined ? Infinity : 1000 / own.byteIntervalMs;
  const byBytes = share.bytes !== undefined && share.bytes < ownBytes;
  const byteIntervalMs = byBytes ? 1000 / (share.bytes as number) : own.byteIntervalMs;
  const capacityMs = Math.min(own.capacityMs, HORIZON_MS);
  const burst = own.algorithm === 'token-bucket' ? Math.max(1, Math.floor(capacityMs / intervalMs) + 1) : own.burst;
  return {
    ...own,
    intervalMs,
    capacityMs: own.algorithm === 'token-bucket' ? (burst - 1) * intervalMs : capacityMs,
    burst,
    ...(byteIntervalMs === undefined ? {} : { byteIntervalMs }),
  };
};
