/**
 * The state a store keeps per producer (one key in Redis), and how it is read back under
 * the rule in force: windows matched by kind and length, times clamped to what the rule can
 * produce (a rule change or a clock jump never parks a producer for hours), and the tail
 * restarted when the state was written under another rule.
 */
import type { LimitRule, WindowKind } from '../types';

/** Largest message whose byte cost a clamp keeps whole (Kafka's default limit is about 1 MB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface WindowState {
  kind: WindowKind;
  windowMs: number;
  /** log: admission instants, oldest first. */
  times: number[];
  /** fixed: the calendar window index (floor(now / W)) and its count. */
  index: number;
  count: number;
  /** sliding: [sub-window index, count] pairs, oldest first. */
  slots: Array<[number, number]>;
}

export interface KeyState {
  fingerprint: string;
  /** Message bucket: next free slot (0 = none). Fractional ms. */
  tat: number;
  /** Byte bucket: next free slot (0 = none). */
  btat: number;
  /** Refusals: the next notBefore may not be earlier than this. */
  tail: number;
  /** One per rule window, in the rule's order. */
  windows: WindowState[];
}

export const emptyWindow = (kind: WindowKind, windowMs: number): WindowState => ({
  kind,
  windowMs,
  times: [],
  index: 0,
  count: 0,
  slots: [],
});

const realignWindows = (rule: LimitRule, stored: WindowState[]): WindowState[] =>
  rule.windows.map(
    (w) => stored.find((s) => s.kind === w.kind && s.windowMs === w.windowMs) ?? emptyWindow(w.kind, w.windowMs),
  );

/** The stored state as the current rule sees it at `now` (a new object; `stored` is not changed). */
export const readState = (rule: LimitRule, stored: KeyState | undefined, now: number): KeyState => {
  if (stored === undefined) {
    return { fingerprint: rule.fingerprint, tat: 0, btat: 0, tail: 0, windows: rule.windows.map((w) => emptyWindow(w.kind, w.windowMs)) };
  }
  const sameRule = stored.fingerprint === rule.fingerprint;
  const byteT = rule.byteIntervalMs;
  return {
    fingerprint: rule.fingerprint,
    tat: Math.min(stored.tat, now + rule.capacityMs + rule.intervalMs),
    btat: byteT === undefined ? 0 : Math.min(stored.btat, now + rule.capacityMs + MAX_MESSAGE_BYTES * byteT),
    tail: sameRule ? stored.tail : 0,
    windows: realignWindows(rule, stored.windows).map((w) => ({ ...w, times: [...w.times], slots: w.slots.map(([i, c]) => [i, c]) })),
  };
};

/** When the key may be forgotten: its buckets empty, its tail passed, its windows over. */
export const expiryOf = (state: KeyState, windowEnds: number[]): number =>
  Math.max(state.tat, state.btat, state.tail, ...windowEnds);
