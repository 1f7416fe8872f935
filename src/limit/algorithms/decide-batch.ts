/**
 * The rule combiner: k ordered messages of one producer decided against every limit of its
 * rule in one step. A message passes only if every bucket and window admits it; a refusal
 * charges nothing but the tail; after the first refusal the rest are refused too, each with
 * its own notBefore spread one cost further along the tail. Pure: the caller stores the state.
 */
import type { Decision, Lease, LimitRule } from '../types';
import { expiryOf, readState, type KeyState } from './key-state';
import { leakyCharge, leakyVerdict } from './leaky-bucket';
import { tokenCharge, tokenVerdict } from './token-bucket';
import { LIMIT_BYTES, LIMIT_RATE, LIMIT_WINDOW_BASE, type Refusal } from './verdict';
import { windowCharge, windowCheck, windowEnd, windowPrune } from './windows';

export interface BatchOutcome {
  decisions: Decision[];
  state: KeyState;
  /** When the stored state may be dropped (epoch ms, fractional). */
  expiresAt: number;
  lease?: Lease;
}

/** Whether a rule's slots can be leased: a leaky bucket of count alone (no bytes, no windows). */
export const leasable = (rule: LimitRule): boolean => rule.algorithm === 'leaky-bucket' && rule.byteIntervalMs === undefined && rule.windows.length === 0;

/**
 * How far ahead of now the bucket's next free slot may lie for a lease, at least (one interval
 * when that is longer): instants are whole milliseconds, so everything decided within it leaves
 * at once. Above 1,000/s one interval alone would refuse a lease to a fetch's second message.
 */
export const LEASE_AT_ONCE_MS = 1;

/**
 * `wanted` slots charged after the call's messages, when the producer is far below its rule:
 * nothing refused (no tail ahead of now) and the bucket's next free slot at most one interval
 * (or LEASE_AT_ONCE_MS) ahead: everything decided leaves by then. They start at that slot (now,
 * for an empty bucket), one interval apart; another message of the producer gets its slot after them.
 */
const grantLease = (rule: LimitRule, state: KeyState, now: number, wanted: number): Lease | undefined => {
  if (!(wanted >= 1) || !leasable(rule) || state.tail > now || state.tat > now + Math.max(rule.intervalMs, LEASE_AT_ONCE_MS)) return undefined;
  const start = Math.max(state.tat, now);
  state.tat = start + wanted * rule.intervalMs;
  return { start: Math.ceil(start), count: wanted };
};

/** docs/contract.md "Messages", `overflow:<limit>`: "rate", "bytes", or a window as the user wrote it ("1000/h"). */
export const reasonOf = (rule: LimitRule, limit: number): string => {
  if (limit === LIMIT_RATE) return 'rate';
  if (limit === LIMIT_BYTES) return 'bytes';
  return rule.windows[limit - LIMIT_WINDOW_BASE].label;
};

const latestRefusal = (refusals: Refusal[]): Refusal => {
  let best = refusals[0];
  for (const refusal of refusals) if (refusal.notBefore > best.notBefore) best = refusal;
  return best;
};

/**
 * Decides one message on `state` (changed in place) at `now`, its buckets' slots counted from
 * `from` (a retry's earlier turn, else now); returns the refusal to repeat, if refused.
 */
const decideOne = (rule: LimitRule, state: KeyState, now: number, size: number, from: number): { decision: Decision; refusal?: Refusal } => {
  const token = rule.algorithm === 'token-bucket';
  const verdict = token ? tokenVerdict(rule, state, now, size, from) : leakyVerdict(rule, state, now, size, from);
  const refusals = [...verdict.refusals];
  rule.windows.forEach((limit, j) => {
    const notBefore = windowCheck(limit, state.windows[j]);
    if (notBefore !== undefined) {
      refusals.push({ limit: LIMIT_WINDOW_BASE + j, notBefore, spread: limit.windowMs / limit.max });
    }
  });
  if (refusals.length === 0) {
    if (token) tokenCharge(rule, state, from, size);
    else leakyCharge(rule, state, verdict.at, size);
    rule.windows.forEach((limit, j) => windowCharge(limit, state.windows[j], now));
    return { decision: { admitted: true, at: Math.ceil(verdict.at) } };
  }
  const refusal = latestRefusal(refusals);
  return { decision: refuse(rule, state, refusal, size), refusal };
};

/**
 * How far past a refusal's own instant the tail may spread it: refusals beyond that come back
 * together at the horizon and are spread again then. Without a bound a flood of refusals ran the
 * tail days ahead, and a later message could be dead-lettered for its age at once.
 */
export const TAIL_HORIZON_MS = 3_600_000;

const refuse = (rule: LimitRule, state: KeyState, refusal: Refusal, size: number): Decision => {
  const notBefore = Math.max(refusal.notBefore, Math.min(state.tail, refusal.notBefore + TAIL_HORIZON_MS));
  const spread = refusal.limit === LIMIT_BYTES ? size * (rule.byteIntervalMs as number) : refusal.spread;
  state.tail = notBefore + spread;
  return { admitted: false, at: Math.ceil(notBefore), reason: reasonOf(rule, refusal.limit) };
};

/**
 * How far back a backlogged producer's message counts its slots (leaky bucket): a producer with
 * refusals outstanding (its tail ahead of now) has messages waiting for every slot, so a slot
 * the bucket left free in the last second was left by a stall (this process, the broker, a late
 * tier read), not by the producer, and its next message — fresh or a retry — takes it. Beyond
 * that, or for a producer with nothing refused, unused time stays lost (strict spacing). The
 * release lanes send such a late slot no faster than their second rule allows.
 */
export const CATCH_UP_MS = 1000;

/**
 * `now`: the store's clock: the state is read and clamped at it, every limit admits at it.
 * `asOf` (DecideRequest.asOf, `now` when not given): a retry's earlier turn, from which its
 * buckets' slots are counted — a slot left free since then can be taken, none given since
 * (a producer whose state was forgotten counts from now). A backlogged producer's slots count
 * from CATCH_UP_MS ago at the latest. `lease`: slots wanted after the messages (grantLease).
 */
export const decideBatch = (rule: LimitRule, stored: KeyState | undefined, now: number, sizes: number[], asOf = now, lease = 0): BatchOutcome => {
  const state = readState(rule, stored, now);
  // A forgotten key says nothing of the time before now: slots are counted from now.
  let from = stored === undefined ? now : asOf;
  if (rule.algorithm === 'leaky-bucket' && state.tail > now) from = Math.min(from, now - CATCH_UP_MS);
  rule.windows.forEach((limit, j) => windowPrune(limit, state.windows[j], now));
  const decisions: Decision[] = [];
  let first: Refusal | undefined;
  for (const size of sizes) {
    if (first !== undefined) {
      decisions.push(refuse(rule, state, first, size));
      continue;
    }
    const { decision, refusal } = decideOne(rule, state, now, size, from);
    decisions.push(decision);
    first = refusal;
  }
  const granted = grantLease(rule, state, now, lease);
  const ends = rule.windows.map((limit, j) => windowEnd(limit, state.windows[j]));
  return { decisions, state, expiresAt: expiryOf(state, ends), ...(granted ? { lease: granted } : {}) };
};
