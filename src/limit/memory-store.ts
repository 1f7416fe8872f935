/**
 * The limiter in process memory, on the pure reference algorithms: unit tests, development,
 * and the `local` fallback while Redis is down. Memory stays bounded: a producer's state is
 * dropped once its buckets are empty and its windows over, lazily when it is read again and by
 * a small sweep that every decide() advances (so idle producers go away without a timer).
 */
import type { Clock } from '../clock';
import { decideBatch } from './algorithms/decide-batch';
import { readState, type KeyState } from './algorithms/key-state';
import type { BatchDecision, DecideRequest, LimitRule, LimiterStore, ProducerState } from './types';

export interface MemoryStore extends LimiterStore {
  /** Producers with state held (for tests and metrics). */
  size(): number;
  /** Drops every expired producer now; returns how many were dropped. */
  sweep(now?: number): number;
  /** When the producer's state will be dropped, or undefined when none is held. */
  expiresAt(producer: string): number | undefined;
  /**
   * Starts the producer's message bucket at `tat` (its next free slot, under `rule`) with its
   * refusals reaching `tail`, whatever it held: where the shared store's schedule for it was last
   * seen to end (the `local` fallback, src/decide/schedule-ends.ts). Its other state (bytes,
   * windows) is kept.
   */
  startAt(producer: string, rule: LimitRule, end: { tat: number; tail: number }, now?: number): void;
  /**
   * Drops the producer's state (the shared store decided it since: what is here is out of date);
   * returns how far its refusals reached (0: none), which the shared store may not have said.
   */
  forget(producer: string, now?: number): number;
}

interface Entry {
  state: KeyState;
  expiresAt: number;
}

/** How many entries each decide() examines for expiry. */
const SWEEP_STEP = 4;

export const createMemoryStore = ({ clock }: { clock: Clock }): MemoryStore => {
  const entries = new Map<string, Entry>();
  let cursor: Iterator<[string, Entry]> | undefined;

  const live = (producer: string, now: number): Entry | undefined => {
    const entry = entries.get(producer);
    if (entry !== undefined && entry.expiresAt <= now) {
      entries.delete(producer);
      return undefined;
    }
    return entry;
  };

  const sweepStep = (now: number): void => {
    for (let i = 0; i < SWEEP_STEP; i += 1) {
      cursor ??= entries.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        return;
      }
      if (next.value[1].expiresAt <= now) entries.delete(next.value[0]);
    }
  };

  const decide = async ({ producer, rule, sizes, now: given, asOf, lease }: DecideRequest): Promise<BatchDecision> => {
    const now = given ?? clock.now();
    if (sizes.length === 0 && !lease) return { now, decisions: [] };
    const outcome = decideBatch(rule, live(producer, now)?.state, now, sizes, asOf, lease);
    entries.set(producer, { state: outcome.state, expiresAt: outcome.expiresAt });
    sweepStep(now);
    return outcome.lease ? { now, decisions: outcome.decisions, lease: outcome.lease } : { now, decisions: outcome.decisions };
  };

  const startAt = (producer: string, rule: LimitRule, { tat, tail }: { tat: number; tail: number }, given?: number): void => {
    const now = given ?? clock.now();
    const entry = live(producer, now);
    const state = readState(rule, entry?.state, now);
    state.tat = tat;
    state.tail = tail;
    entries.set(producer, { state, expiresAt: Math.max(entry?.expiresAt ?? 0, tat, tail) });
  };

  const inspect = async (producer: string, rule: LimitRule, given?: number): Promise<ProducerState> => {
    const now = given ?? clock.now();
    const state = live(producer, now)?.state;
    const next = state === undefined ? 0 : Math.min(Math.max(state.tat, state.btat), now + (rule.capacityMs + rule.intervalMs));
    if (next <= now) return { producer, backlogMs: 0, now };
    return { producer, nextFreeAt: Math.ceil(next), backlogMs: Math.ceil(next - now), now };
  };

  const sweep = (given?: number): number => {
    const now = given ?? clock.now();
    let dropped = 0;
    for (const [producer, entry] of entries) {
      if (entry.expiresAt <= now) {
        entries.delete(producer);
        dropped += 1;
      }
    }
    return dropped;
  };

  return {
    decide,
    startAt,
    forget: (producer, given) => {
      if (entries.size === 0) return 0;
      const tail = live(producer, given ?? clock.now())?.state.tail ?? 0;
      entries.delete(producer);
      return tail;
    },
    inspect,
    sweep,
    size: () => entries.size,
    expiresAt: (producer) => entries.get(producer)?.expiresAt,
    close: async () => entries.clear(),
  };
};
