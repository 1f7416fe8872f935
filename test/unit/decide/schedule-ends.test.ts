import { createScheduleEnds, nextFreeSlot, refusalTail } from '../../../src/decide/schedule-ends';
import type { BatchDecision, LimitRule } from '../../../src/limit/types';

const rule: LimitRule = {
  algorithm: 'leaky-bucket', intervalMs: 100, capacityMs: 1000, burst: 1, windows: [], labels: { rate: '10/s' }, fingerprint: 'f',
};
const now = 1_000_000;
const admitted = (...at: number[]): BatchDecision => ({ now, decisions: at.map((t) => ({ admitted: true, at: t })) });

describe('where a reply leaves a producer\'s schedule', () => {
  it('frees the next slot one interval after the last it granted, a message\'s or a lease\'s, and none when it granted none', () => {
    expect(nextFreeSlot(rule, { now, decisions: [{ admitted: true, at: now + 300 }, { admitted: false, at: now + 900, reason: 'rate' }] })).toBe(now + 400);
    expect(nextFreeSlot(rule, { now, decisions: [], lease: { start: now + 200, count: 5 } })).toBe(now + 700);
    expect(nextFreeSlot(rule, { now, decisions: [{ admitted: false, at: now + 900, reason: '5/m' }] })).toBeUndefined();
  });

  it('when it refused everything for the rate, is at most a full bucket ahead: its capacity and one interval', () => {
    expect(nextFreeSlot(rule, { now, decisions: [{ admitted: false, at: now + 50, reason: 'rate' }, { admitted: false, at: now + 150, reason: 'rate' }] })).toBe(now + 1100);
  });

  it('reaches one spread past its last refusal with its tail, and nowhere when nothing was refused', () => {
    expect(refusalTail(rule, { now, decisions: [{ admitted: true, at: now }, { admitted: false, at: now + 900, reason: 'rate' }, { admitted: false, at: now + 1000, reason: 'rate' }] })).toBe(now + 1100);
    expect(refusalTail(rule, admitted(now, now + 100))).toBe(0);
  });
});

describe('the schedule ends kept for the local fallback', () => {
  it('keeps a schedule that runs past one interval, once: taking it forgets it', () => {
    const ends = createScheduleEnds();
    ends.note('a', rule, admitted(now, now + 100, now + 200));
    expect(ends.take('a')).toEqual({ tat: now + 300, tail: 0 });
    expect(ends.take('a')).toBeUndefined();
  });

  it('keeps nothing for a producer whose bucket is empty again after one interval, and forgets it when its queue has gone', () => {
    const ends = createScheduleEnds();
    ends.note('a', rule, admitted(now));
    expect(ends.size()).toBe(0);
    ends.note('b', rule, admitted(now, now + 100));
    ends.note('b', rule, { now: now + 5, decisions: [{ admitted: true, at: now + 5 }] });
    expect(ends.take('b')).toBeUndefined();
  });

  it('keeps the slot it noted when a reply refused everything for another limit, and the furthest tail', () => {
    const ends = createScheduleEnds();
    ends.note('a', rule, admitted(now, now + 100, now + 900));
    ends.note('a', rule, { now, decisions: [{ admitted: false, at: now + 1000, reason: '5/m' }, { admitted: false, at: now + 1100, reason: '5/m' }] });
    ends.note('a', rule, { now, decisions: [{ admitted: false, at: now + 50, reason: '5/m' }] });
    expect(ends.take('a')).toEqual({ tat: now + 1000, tail: now + 1200 });
  });

  it('keeps a producer whose refusals reach ahead though its bucket is empty again, until they no longer do', () => {
    const ends = createScheduleEnds();
    ends.note('a', rule, { now, decisions: [{ admitted: true, at: now - 300 }, { admitted: false, at: now + 400, reason: 'rate' }] });
    ends.note('a', rule, { now: now + 600, decisions: [{ admitted: true, at: now + 600 }] });
    expect(ends.size()).toBe(0);
    ends.note('b', rule, { now, decisions: [{ admitted: true, at: now - 300 }, { admitted: false, at: now + 400, reason: 'rate' }] });
    expect(ends.take('b')).toEqual({ tat: now - 200, tail: now + 500 });
  });

  it('holds at most `max` producers, however many ids arrive, and lets ended schedules go as it notes others', () => {
    const ends = createScheduleEnds({ max: 50 });
    for (let i = 0; i < 1000; i += 1) ends.note(`p${i}`, rule, admitted(now, now + 100));
    expect(ends.size()).toBe(50);
    const later: BatchDecision = { now: now + 10_000, decisions: [{ admitted: true, at: now + 10_000 }, { admitted: true, at: now + 10_100 }] };
    for (let i = 0; i < 50; i += 1) ends.note('busy', rule, later);
    expect(ends.size()).toBe(1);
    expect(ends.take('busy')).toEqual({ tat: now + 10_200, tail: 0 });
  });
});
