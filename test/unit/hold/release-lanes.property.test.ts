import fc from 'fast-check';
import { manualClock } from '../../../src/clock';
import { busiestSecond } from '../../helpers/busiest-second';
import type { HeldMessage } from '../../../src/hold/hold-scheduler';
import { createReleaseLanes } from '../../../src/hold/release-lanes';
import { COUNTED_LATE_MS, SECOND_SPAN_MS } from '../../../src/hold/second-rule';

/**
 * One producer's releases through its lane, on a manual clock, whatever the process does: its
 * slots at least an interval apart (runs an interval apart, looser stretches, holes), each let
 * through at once (`conforming`) or not, each due at once offered first to the fast path
 * (`sendsNow`) or not, the process stalled now and then (what fell due meanwhile comes when the
 * stall ends) and its timers firing late. The fast path is offered what is at most
 * COUNTED_LATE_MS behind its slot, as the dispatcher routes, and what is later only while the lane
 * is far below its rate (`farBelow`: a lone replica's dispatcher sends those uncounted; a lone
 * one of a fetch is the other exception, while its producer is not known to be near its rate,
 * `busy`: the second property). Sends count as they
 * leave (the broker's answers are modelled in release-lanes.test.ts). What leaves keeps to the
 * second rule's aim, 1.1 × the rate + 1 in any second (111 at 100/s; the design's bound for a
 * shaped producer is 1.15 ×, docs/design.md): the span keeps what it counts apart, the count
 * (every send of the lane in the last second) the rest. Before the count, the worst of 20,000
 * runs here was 113, and on 2026-12-05 a CI run found a shape that gave 116 (seed −1969974445,
 * run 314: kept below); with it, 80,000 runs found none above 111.
 */
const INTERVAL = 10; // 100/s
/** 1.1 × the rate + 1. */
const MOST_IN_A_SECOND = SECOND_SPAN_MS / INTERVAL + 1;
/** The design's bound for a shaped producer, 1.15 × the rate (docs/design.md). */
const DESIGN_BOUND = 115;

/** A stretch of messages alike: a run an interval apart or a looser one, after a gap; all let through at once, none, or some. */
const stretch = fc.record({
  gap: fc.oneof(fc.constant(INTERVAL), fc.integer({ min: 100, max: 2500 })),
  length: fc.integer({ min: 1, max: 150 }),
  loose: fc.boolean(),
  conforming: fc.constantFrom('all', 'none', 'some'),
  fastPath: fc.boolean(),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
});
type Stretch = typeof stretch extends fc.Arbitrary<infer T> ? T : never;

type Message = { gap: number; conforming: boolean; fastPath: boolean; lone: boolean };

/** The messages of the stretches: each slot's gap to the previous, whether let through at once, whether offered to the fast path, and (`lone`) if late there, some as a fetch's lone one. */
const messagesOf = (stretches: Stretch[], lone = false): Message[] =>
  stretches.flatMap((s) => Array.from({ length: s.length }, (_, k) => {
    const pick = (s.seed * (k + 7)) % 97; // deterministic per message
    return {
      gap: k === 0 ? s.gap : s.loose ? INTERVAL + (pick % (3 * INTERVAL)) : INTERVAL,
      conforming: s.conforming === 'all' || (s.conforming === 'some' && pick % 2 === 0),
      fastPath: s.fastPath && pick % 3 !== 0,
      lone: lone && pick % 5 < 2,
    };
  }));
const stall = fc.record({ at: fc.integer({ min: 0, max: 6000 }), lengthMs: fc.integer({ min: 1, max: 1500 }) });

const run = (messages: Message[], stalls: { at: number; lengthMs: number }[], timerLateMs: number[]): number[] => {
  const clock = manualClock(1000);
  const held: HeldMessage[] = [];
  const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock });
  const sent: number[] = [];
  /** When the process gets to run at `t` (a stall moves it to the stall's end). */
  const awake = (t: number): number => {
    for (const s of stalls) if (t >= 1000 + s.at && t < 1000 + s.at + s.lengthMs) return 1000 + s.at + s.lengthMs;
    return t;
  };
  let fired = 0;
  const fireUntil = (t: number): void => {
    for (;;) {
      held.sort((a, b) => a.at - b.at);
      if (held.length === 0 || held[0].at > t) return;
      const next = held.shift() as HeldMessage;
      clock.set(Math.max(clock.now(), awake(next.at + timerLateMs[fired++ % timerLateMs.length])));
      next.release();
    }
  };
  let slot = 1000;
  for (const m of messages) {
    slot += m.gap;
    const due = awake(Math.max(slot, clock.now()));
    fireUntil(due);
    clock.set(Math.max(clock.now(), due));
    const send = (): void => void sent.push(clock.now());
    // Offered to the fast path: on time, or later, as a lone replica's dispatcher offers a late
    // message of a producer far below its rate (`farBelow`, uncounted), or a fetch's lone late
    // one of a producer not known to be near its rate (`busy`; the release instant it was decided
    // at, now).
    const late = clock.now() - slot > COUNTED_LATE_MS;
    const fast = m.fastPath && (!late
      ? lanes.sendsNow('p', INTERVAL, slot)
      : m.lone
        ? !lanes.busy('p', INTERVAL) && lanes.sendsNow('p', INTERVAL, clock.now())
        : lanes.farBelow('p', INTERVAL, 1) && lanes.sendsNow('p', INTERVAL, slot, true));
    if (fast) send();
    else lanes.due('p', INTERVAL, { bytes: 1, slot, conforming: m.conforming, send, evict: () => undefined });
  }
  fireUntil(Infinity);
  return sent;
};

describe('a producer\'s lane, whatever its slots, flags, stalls and late timers', () => {
  const shapes = (lone: boolean, most: number): void => fc.assert(
    fc.property(
      fc.array(stretch, { minLength: 1, maxLength: 8 }),
      fc.array(stall, { maxLength: 4 }),
      fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 8 }),
      (stretches, stalls, timerLateMs) => {
        const messages = messagesOf(stretches, lone);
        const sent = run(messages, stalls, timerLateMs);
        expect(sent).toHaveLength(messages.length);
        expect(busiestSecond([...sent].sort((a, b) => a - b))).toBeLessThanOrEqual(most);
      },
    ),
    { numRuns: 1000 },
  );

  it('sends every message, and never more than 1.1 × the rate + 1 in any second', () => shapes(false, MOST_IN_A_SECOND), 60_000);

  // A fetch's lone late message of a producer not known to be near its rate leaves at once,
  // without a lane (a flood of new ids makes none), as one decided now: a lane made after it
  // within the second does not know of it, and its catch-up can bring the second one or two past
  // the second rule's aim. 20,000 runs (2026-12-06): 113 at worst; 114 when every lone one left at
  // once, as before `busy`.
  it('with a fetch\'s lone late messages among them, never more than the design\'s 1.15 × the rate', () => shapes(true, DESIGN_BOUND), 60_000);

  // The shape a CI run found (2026-12-05): messages let through at once, their timers 70–135 ms
  // late after a 446 ms stall, left in bursts the span does not count, and a run of slots an
  // interval apart followed: 116 in one second at 100/s before the count.
  const foundByCi = (): number[] => run(messagesOf([
    { gap: 100, length: 143, loose: true, conforming: 'all', fastPath: false, seed: 910216 },
    { gap: 10, length: 110, loose: false, conforming: 'all', fastPath: false, seed: 0 },
    { gap: 10, length: 1, loose: false, conforming: 'all', fastPath: false, seed: 0 },
  ]), [{ at: 0, lengthMs: 446 }], [71, 113, 74, 135, 38, 64]);

  it('sends every message of the shape CI found', () => {
    expect(foundByCi()).toHaveLength(254);
  });

  it('keeps to 1.1 × the rate + 1 in the shape CI found (116 before the second rule counted every send)', () => {
    expect(busiestSecond(foundByCi().sort((a, b) => a - b))).toBeLessThanOrEqual(MOST_IN_A_SECOND);
  });
});
