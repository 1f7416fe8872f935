/**
 * Where each producer's schedule in the shared store was last seen to end: its next free slot
 * after the last slot a reply granted it (an admitted message's or a lease's), and how far its
 * refusals reach (the tail: while it is ahead, a slot left free in the last second may still
 * be taken, src/limit/algorithms/decide-batch.ts CATCH_UP_MS). The `local` fallback starts the
 * producer's in-memory bucket there (./fetch-decider.ts), not empty, so a call that timed out
 * but ran in Redis hands out the very slots Redis charged, and messages decided in memory do
 * not leave beside slots Redis granted before the outage.
 *
 * Only a producer with something ahead is kept (a schedule past one interval from the reply:
 * messages waiting or a lease; or refusals ahead): one whose bucket was empty again at once
 * gains nothing from it, and random producer ids, one message each, then add nothing. An entry
 * goes once nothing of it is ahead (a few examined per note, no timer), or when the fallback
 * takes it; past `max` entries a producer not yet here is not noted (the fallback starts it
 * empty, as it did before there were notes). The property the fallback keeps, one replica:
 * test/unit/decide/local-fallback.property.test.ts.
 */
import type { BatchDecision, LimitRule } from '../limit/types';

/** A producer's schedule as the store last left it: its next free slot and its refusals' tail (0: none). */
export interface ScheduleEnd {
  tat: number;
  tail: number;
}

export interface ScheduleEnds {
  /**
   * Notes where the reply to a decide under `rule` left the producer's schedule; `tail`: how far
   * refusals reach that the reply does not show (made in memory by calls that may have run).
   */
  note(producer: string, rule: LimitRule, reply: BatchDecision, tail?: number): void;
  /** The producer's schedule as last seen, forgotten as it is read (a fallback starts from it once). */
  take(producer: string): ScheduleEnd | undefined;
  size(): number;
}

/** Entries examined for one with nothing ahead per note. */
const SWEEP_STEP = 2;

/**
 * The next free slot after the reply's last granted slot; when it granted none because the
 * bucket was full (its first message refused for the rate), the furthest that slot can be (a
 * bucket holds at most its capacity and one interval ahead); else undefined (nothing known).
 */
export const nextFreeSlot = (rule: LimitRule, reply: BatchDecision): number | undefined => {
  let tat: number | undefined;
  const { decisions, lease } = reply;
  for (let i = decisions.length - 1; i >= 0; i -= 1) {
    if (decisions[i].admitted) {
      tat = decisions[i].at + rule.intervalMs;
      break;
    }
  }
  if (tat === undefined && decisions.length > 0 && decisions[0].reason === 'rate') tat = reply.now + rule.capacityMs + rule.intervalMs;
  if (lease && lease.count > 0) tat = Math.max(tat ?? 0, lease.start + lease.count * rule.intervalMs);
  return tat;
};

/** One spread past the reply's last refusal (a rate refusal's exactly; 0 when none was refused). */
export const refusalTail = (rule: LimitRule, reply: BatchDecision): number => {
  const last = reply.decisions[reply.decisions.length - 1];
  return last !== undefined && !last.admitted ? last.at + rule.intervalMs : 0;
};

const ahead = (end: ScheduleEnd, rule: LimitRule, now: number): boolean => end.tat > now + rule.intervalMs || end.tail > now;

export const createScheduleEnds = ({ max = 100_000 }: { max?: number } = {}): ScheduleEnds => {
  const ends = new Map<string, ScheduleEnd>();
  // One live iterator across notes: it resumes where the last sweep stopped.
  let cursor: Iterator<[string, ScheduleEnd]> | undefined;

  const sweep = (now: number): void => {
    for (let i = 0; i < SWEEP_STEP; i += 1) {
      cursor ??= ends.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        return;
      }
      if (next.value[1].tat <= now && next.value[1].tail <= now) ends.delete(next.value[0]);
    }
  };

  return {
    note(producer, rule, reply, unseen = 0) {
      const tat = nextFreeSlot(rule, reply);
      const tail = Math.max(refusalTail(rule, reply), unseen);
      const seen = ends.get(producer);
      if (seen !== undefined) {
        if (tat !== undefined) seen.tat = tat;
        seen.tail = Math.max(seen.tail, tail);
        if (!ahead(seen, rule, reply.now)) ends.delete(producer);
      } else if (tat !== undefined && ends.size < max) {
        const end = { tat, tail };
        if (ahead(end, rule, reply.now)) ends.set(producer, end);
      }
      if (ends.size > 0) sweep(reply.now);
    },
    take(producer) {
      const end = ends.get(producer);
      if (end !== undefined) ends.delete(producer);
      return end;
    },
    size: () => ends.size,
  };
};
