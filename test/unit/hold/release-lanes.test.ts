import { manualClock } from '../../../src/clock';
import { busiestSecond } from '../../helpers/busiest-second';
import { type Answer, oneRequestInFlight } from '../../helpers/one-request-in-flight';
import { HeldMessage } from '../../../src/hold/hold-scheduler';
import { CALM_MS, CATCH_UP_MS, CATCH_UP_PACE, STUCK_MS, createReleaseLanes, type LaneAnswer, type OnLate } from '../../../src/hold/release-lanes';
import { LANE_TOLERANCE_MS, SECOND_SPAN_MS } from '../../../src/hold/second-rule';

const setup = () => {
  const clock = manualClock(1000);
  const held: HeldMessage[] = [];
  const hold = { add: (m: HeldMessage) => void held.push(m) } as never;
  const sent: string[] = [];
  const evicted: string[] = [];
  const lanes = createReleaseLanes({ hold, clock });
  const item = (id: string) => ({ bytes: 1, send: () => void sent.push(`${id}@${clock.now()}`), evict: () => void evicted.push(id) });
  /** Fires the hold's earliest entry at its instant (or later). */
  const fire = (lateBy = 0) => {
    held.sort((a, b) => a.at - b.at);
    const next = held.shift() as HeldMessage;
    clock.set(Math.max(clock.now(), next.at + lateBy));
    next.release();
  };
  return { clock, held, sent, evicted, lanes, item, fire };
};

const at = (sent: string[]): number[] => sent.map((x) => Number(x.split('@')[1]));

/**
 * Hands the lanes of `t` one message of producer `p` a slot, each when its slot comes, the process
 * stalled over [stall.from, stall.to) (what fell due meanwhile comes when the stall ends); then
 * fires what is left.
 */
const throughStall = (t: ReturnType<typeof setup>, spacing: number, slots: readonly number[], stall: { from: number; to: number }, conforming: boolean): void => {
  slots.forEach((slot, k) => {
    t.clock.set(Math.max(t.clock.now(), slot >= stall.from && slot < stall.to ? stall.to : slot));
    while (t.held.length > 0 && t.held.sort((a, b) => a.at - b.at)[0].at <= t.clock.now()) t.fire();
    t.lanes.due('p', spacing, { ...t.item(String(k)), slot, conforming });
  });
  while (t.held.length > 0) t.fire();
};

/**
 * Drives lanes on a manual clock until everything is done: message k (k < count) falls due at
 * dueAt(k) and `onDue` hands it to the lanes; the hold's entries fire at their instants and the
 * broker's answers arrive at theirs.
 */
const drive = async (s: { clock: ReturnType<typeof manualClock>; held: HeldMessage[]; answers: Answer[]; count: number; dueAt(k: number): number; onDue(k: number, due: number): void }): Promise<void> => {
  const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  let k = 0;
  while (k < s.count || s.held.length > 0 || s.answers.length > 0) {
    s.held.sort((a, b) => a.at - b.at);
    const due = k < s.count ? s.dueAt(k) : Infinity;
    const answerAt = Math.min(...s.answers.map((a) => a.at));
    const next = Math.min(due, s.held[0]?.at ?? Infinity, answerAt);
    s.clock.set(Math.max(s.clock.now(), next));
    if (answerAt === next) {
      const now = s.answers.filter((a) => a.at <= next);
      s.answers.splice(0, s.answers.length, ...s.answers.filter((a) => a.at > next));
      for (const a of now) a.ack();
    } else if (due === next) s.onDue(k++, due);
    else (s.held.shift() as HeldMessage).release();
    await settle();
  }
};

describe('when a producer\'s messages become due on time', () => {
  it('sends each at once', () => {
    const t = setup();
    t.lanes.due('p', 50, t.item('1'));
    t.clock.advance(50);
    t.lanes.due('p', 50, t.item('2'));
    expect(t.sent).toEqual(['1@1000', '2@1050']);
    expect(t.held).toEqual([]);
  });
});

describe('when the process was late and several messages of one producer are due at once', () => {
  it('keeps each to its own slot when the slots are an interval apart', () => {
    const t = setup();
    [1000, 1050, 1100].forEach((slot, i) => t.lanes.due('p', 50, { ...t.item(String(i + 1)), slot }));
    t.fire();
    t.fire();
    expect(t.sent).toEqual(['1@1000', '2@1050', '3@1100']);
  });

  it('spaces messages due at the same instant with one slot (two limiters gave them: the local fallback beside Redis) one interval apart, in order', () => {
    const t = setup();
    ['1', '2', '3'].forEach((id) => t.lanes.due('p', 50, t.item(id)));
    expect(t.sent).toEqual(['1@1000']);
    expect(t.lanes.waiting()).toBe(2);
    t.fire();
    t.fire();
    expect(t.sent.map((x) => x.split('@')[0])).toEqual(['1', '2', '3']);
    const times = at(t.sent);
    expect(times[1] - times[0]).toBeCloseTo(50);
    expect(times[2] - times[1]).toBeCloseTo(50);
  });

  it('when its timer fires late, sends at once what fell due within CATCH_UP_MS and paces the rest at the catch-up pace, in order', () => {
    const t = setup();
    for (let i = 1; i <= 8; i += 1) t.lanes.due('p', 50, { ...t.item(String(i)), slot: 1000 + 50 * (i - 1) });
    t.fire(400);
    const burst = t.sent.length - 1;
    expect(burst).toBeGreaterThanOrEqual(2);
    expect(burst).toBeLessThanOrEqual(Math.floor((CATCH_UP_MS * CATCH_UP_PACE) / 50) + 1);
    while (t.held.length > 0) t.fire();
    expect(t.sent.map((x) => x.split('@')[0])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    const times = at(t.sent);
    // After the burst (whose last left a little after its own instant), one paced interval each.
    for (let i = burst + 2; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeCloseTo(50 / CATCH_UP_PACE);
  });

  it('keeps a message to its own slot when the lane is on time, also when slots are farther apart than the interval (two replicas share a producer)', () => {
    const t = setup();
    t.lanes.due('p', 50, { ...t.item('a'), slot: 1000 });
    t.lanes.due('p', 50, { ...t.item('b'), slot: 1100 }); // the slot between went to the other replica
    t.fire();
    expect(t.sent).toEqual(['a@1000', 'b@1100']);
  });

  it('never sends more than 1.1 × its rate + 1 in any second, however late its timers fire, and catches up with its slots', () => {
    const t = setup();
    for (let i = 0; i < 400; i += 1) t.lanes.due('p', 10, { ...t.item(String(i)), slot: 1000 + 10 * i });
    for (let lateBy = 0; t.held.length > 0; lateBy = (lateBy + 37) % 120) t.fire(lateBy);
    const times = at(t.sent).sort((a, b) => a - b);
    const most = busiestSecond(times);
    expect(times).toHaveLength(400);
    expect(most).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
    // Timers up to 120 ms late cost the producer at most that: the last leaves within it of its slot.
    expect(times[399] - (1000 + 10 * 399)).toBeLessThanOrEqual(120);
  });

  it('with two replicas each holding every other slot, a stall of both catches up at 1.1 × the producer\'s rate + a slot each, not twice it', () => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const hold = { add: (m: HeldMessage) => void held.push(m) } as never;
    const times: number[] = [];
    const replicas = [createReleaseLanes({ hold, clock }), createReleaseLanes({ hold, clock })];
    // 20/s (interval 50 ms) for 20 s; slot k goes to replica k % 2.
    for (let k = 0; k < 400; k += 1) replicas[k % 2].due('p', 50, { bytes: 1, send: () => void times.push(clock.now()), evict: () => undefined, slot: 1000 + 50 * k });
    let stalled = false;
    while (held.length > 0) {
      held.sort((a, b) => a.at - b.at);
      const next = held.shift() as HeldMessage;
      const lateBy: number = !stalled && next.at >= 5000 ? 400 : 0; // the machine stalls 400 ms once
      stalled ||= lateBy > 0;
      clock.set(Math.max(clock.now(), next.at + lateBy));
      next.release();
    }
    times.sort((a, b) => a - b);
    const most = busiestSecond(times);
    expect(times).toHaveLength(400);
    expect(most).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 20 + 2);
    expect(times[399] - (1000 + 50 * 399)).toBeLessThanOrEqual(50); // caught up with its slots by the end
  });

  // Each replica decides a fetch of a producer at once, so the slots come in stretches: here 25
  // (a quarter of a second at 100/s) on one replica, the next 25 on the other. One replica
  // stalls 300 ms at the start of its stretch while the other is on time on the next.
  const stretches = (share: boolean, stretch = 25, stallMs = 300): { times: number[]; told: number } => {
    const clock = manualClock(1000);
    const held: HeldMessage[][] = [[], []];
    let told = 0;
    const replicas: ReturnType<typeof createReleaseLanes>[] = [];
    for (const r of [0, 1]) {
      const hold = { add: (m: HeldMessage) => void held[r].push(m) } as never;
      const onLate = share ? (...late: Parameters<OnLate>) => { told += 1; replicas[1 - r].lateElsewhere(...late); } : undefined;
      replicas.push(createReleaseLanes({ hold, clock, onLate }));
    }
    const times: number[] = [];
    for (let k = 0; k < 2000; k += 1) {
      replicas[Math.floor(k / stretch) % 2].due('p', 10, { bytes: 1, send: () => void times.push(clock.now()), evict: () => undefined, slot: 1000 + 10 * k });
    }
    for (;;) {
      const r = [0, 1].filter((i) => held[i].length > 0).sort((a, b) => Math.min(...held[a].map((m) => m.at)) - Math.min(...held[b].map((m) => m.at)))[0];
      if (r === undefined) break;
      held[r].sort((a, b) => a.at - b.at);
      const next = held[r].shift() as HeldMessage;
      const stalled = r === 0 && next.at >= 11_000 && next.at < 11_000 + stallMs;
      clock.set(Math.max(clock.now(), stalled ? 11_000 + stallMs : next.at));
      next.release();
    }
    return { times: times.sort((a, b) => a - b), told };
  };

  it('with two replicas whose slots come in stretches, one late on its stretch while the other is on time on the next: together at most 1.1 × the rate + a slot each in any second, when each tells the other what it sent late', () => {
    const shared = stretches(true);
    expect(shared.times).toHaveLength(2000);
    expect(shared.told).toBeGreaterThan(0);
    expect(busiestSecond(shared.times)).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 2);
    expect(shared.times[1999] - (1000 + 10 * 1999)).toBeLessThanOrEqual(10); // caught up by the end
    // Each alone keeps only its own second: together they sent more.
    expect(busiestSecond(stretches(false).times)).toBeGreaterThan((SECOND_SPAN_MS / 1000) * 100 + 2);
  });

  // Stretches wider than the second's span (150 slots, 1.5 s) are no pace for the lane that is
  // late: after a 2 s stall it sends its next stretch as soon as the second allows.
  it('with stretches wider than SECOND_SPAN_MS and one replica stalled 2 s: together at most 1.1 × the rate + a slot each in any second', () => {
    const shared = stretches(true, 150, 2000);
    expect(shared.times).toHaveLength(2000);
    expect(shared.told).toBeGreaterThan(0);
    expect(busiestSecond(shared.times)).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 2);
  });

  it('remembers what another replica counted late: a message whose slot lies more than SECOND_SPAN_MS after it waits until a second after it was sent; one within the span leaves on its slot', () => {
    const t = setup();
    t.clock.set(5000);
    t.lanes.lateElsewhere('p', 10, 4000, 5000); // slot 4000, sent at 5000 (1 s late)
    t.lanes.due('p', 10, { ...t.item('within'), slot: 5000 });
    expect(t.sent).toEqual(['within@5000']);
    t.clock.set(5200);
    t.lanes.due('p', 10, { ...t.item('beyond'), slot: 5200 }); // 1,200 ms of slots after the late one
    expect(t.sent).toEqual(['within@5000']);
    t.fire();
    expect(at(t.sent)[1]).toBe(6000 + LANE_TOLERANCE_MS);
    t.lanes.lateElsewhere('q', 0, 4000, 5000); // a token bucket (spacing 0) has no lane
    expect(t.lanes.tracked()).toBe(1);
  });

  // A message parked in a retry tier comes back after its slot (the tiers' consumer was behind)
  // while the messages decided after it left on theirs: the lane then sends a slot older than
  // what it sent in the last second.
  it('holds a message whose slot lies more than SECOND_SPAN_MS before one sent in the last second until a second after that send, and what queues behind it too', () => {
    const t = setup();
    for (let k = 0; k <= 20; k += 1) t.lanes.due('p', 50, { ...t.item(`on${k}`), slot: 10_000 + 50 * k });
    while (t.held.length > 0) t.fire();
    expect(at(t.sent)).toEqual(Array.from({ length: 21 }, (_, k) => 10_000 + 50 * k)); // on their slots, to 11,000
    for (let k = 0; k < 40; k += 1) t.lanes.due('p', 50, { ...t.item(`old${k}`), slot: 5000 + 50 * k });
    t.lanes.due('p', 50, { ...t.item('next'), slot: 11_050 });
    while (t.held.length > 0) t.fire();
    const times = at(t.sent);
    expect(t.sent.map((x) => x.split('@')[0])).toEqual([...Array.from({ length: 21 }, (_, k) => `on${k}`), ...Array.from({ length: 40 }, (_, k) => `old${k}`), 'next']);
    expect(times[21]).toBe(11_000 + 1000 + LANE_TOLERANCE_MS); // a second after the last slot that lies beyond its span
    expect(busiestSecond([...times].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 20 + 1);
  });

  it('holds a message whose slot lies more than SECOND_SPAN_MS before one another replica counted late until a second after that one (both ways of the second)', () => {
    const t = setup();
    t.clock.set(10_000);
    t.lanes.lateElsewhere('p', 10, 9000, 10_000); // the other replica: slot 9,000 sent at 10,000
    t.lanes.due('p', 10, { ...t.item('within'), slot: 8000 }); // 1,000 ms of slots before it: leaves
    expect(t.sent).toEqual(['within@10000']);
    t.clock.set(10_100);
    t.lanes.due('p', 10, { ...t.item('older'), slot: 7800 }); // 1,200 ms before it: waits
    expect(t.sent).toEqual(['within@10000']);
    t.fire();
    expect(at(t.sent)[1]).toBe(11_000 + LANE_TOLERANCE_MS);
  });

  it('tells (onLate) each message it counts late, with its producer, interval, slot and when it counted; nothing on time', () => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const told: Parameters<OnLate>[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock, onLate: (...late) => void told.push(late) });
    lanes.due('p', 10, { bytes: 1, send: () => undefined, evict: () => undefined, slot: 1000 });
    expect(told).toEqual([]);
    clock.set(1500);
    lanes.due('p', 10, { bytes: 1, send: () => undefined, evict: () => undefined, slot: 1010 }); // 490 ms late
    expect(told).toEqual([['p', 10, 1010, 1500]]);
  });

  it('tells the other replicas a message counted late at its answer\'s arrival, not at the instant it counts here (their sends may reach the broker quicker than this replica\'s)', async () => {
    const clock = manualClock(1000);
    const told: Parameters<OnLate>[] = [];
    const lanes = createReleaseLanes({ hold: { add: () => undefined } as never, clock, onLate: (...late) => void told.push(late) });
    /** Sent now (its slot long past), appended 6 ms later, answered 9 ms later. */
    const lateSend = async (producer: string, slot: number): Promise<void> => {
      let answer!: (sent: LaneAnswer) => void;
      const released = clock.now();
      lanes.due(producer, 10, { bytes: 1, send: () => new Promise<LaneAnswer>((resolve) => (answer = resolve)), evict: () => undefined, slot });
      clock.set(released + 9);
      answer({ appendedAt: released + 6 });
      await new Promise((resolve) => setImmediate(resolve));
    };
    await lateSend('p', 0); // the first answer: nothing to measure it against, counted at its arrival
    clock.set(1100);
    await lateSend('q', 100); // as quick as the quickest: counts here at its release (1100), appended at 1106
    expect(told).toEqual([['p', 10, 0, 1009], ['q', 10, 100, 1109]]);
  });

  it('counts a message late at its release, and tells the other replicas that, when its answer says its partition\'s broker is slow for good (the bound holds for the releases there)', async () => {
    const clock = manualClock(1000);
    const told: Parameters<OnLate>[] = [];
    const lanes = createReleaseLanes({ hold: { add: () => undefined } as never, clock, onLate: (...late) => void told.push(late) });
    /** Producer `producer` sends now with slot `slot`; the answer comes `tookMs` later. */
    const send = async (producer: string, slot: number, tookMs: number, slow: boolean): Promise<void> => {
      let answer!: (sent: LaneAnswer) => void;
      const released = clock.now();
      lanes.due(producer, 10, { bytes: 1, send: () => new Promise<LaneAnswer>((resolve) => (answer = resolve)), evict: () => undefined, slot });
      clock.set(released + tookMs);
      answer({ slow });
      await new Promise((resolve) => setImmediate(resolve));
    };
    await send('first', 0, 2, false); // the quickest answer: 2 ms
    clock.set(5000);
    await send('p', 4500, 200, true); // 500 ms late, answered 200 ms after its release, the partition slow
    clock.set(6000);
    await send('q', 5500, 200, false); // the same, the partition not slow: counted at its answer less the quickest, told its answer
    expect(told).toEqual([['first', 10, 0, 1002], ['p', 10, 4500, 5000], ['q', 10, 5500, 6200]]);
  });

  // The ingress unread through a 3 s broker pause: no slots were asked for in it, and when the
  // broker is back both sides of that hole are late. Paced at the gap, the first slot after it
  // waited 2.4 s after the last one before it (a backlogged producer lost 2 s of its quota in
  // the broker-pause test); the second rule alone keeps them a second apart.
  it('does not take a hole in its slots (none asked for meanwhile) for its pace: what follows it leaves a second after what came before it, at most 1.1 × the rate + 1 in any second', () => {
    const t = setup();
    t.clock.set(9000);
    const slots = [...Array.from({ length: 60 }, (_, k) => 2000 + 50 * k), ...Array.from({ length: 80 }, (_, k) => 8000 + 50 * k)];
    for (const slot of slots) t.lanes.due('p', 50, { ...t.item(String(slot)), slot });
    while (t.held.length > 0) t.fire();
    expect(t.sent.map((x) => Number(x.split('@')[0]))).toEqual(slots);
    const times = at(t.sent);
    expect(times[60] - times[59]).toBeLessThanOrEqual(1000 + LANE_TOLERANCE_MS);
    expect(busiestSecond(times)).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 20 + 1);
  });

  it('does not let timers that fire a little late slow the producer down', () => {
    const t = setup();
    for (let i = 0; i < 21; i += 1) t.lanes.due('p', 50, t.item(String(i)));
    for (let i = 0; i < 20; i += 1) t.fire(3); // every timer 3 ms late
    const times = t.sent.map((s) => Number(s.split('@')[1]));
    expect(times).toHaveLength(21);
    // 20 intervals of 50 ms (+ the last timer's lateness), not 20 of 53 ms.
    expect(times[20] - times[0]).toBeLessThanOrEqual(20 * 50 + 3);
    for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(25);
  });

  it('does not hold back other producers or token-bucket rules (spacing 0)', () => {
    const t = setup();
    t.lanes.due('p', 50, t.item('p1'));
    t.lanes.due('p', 50, t.item('p2'));
    t.lanes.due('q', 50, t.item('q1'));
    t.lanes.due('b', 0, t.item('b1'));
    t.lanes.due('b', 0, t.item('b2'));
    expect(t.sent).toEqual(['p1@1000', 'q1@1000', 'b1@1000', 'b2@1000']);
  });
});

describe('when a message let through at once asks whether it may leave now (sendsNow)', () => {
  it('says yes without making a lane for a producer that has none (its slot is an interval after its previous one)', () => {
    const t = setup();
    expect(t.lanes.sendsNow('p', 50, 1000)).toBe(true);
    expect(t.lanes.sendsNow('p', 50, 1050)).toBe(true);
    expect(t.lanes.tracked()).toBe(0);
  });

  it('says yes for an idle lane on its slot and records it, so the next message keeps an interval after it', () => {
    const t = setup();
    t.lanes.due('p', 50, { ...t.item('0'), slot: 950 }); // a lane: sent at once, late by 50
    expect(t.lanes.sendsNow('p', 50, 1000)).toBe(true);
    expect(t.lanes.sendsNow('p', 50, 1001)).toBe(false); // one interval after 1000 is 1050
    t.lanes.due('p', 50, { ...t.item('2'), slot: 1001 });
    expect(t.sent).toEqual(['0@1000']); // only the first, through `due`
    expect(t.held.map((h) => h.at)).toEqual([1050]);
    expect(t.lanes.sendsNow('p', 50, 1050)).toBe(false); // its lane has one waiting
    expect(t.lanes.sendsNow('q', 50, 1000)).toBe(true); // other producers are not held back
    expect(t.lanes.sendsNow('p', 0, 1000)).toBe(true); // spacing 0 (token bucket): no lane
  });

  it('says no for one later than the second rule lets pass uncounted whose slot continues a run of its lane\'s slots (its lane counts it), yes for a sparse one', () => {
    const t = setup();
    t.lanes.due('p', 10, { ...t.item('0'), slot: 1000 });
    t.lanes.due('q', 10, { ...t.item('0'), slot: 1000 });
    t.clock.set(1400);
    expect(t.lanes.sendsNow('p', 10, 1010)).toBe(false); // the next slot of p's run, 390 ms late
    expect(t.lanes.sendsNow('q', 10, 1250)).toBe(true); // 250 ms after q's last slot: sparse
  });
});

describe('when a graceful stop evicts a lane', () => {
  it('hands back every message waiting in it', () => {
    const t = setup();
    ['1', '2', '3'].forEach((id) => t.lanes.due('p', 50, t.item(id)));
    t.held[0].evict();
    expect(t.evicted).toEqual(['2', '3']);
    expect(t.lanes.waiting()).toBe(0);
  });
});

describe('when more producers than maxIdle pass through, with a slow rule that keeps every lane unexpired', () => {
  it('keeps the lanes bounded, still spaces a recent producer and keeps a waiting lane and its order', () => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const sent: string[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock, maxIdle: 100 });
    const item = (id: string) => ({ bytes: 1, send: () => void sent.push(id), evict: () => undefined });
    const hour = 3_600_000;
    lanes.due('busy', hour, item('busy-1'));
    lanes.due('busy', hour, item('busy-2'));
    for (let i = 0; i < 10_000; i += 1) lanes.due(`p${i}`, hour, item(`p${i}`));
    expect(lanes.tracked()).toBeLessThanOrEqual(101);
    lanes.due('p9999', hour, item('p9999-again'));
    expect(sent).not.toContain('p9999-again');
    expect(lanes.waiting()).toBe(2);
    lanes.due('busy', hour, item('busy-3'));
    const next = held.sort((a, b) => a.at - b.at)[0];
    clock.set(next.at);
    next.release();
    expect(sent.filter((s) => s.startsWith('busy'))).toEqual(['busy-1', 'busy-2']);
  });
});

describe('when a rebalance takes partitions away', () => {
  const owned = (t: ReturnType<typeof setup>, dropped: string[]) => (id: string, owner: string) =>
    ({ ...t.item(id), owner, evict: () => void dropped.push(id) });

  it('evicts the queued messages of the partitions handed over (never sent) and keeps the others in order', () => {
    const t = setup();
    const dropped: string[] = [];
    const item = owned(t, dropped);
    t.lanes.due('p', 50, item('1', 'a/0'));
    t.lanes.due('p', 50, item('2', 'b/0'));
    t.lanes.due('p', 50, item('3', 'a/0'));
    t.lanes.due('p', 50, item('4', 'b/1'));
    t.lanes.due('q', 50, item('q1', 'b/0'));
    t.lanes.due('q', 50, item('q2', 'b/0'));
    expect(t.lanes.waiting()).toBe(4);
    t.lanes.evictOwned((owner) => owner.startsWith('b/'));
    expect(dropped).toEqual(['2', '4', 'q2']);
    expect(t.lanes.waiting()).toBe(1);
    t.fire();
    t.fire(); // q's head fires with nothing left: nothing is sent
    expect(t.sent.map((x) => x.split('@')[0])).toEqual(['1', 'q1', '3']);
    expect(at(t.sent)[2]).toBeCloseTo(1000 + 50); // (its slot was p1's: one interval after it)
    expect(t.evicted).toEqual([]); // (the owned items were evicted through their own evict, recorded above)
  });

  it('keeps an item without an owner', () => {
    const t = setup();
    t.lanes.due('p', 50, t.item('1'));
    t.lanes.due('p', 50, t.item('2'));
    t.lanes.evictOwned(() => true);
    expect(t.lanes.waiting()).toBe(1);
  });
});

describe('when a lane\'s head slot waits in the hold (armed) with its queue emptied', () => {
  it('never sends a new message at once, even past the slot: it leaves when the armed slot fires', () => {
    const t = setup();
    t.lanes.due('p', 50, { ...t.item('1'), owner: 'a/0' });
    t.lanes.due('p', 50, { ...t.item('2'), owner: 'b/0' });
    t.lanes.evictOwned((owner) => owner === 'b/0');
    expect(t.held).toHaveLength(1);
    t.clock.set(1100); // past the armed slot (1025), its timer not fired yet
    t.lanes.due('p', 50, t.item('3'));
    expect(t.sent).toEqual(['1@1000']);
    expect(t.held).toHaveLength(1); // no second entry: the armed one carries it
    t.fire();
    expect(t.sent).toEqual(['1@1000', '3@1100']);
  });

  it('is not forgotten by pruning while armed', () => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const sent: string[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock, maxIdle: 2 });
    const item = (id: string, owner?: string) => ({ bytes: 1, owner, send: () => void sent.push(`${id}@${clock.now()}`), evict: () => undefined });
    lanes.due('p', 50, item('p1'));
    lanes.due('p', 50, item('p2', 'lost'));
    lanes.evictOwned((owner) => owner === 'lost');
    clock.set(2000);
    for (const id of ['a', 'b', 'c']) lanes.due(id, 50, item(id));
    lanes.due('p', 50, item('p3'));
    expect(sent).toEqual(['p1@1000', 'a@2000', 'b@2000', 'c@2000']);
    held[0].release();
    expect(sent).toEqual(['p1@1000', 'a@2000', 'b@2000', 'c@2000', 'p3@2000']);
  });
});

describe('when the process stalls and several producers\' delayed messages fall due at once', () => {
  it('keeps each producer\'s lane through the catch-up: never more than 1.1 × its rate + 1 in any second, and caught up with its slots at that pace', () => {
    // Reproduces a 2 s SIGSTOP of a sidecar under backlog: the hold released two producers'
    // missed slots interleaved, each release emptied its lane at the catch-up floor, and the
    // other producer's call pruned it as idle — 226 of 100/s left within 250 ms.
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const hold = { add: (m: HeldMessage) => void held.push(m) } as never;
    const lanes = createReleaseLanes({ hold, clock });
    const times = new Map<string, number[]>([['a', []], ['b', []]]);
    const item = (producer: string, slot: number) => ({ bytes: 1, send: () => void times.get(producer)?.push(clock.now()), evict: () => undefined, slot });
    // 100/s each for 40 s; the hold's timers fire on time except for a 2 s stall at 10 s.
    const due: { at: number; producer: string }[] = [];
    for (let k = 0; k < 4000; k += 1) for (const producer of ['a', 'b']) due.push({ at: 1000 + 10 * k, producer });
    let i = 0;
    while (i < due.length || held.length > 0) {
      held.sort((x, y) => x.at - y.at);
      const nextLane = held[0]?.at ?? Infinity;
      const nextDue = due[i]?.at ?? Infinity;
      const at = Math.min(nextLane, nextDue);
      clock.set(Math.max(clock.now(), at >= 11_000 && at < 13_000 ? 13_000 : at));
      if (nextDue <= nextLane) {
        const { producer, at: slot } = due[i++];
        lanes.due(producer, 10, item(producer, slot));
      } else (held.shift() as HeldMessage).release();
    }
    for (const [, sent] of times) {
      expect(sent).toHaveLength(4000);
      expect(busiestSecond(sent)).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
      // 2 s behind, won back at 0.1 × the rate: on its slots again about 20 s after the stall.
      const behind = sent.map((time, k) => time - (1000 + 10 * k));
      const caughtUp = behind.findIndex((lag, k) => k > 1200 && lag <= 2);
      expect(1000 + 10 * caughtUp).toBeGreaterThan(13_000);
      expect(1000 + 10 * caughtUp).toBeLessThanOrEqual(13_000 + 2_000 / 0.1 + 1_000);
      expect(behind.slice(-500).every((lag) => lag <= 2)).toBe(true); // and stays on them
    }
  });
});

describe('when the broker answers a producer\'s sends late (its requests waited), with the releases on their slots', () => {
  it.each([
    ['in slot order, each other answer at once', false, () => 0],
    ['out of slot order (its messages went to several partitions), each other answer at once', true, () => 0],
    // The quickest answer is the least of the last seconds: here a 3 ms answer comes once a
    // second, and one kept for a second only would age out during the slow run.
    ['in slot order, each other answer within 3–4 ms', false, (k: number) => (k % 100 === 0 ? 3 : 4)],
  ])('counts each message at its acknowledgement, %s: what follows a late-appended run waits, so no second of appends holds more than 1.1 × the rate + 1', async (_, reversed, answerMs) => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
    const appended: number[] = [];
    const sent: number[] = [];
    let answers: { at: number; ack: () => void }[] = [];
    const stalled = (now: number): boolean => now >= 5000 && now < 5545; // requests answered only at 5545
    const send = (k: number) => (): Promise<undefined> => {
      sent.push(clock.now());
      return new Promise<undefined>((resolve) => {
        const ack = (): void => {
          appended.push(clock.now());
          resolve(undefined);
        };
        if (stalled(clock.now())) answers.push({ at: 5545, ack });
        else if (answerMs(k) > 0) answers.push({ at: clock.now() + answerMs(k), ack });
        else ack();
      });
    };
    const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    // 100/s for 10 s, every release due on its slot.
    let k = 0;
    while (k < 1000 || held.length > 0 || answers.length > 0) {
      held.sort((a, b) => a.at - b.at);
      const next = Math.min(k < 1000 ? 1000 + 10 * k : Infinity, held[0]?.at ?? Infinity);
      const answerAt = Math.min(...answers.map((a) => a.at));
      if (answerAt <= next) {
        clock.set(Math.max(clock.now(), answerAt));
        const due = answers.filter((a) => a.at <= answerAt);
        answers = answers.filter((a) => a.at > answerAt);
        for (const a of reversed ? due.reverse() : due) a.ack();
        await settle();
        continue;
      }
      clock.set(Math.max(clock.now(), next));
      if (k < 1000 && 1000 + 10 * k === next) lanes.due('p', 10, { bytes: 1, send: send(k), evict: () => undefined, slot: 1000 + 10 * k++ });
      else (held.shift() as HeldMessage).release();
      await settle();
    }
    expect(appended).toHaveLength(1000);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
    expect(sent.filter((at) => at >= 5545 && at < 6545).length).toBeLessThan(100); // it did wait after the late run
    // And caught up by the end, but for the catch-up the calm after the stall forgoes (CALM_MS at the rate, not 1.1 ×).
    expect(Math.max(...appended) - (1000 + 10 * 999)).toBeLessThanOrEqual(2 + answerMs(999) + (CALM_MS * (SECOND_SPAN_MS - 1000)) / 1000);
  });
});

describe('when a producer\'s slots come from two limiters (Redis back after the local fallback gave slots of its own)', () => {
  it('keeps its releases one interval apart: the second rule cannot count slots that lie closer', () => {
    const t = setup();
    // 20/s twice over: Redis's slots and the fallback's, 25 ms apart, for 20 s.
    for (let k = 0; k < 800; k += 1) t.lanes.due('p', 50, { ...t.item(String(k)), slot: 1000 + 25 * k });
    while (t.held.length > 0) t.fire();
    const times = at(t.sent);
    expect(times).toHaveLength(800);
    expect(busiestSecond(times)).toBeLessThanOrEqual(21);
  });

  it('keeps to one interval also where the two streams drift apart (some pairs of slots an interval apart or more)', () => {
    const t = setup();
    // Redis's slots every 50 ms, the fallback's every 46 ms: their gaps go from 0 to 50 ms and back.
    const slots = [...Array.from({ length: 300 }, (_, k) => 1000 + 50 * k), ...Array.from({ length: 300 }, (_, k) => 1010 + 46 * k)].sort((a, b) => a - b);
    for (const [k, slot] of slots.entries()) {
      t.clock.set(Math.max(t.clock.now(), slot));
      while (t.held.length > 0 && t.held.sort((a, b) => a.at - b.at)[0].at <= t.clock.now()) t.fire();
      t.lanes.due('p', 50, { ...t.item(String(k)), slot });
    }
    while (t.held.length > 0) t.fire();
    const times = at(t.sent);
    expect(times).toHaveLength(600);
    expect(busiestSecond(times)).toBeLessThanOrEqual(21);
  });
});

describe('when the broker answers every send of a backlogged producer 300 ms late', () => {
  // The answers of the first second are too few to be measured against and count at their
  // arrival (a request held up at a start looks the same): what follows them a second later waits
  // once, by less than those answers took, and the lane is on its slots again within the catch-up.
  it('holds nothing back after its first second of answers: the appends are as spaced as the releases, each on its slot from the fifth second on', async () => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
    const sent: number[] = [];
    const answers: Answer[] = [];
    const send = (): Promise<undefined> => {
      sent.push(clock.now());
      return new Promise<undefined>((resolve) => void answers.push({ at: clock.now() + 300, ack: () => resolve(undefined) }));
    };
    await drive({
      clock, held, answers, count: 500, dueAt: (k) => 1000 + 10 * k,
      onDue: (_, due) => lanes.due('p', 10, { bytes: 1, send, evict: () => undefined, slot: due }),
    });
    expect(sent).toHaveLength(500);
    expect(sent.every((at, i) => at - (1000 + 10 * i) < 300)).toBe(true);
    expect(sent.slice(400).every((at, i) => at - (1000 + 10 * (400 + i)) <= LANE_TOLERANCE_MS)).toBe(true);
  });
});

describe('when the broker answers slowly for two seconds and then quickly again', () => {
  it.each([
    ['', () => false],
    // Producer a sends nothing from 3.9 s to 5.2 s: its lane is forgotten, and the lane made anew
    // sees only slow answers of its own until 6 s.
    [', also for a producer whose lane was forgotten during the slow spell', (producer: string, due: number) => producer === 'a' && due >= 3900 && due < 5200],
  ])('counts the slow answers late against the quickest answer of the last ten seconds%s: no second of appends holds more than 1.1 × the rate + 1', async (_, pauses) => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
    const appended = new Map<string, number[]>([['a', []], ['b', []]]);
    const answers: Answer[] = [];
    const answerMs = (now: number): number => (now >= 4000 && now < 6000 ? 130 : 3);
    const send = (producer: string) => (): Promise<undefined> => new Promise<undefined>((resolve) => {
      const at = clock.now() + answerMs(clock.now());
      answers.push({ at, ack: () => { appended.get(producer)?.push(at); resolve(undefined); } });
    });
    // Two producers at 100/s, 5 ms apart, each message due 1 ms after its slot (timers fire a little late).
    let offered = 0;
    await drive({
      clock, held, answers, count: 1800, dueAt: (n) => 1001 + 5 * n,
      onDue: (k, due) => {
        const producer = k % 2 === 0 ? 'a' : 'b';
        if (pauses(producer, due)) return;
        offered += 1;
        lanes.due(producer, 10, { bytes: 1, send: send(producer), evict: () => undefined, slot: due - 1 });
      },
    });
    expect([...appended.values()].reduce((n, times) => n + times.length, 0)).toBe(offered);
    for (const times of appended.values()) {
      expect(busiestSecond([...times].sort((x, y) => x - y))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
    }
  });
});

/**
 * A producer at 100/s for 5 s, every message due on its slot; each send resolves with the
 * broker's append time (on the broker's clock, `skewMs` from this one), its answer read here
 * `answerMs` after the release. Returns the releases and the appends (on this clock).
 */
const withAppendTimes = async (appendMs: (release: number) => number, answerMs: (k: number) => number, skewMs: number) => {
  const clock = manualClock(1000);
  const held: HeldMessage[] = [];
  const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
  const sent: number[] = [];
  const appended: number[] = [];
  const answers: Answer[] = [];
  const send = (k: number) => (): Promise<LaneAnswer> => {
    const release = clock.now();
    const append = appendMs(release);
    sent.push(release);
    appended.push(append);
    return new Promise<LaneAnswer>((resolve) => void answers.push({ at: Math.max(append, release + answerMs(k)), ack: () => resolve({ appendedAt: append + skewMs }) }));
  };
  await drive({
    clock, held, answers, count: 500, dueAt: (k) => 1000 + 10 * k,
    onDue: (k, due) => lanes.due('p', 10, { bytes: 1, send: send(k), evict: () => undefined, slot: due }),
  });
  return { sent, appended };
};

describe('when the answers carry the broker\'s append time (a downstream topic with LogAppendTime)', () => {
  it('counts each message at its append time: answers read 500 ms late (this process busy) for messages appended on time hold nothing back', async () => {
    // After a first second of prompt answers (the first second counts every answer at its arrival),
    // every fifth answer is read half a second late; every append is 1 ms after its release, on a
    // broker clock 37 ms ahead.
    const { sent } = await withAppendTimes((release) => release + 1, (k) => (k >= 100 && k % 5 === 0 ? 500 : 2), 37);
    expect(sent).toHaveLength(500);
    expect(sent.every((at, i) => at - (1000 + 10 * i) <= LANE_TOLERANCE_MS)).toBe(true);
  });

  it.each([
    ['ahead', 2000],
    ['behind', -2000],
  ])('counts appends that came late (their requests waited) late, with the broker clock %s: no second of appends holds more than 1.1 × the rate + 1', async (_, skewMs) => {
    // Requests released from 2 s to 2.545 s are appended together at 2.545 s.
    const { appended } = await withAppendTimes((release) => (release >= 2000 && release < 2545 ? 2545 : release + 1), () => 2, skewMs);
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });
});

describe('when messages let through at once (conforming) leave late after a stall', () => {
  it.each([
    ['conforming', true, 0],
    ['queued (the second rule counts them)', false, 1],
  ])('%s: what follows a second later leaves on its slot or waits', (_, conforming, delayedAtLeast) => {
    const t = setup();
    const spacing = 0.001; // a rule of 1,000,000/s; the producer sends 50/s
    const slots = Array.from({ length: 200 }, (_, k) => 1000 + 20 * k);
    throughStall(t, spacing, slots, { from: 2000, to: 2300 }, conforming); // a 300 ms stall at 2 s
    const late = at(t.sent).filter((time, k) => slots[k] >= 3400 && time - slots[k] > LANE_TOLERANCE_MS);
    if (delayedAtLeast === 0) expect(late).toEqual([]);
    else expect(late.length).toBeGreaterThanOrEqual(delayedAtLeast);
  });
});

// The bench's accuracy phase with the sidecar stopped 270 ms at a start (2026-12-05): messages let
// through at once when decided waited in their lane behind a catch-up and left 115–125 ms after
// their slots, uncounted; with the releases on their slots after them, a second held 112 at 100/s
// (the full run's 118 had the shape of such a stall).
describe('when messages let through at once (conforming) wait in their lane and leave late', () => {
  it('counts each that leaves later than the second rule lets pass uncounted: no second holds more than 1.1 × the rate + 1', () => {
    const t = setup();
    // A producer at 100/s, every message let through at once; the process stalls 300 ms at 2 s.
    throughStall(t, 10, Array.from({ length: 400 }, (_, k) => 1000 + 10 * k), { from: 2000, to: 2300 }, true);
    expect(t.sent.map((x) => x.split('@')[0])).toEqual(Array.from({ length: 400 }, (_, k) => String(k)));
    expect(busiestSecond(at(t.sent))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });

  it('counts a lane\'s first message that leaves late (nothing before it tells a run from a sparse slot): no second holds more than 1.1 × the rate + 1', () => {
    const t = setup();
    // The process stalls from the start until 1,121: a run of 112 slots from 1,010, every message let through at once.
    throughStall(t, 10, Array.from({ length: 112 }, (_, k) => 1010 + 10 * k), { from: 0, to: 1121 }, true);
    expect(t.sent).toHaveLength(112);
    expect(busiestSecond(at(t.sent))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });

  it('counts none that leaves on its slot, however late its answer: a slow broker holds back nothing under the quota', async () => {
    const told: number[] = [];
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const answers: Answer[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock, onLate: (_p, _s, slot) => void told.push(slot) });
    const sent: number[] = [];
    // A run of slots an interval apart, each let through at once and sent on it, answered 300 ms later.
    const send = (): Promise<undefined> => new Promise((resolve) => {
      sent.push(clock.now());
      answers.push({ at: clock.now() + 300, ack: () => resolve(undefined) });
    });
    await drive({
      clock, held, answers, count: 300, dueAt: (k) => 1000 + 10 * k,
      onDue: (_, due) => lanes.due('p', 10, { bytes: 1, send, evict: () => undefined, slot: due, conforming: true }),
    });
    expect(sent).toEqual(Array.from({ length: 300 }, (_, k) => 1000 + 10 * k));
    expect(told).toEqual([]);
  });
});

describe('when the broker stops answering under a backlog and comes back (an outage)', () => {
  /**
   * A producer at 20/s for 40 s, every message due on its slot; the broker takes nothing from 3 s
   * until `back`: a send made meanwhile is appended when it returns (its request waited), and
   * answered then (with its append time when `appendTimes`).
   */
  const outage = async (back: number, appendTimes: boolean) => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
    const appended: { k: number; at: number }[] = [];
    const answers: Answer[] = [];
    const send = (k: number) => (): Promise<LaneAnswer> => {
      const release = clock.now();
      const at = release >= 3000 && release < back ? back : release + 1;
      return new Promise((resolve) => void answers.push({ at: at + 1, ack: () => { appended.push({ k, at }); resolve({ appendedAt: appendTimes ? at : undefined }); } }));
    };
    await drive({
      clock, held, answers, count: 800, dueAt: (k) => 1000 + 50 * k,
      onDue: (k, due) => lanes.due('p', 50, { bytes: 1, send: send(k), evict: () => undefined, slot: due }),
    });
    return appended;
  };

  it.each([
    ['8 s, answers without append times', 11_000, false],
    ['8 s, answers with append times', 11_000, true],
    ['13 s (longer than the quickest answer is remembered)', 16_000, false],
    ['13 s, answers with append times', 16_000, true],
  ])('releases at most STUCK_MS of sends into it; once it is back no second of appends holds more than 1.1 × the rate + 1, nothing lost, in order (%s)', async (_, back, appendTimes) => {
    const appended = await outage(back, appendTimes);
    expect(appended.map((a) => a.k)).toEqual(Array.from({ length: 800 }, (__, k) => k));
    expect(appended.filter((a) => a.at === back).length).toBeLessThanOrEqual(Math.ceil(STUCK_MS / 50) + 1);
    expect(busiestSecond(appended.map((a) => a.at))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 20 + 1);
    // For CALM_MS after it is back (the outage's own releases aside) it keeps to its rate: no catch-up allowance.
    expect(busiestSecond(appended.map((a) => a.at).filter((t) => t > back && t <= back + CALM_MS))).toBeLessThanOrEqual(20 + 1);
  });
});

describe('when the first request after a start waits (no answer yet to count against)', () => {
  /**
   * A producer at 100/s, every message due on its slot, through a sender with one request in
   * flight: what is released while a request waits goes in the next one, which takes
   * `tookMs(now)`. Returns the append times.
   */
  const start = async (appendTimes: boolean, tookOf: (now: number, request: number) => number, conforming?: boolean) => {
    const clock = manualClock(1000);
    const held: HeldMessage[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
    const { write, appended, answers } = oneRequestInFlight(clock, tookOf);
    const send = (): Promise<LaneAnswer> => write().then((answer) => (appendTimes ? answer : { slow: answer.slow }));
    await drive({
      clock, held, answers, count: 500, dueAt: (k) => 1000 + 10 * k,
      onDue: (_, due) => lanes.due('p', 10, { bytes: 1, send, evict: () => undefined, slot: due, conforming }),
    });
    return appended;
  };

  it.each([['without append times', false], ['with append times', true]])('counts what that request held up against the answers read with it: no second of appends holds more than 1.1 × the rate + 1 (%s)', async (_, appendTimes) => {
    // The first request takes 300 ms (a start: metadata, connections), every later one 2 ms.
    const appended = await start(appendTimes, (_now, request) => (request === 0 ? 300 : 2));
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });

  // The bench's accuracy phase at a start: every request slow for the first 200 ms (56–184 ms),
  // one slower still, then 2–3 ms. Measured against the quickest of those slow answers, what the
  // slower one held up counted on time: 121 in a second at 100/s here, 116 in the bench.
  it.each([['without append times', false], ['with append times', true]])('counts the answers of the first second at their arrival when every request of a start is slow: no second of appends holds more than 1.1 × the rate + 1 (%s)', async (_, appendTimes) => {
    const appended = await start(appendTimes, (now) => (now < 1200 ? 80 : now < 1300 ? 200 : 2));
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });

  // The bench's accuracy phase after a loaded start: a first request of about 400 ms, and the
  // messages released on their slots meanwhile (let through at once: the second rule's span does
  // not count them) appended together when it was answered: 121 at 100/s in the bench, 140 here.
  it.each([['without append times', false], ['with append times', true]])('counts messages let through at once at their answer in the count: what a slow first request held up and what follows it hold at most 1.1 × the rate + 1 in any second (%s)', async (_, appendTimes) => {
    const appended = await start(appendTimes, (_now, request) => (request === 0 ? 400 : 2), true);
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
  });

  // The real broker's first start: a quick first answer (the quickest yet), one slow request,
  // then requests of tens of ms while the broker and the process warm up. The sends of the last
  // 40 ms were not answered yet, but released longer ago than the quickest answer took, so the
  // count took them for answered: 118 at 100/s here, 113–116 on the real broker.
  it.each([['without append times', false], ['with append times', true]])('counts the sends not answered yet as landing with what leaves now, up to the room above the rate: no second of appends holds more than 1.1 × the rate + 1 (%s)', async (_, appendTimes) => {
    const appended = await start(appendTimes, (_now, request) => (request === 0 ? 1 : request === 1 ? 300 : 40), true);
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
    // And it keeps up: the last append within a tenth of a second of the last slot.
    expect(Math.max(...appended) - (1000 + 10 * 499)).toBeLessThanOrEqual(100);
  });

  // A start whose every request took 60 ms for two seconds (none quicker to measure against),
  // then 3 ms: what was counted less 60 ms had landed up to 57 ms later than counted, and the
  // sends after the quicker answers filled that room: 118–119 at 100/s here.
  it.each([
    ['without append times', false, false],
    ['with append times', true, false],
    ['let through at once, with append times', true, true],
  ])('counts what was counted against a slower quickest answer later, once a quicker one comes: no second of appends holds more than 1.1 × the rate + 1 (%s)', async (_, appendTimes, conforming) => {
    const appended = await start(appendTimes, (now, request) => (request === 0 ? 200 : now < 3000 ? 60 : 3), conforming);
    expect(appended).toHaveLength(500);
    expect(busiestSecond([...appended].sort((a, b) => a - b))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 100 + 1);
    expect(Math.max(...appended) - (1000 + 10 * 499)).toBeLessThanOrEqual(100);
  });
});

describe('when messages let through at once (conforming) come due long after their slots (a rebalance held every release back)', () => {
  it('counts them like any late release: no second holds more than 1.1 × the rate + 1', () => {
    const t = setup();
    // A producer at 20/s: 40 messages whose slots lie 8 s back, the first three let through at once when decided.
    t.clock.set(10_000);
    for (let k = 0; k < 40; k += 1) t.lanes.due('p', 50, { ...t.item(String(k)), slot: 2000 + 50 * k, conforming: k < 3 });
    while (t.held.length > 0) t.fire();
    expect(t.sent.map((x) => x.split('@')[0])).toEqual(Array.from({ length: 40 }, (_, k) => String(k)));
    expect(busiestSecond(at(t.sent))).toBeLessThanOrEqual((SECOND_SPAN_MS / 1000) * 20 + 1);
  });
});
