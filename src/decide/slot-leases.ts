/**
 * Leased slots (docs/design.md "Leased slots"): slots the store charged ahead for a producer far
 * below its rule, so its next messages leave on them without waiting for a decide round.
 *
 * What keeps the limit exact: a lease is charged in the shared store when it is granted (another
 * replica's message of the producer gets its slot after it), only to a leaky bucket of count
 * alone whose bucket held nothing beyond the messages just decided (decide-batch.ts grantLease),
 * and spans at most LEASE_SPAN_MS of the bucket (one slot at a rule of 200/s or slower), for rules
 * of at least 12.5/s (worthLeasing). A slot is
 * used at most LEASE_USE_MS after it (below COUNTED_LATE_MS, so the message leaves as one on its
 * slot: a second of a producer's messages spans at most that much more than its slots), and no
 * more than the rule's queue before it; an unused slot is lost to a producer that did not need it.
 *
 * Order: a producer's messages leave in the order of their slots. A lease's slots lie before those
 * of any round decided after it, so a round's answer drops the lease it finds (its own lease, if it
 * was granted one, lies after its messages), and no slot is taken while a round of the producer is
 * out being decided.
 */
import type { Lease, LimitRule } from '../limit/types';

/** How much of a producer's bucket one lease spans at most (at least one slot). */
export const LEASE_SPAN_MS = 5;
/** Slots in one lease at most (a rule of 1,000,000/s would lease 5,000 otherwise). */
export const LEASE_MAX_SLOTS = 256;
/** A leased slot is used at most this long after it (below COUNTED_LATE_MS: it leaves as on its slot). */
export const LEASE_USE_MS = 80;

/**
 * Whether leasing `rule`'s slots can pay: a slot is used at most LEASE_USE_MS after it, so only a
 * producer sending faster than that can use one; and an unused slot must not delay the next
 * message (it comes after LEASE_USE_MS, by when the bucket has passed the slot's interval).
 */
export const worthLeasing = (rule: LimitRule): boolean => rule.intervalMs <= LEASE_USE_MS;

/** Slots a lease of `rule` asks for. */
export const leaseSize = (rule: LimitRule): number => Math.max(1, Math.min(LEASE_MAX_SLOTS, Math.floor(LEASE_SPAN_MS / rule.intervalMs)));

/** One granted lease: its slots are Math.ceil(start + i × interval), i from `next` to count − 1. */
interface Run {
  start: number;
  count: number;
  next: number;
}

interface Held {
  fingerprint: string;
  intervalMs: number;
  runs: Run[];
  /** Decide rounds of the producer out being decided. */
  rounds: number;
  /** A renewal is out (at most one). */
  renewing: boolean;
}

export interface SlotLeases {
  /**
   * Up to `wanted` leased slots of `producer` under `rule`, taken at `now`, oldest first: none
   * while a round of it is out, none more than `aheadMs` ahead of now.
   */
  take(producer: string, rule: LimitRule, now: number, wanted: number, aheadMs: number): number[];
  /** Whether a renewal is due: fewer than half a lease's slots left, or the newest within half of LEASE_USE_MS of its end of use. */
  low(producer: string, rule: LimitRule, now: number): boolean;
  /** A round of the producer goes out (lease slots are not taken until it is answered). */
  roundOut(producer: string): void;
  /** The round was answered: its lease, if any, replaces what was held (slots of an older lease lie before the round's). */
  roundAnswered(producer: string, rule: LimitRule, lease: Lease | undefined): void;
  /** A renewal goes out; false when one is out already. */
  renewalOut(producer: string, rule: LimitRule): boolean;
  /** The renewal was answered: its lease, if any, is added after what is held. */
  renewalAnswered(producer: string, rule: LimitRule, lease: Lease | undefined): void;
  /** Drops up to `steps` producers whose leases are all past use and who have nothing out. */
  sweep(now: number, steps: number): void;
  /** Producers with a lease or a call out. */
  size(): number;
}

const slotOf = (held: Held, run: Run, i: number): number => Math.ceil(run.start + i * held.intervalMs);

export const createSlotLeases = (): SlotLeases => {
  const byProducer = new Map<string, Held>();
  let cursor: Iterator<[string, Held]> | undefined;

  const heldOf = (producer: string, rule: LimitRule): Held => {
    let held = byProducer.get(producer);
    if (held === undefined || held.fingerprint !== rule.fingerprint) {
      held = { fingerprint: rule.fingerprint, intervalMs: rule.intervalMs, runs: [], rounds: held?.rounds ?? 0, renewing: held?.renewing ?? false };
      byProducer.set(producer, held);
    }
    return held;
  };

  /** Drops the slots past use (and runs used up). */
  const prune = (held: Held, now: number): void => {
    while (held.runs.length > 0) {
      const run = held.runs[0];
      while (run.next < run.count && now - slotOf(held, run, run.next) > LEASE_USE_MS) run.next += 1;
      if (run.next < run.count) return;
      held.runs.shift();
    }
  };

  const remaining = (held: Held): number => held.runs.reduce((sum, run) => sum + run.count - run.next, 0);

  const add = (held: Held, lease: Lease | undefined): void => {
    if (lease !== undefined && lease.count > 0) held.runs.push({ start: lease.start, count: lease.count, next: 0 });
  };

  const idle = (held: Held): boolean => held.runs.length === 0 && held.rounds === 0 && !held.renewing;

  return {
    take(producer, rule, now, wanted, aheadMs) {
      const held = byProducer.get(producer);
      if (held === undefined || held.fingerprint !== rule.fingerprint || held.rounds > 0) return [];
      prune(held, now);
      const slots: number[] = [];
      for (const run of held.runs) {
        while (slots.length < wanted && run.next < run.count) {
          const slot = slotOf(held, run, run.next);
          if (slot - now > aheadMs) return slots;
          slots.push(slot);
          run.next += 1;
        }
      }
      prune(held, now);
      return slots;
    },
    low(producer, rule, now) {
      const held = byProducer.get(producer);
      if (held === undefined || held.fingerprint !== rule.fingerprint) return true;
      prune(held, now);
      const last = held.runs[held.runs.length - 1];
      if (last === undefined || remaining(held) * 2 < leaseSize(rule)) return true;
      return slotOf(held, last, last.count - 1) + LEASE_USE_MS - now < LEASE_USE_MS / 2;
    },
    roundOut(producer) {
      const held = byProducer.get(producer);
      if (held) held.rounds += 1;
      else byProducer.set(producer, { fingerprint: '', intervalMs: 0, runs: [], rounds: 1, renewing: false });
    },
    roundAnswered(producer, rule, lease) {
      const held = byProducer.get(producer);
      const rounds = Math.max(0, (held?.rounds ?? 1) - 1);
      const next: Held = { fingerprint: rule.fingerprint, intervalMs: rule.intervalMs, runs: [], rounds, renewing: held?.renewing ?? false };
      add(next, lease);
      if (idle(next)) byProducer.delete(producer);
      else byProducer.set(producer, next);
    },
    renewalOut(producer, rule) {
      const held = heldOf(producer, rule);
      if (held.renewing) return false;
      held.renewing = true;
      return true;
    },
    renewalAnswered(producer, rule, lease) {
      const held = byProducer.get(producer);
      if (held === undefined) return;
      held.renewing = false;
      if (held.fingerprint === rule.fingerprint) add(held, lease);
      if (idle(held)) byProducer.delete(producer);
    },
    sweep(now, steps) {
      for (let i = 0; i < steps; i += 1) {
        cursor ??= byProducer.entries();
        const next = cursor.next();
        if (next.done) {
          cursor = undefined;
          return;
        }
        const [producer, held] = next.value;
        prune(held, now);
        if (idle(held)) byProducer.delete(producer);
      }
    },
    size: () => byProducer.size,
  };
};
