import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createDispatcher } from '../../../src/consume/dispatch';
import type { Inbound } from '../../../src/consume/inbound';
import { SluiceError } from '../../../src/errors';
import { HeldMessage } from '../../../src/hold/hold-scheduler';
import { noMetrics } from '../../../src/metrics/types';
import type { MessageWriter } from '../../../src/produce/message-writer';
import { Tier } from '../../../src/park/tiers';

const tier: Tier = { topic: 'r.5s', delayMs: 5000, label: '5s' };
const inbound = (offset: string, producer = 'p'): Inbound => ({
  content: { key: 'k', value: `v${offset}`, headers: { a: '1' } }, producer, timestamp: '123', firstSeen: 1000,
  topic: 'in', partition: 0, offset, size: 3, forged: 0,
});

const setup = (writer: Partial<MessageWriter>) => {
  const clock = manualClock(1000);
  const held: HeldMessage[] = [];
  const tracked = { open: 0 };
  const hold = {
    add: (m: HeldMessage) => held.push(m),
    track: () => {
      tracked.open += 1;
      return () => void (tracked.open -= 1);
    },
  } as never;
  const stuck: string[] = [];
  const full: MessageWriter = {
    forward: async () => undefined, park: async () => tier, deadLetter: async () => undefined, ...writer,
  };
  const dispatcher = createDispatcher({
    hold, writer: full, clock, metrics: noMetrics, logger: pino({ level: 'silent' }), onStuck: (m) => stuck.push(m.offset),
  });
  return { clock, held, stuck, dispatcher, tracked };
};

const settle = () => new Promise((r) => setImmediate(r));

describe('when a message is admitted within hold.maxMs', () => {
  it('holds it and forwards it with its timestamp and waited time on release, then acknowledges', async () => {
    const forwarded: unknown[] = [];
    const { clock, held, dispatcher } = setup({ forward: async (c, o) => void forwarded.push([c.value, o]) });
    let acked = false;
    dispatcher.dispatch(inbound('5'), { kind: 'forward', at: 1200 }, () => (acked = true));
    expect(held.map((h) => h.at)).toEqual([1200]);
    clock.set(1200);
    held[0].release();
    await settle();
    expect(forwarded).toEqual([['v5', { timestamp: '123', waitedMs: 200 }]]);
    expect(acked).toBe(true);
  });

  it('spaces releases that come late, catching up at most half an interval', () => {
    const { clock, held, dispatcher } = setup({});
    dispatcher.dispatch(inbound('1'), { kind: 'forward', at: 1010, spacingMs: 50 }, () => undefined);
    dispatcher.dispatch(inbound('2'), { kind: 'forward', at: 1060, spacingMs: 50 }, () => undefined);
    clock.set(1300);
    held[0].release();
    held[1].release();
    // The second is due but leaves half an interval after the first actually left (the lane trails by at most T/2).
    expect(held.slice(2).map((h) => h.at)).toEqual([1325]);
  });
});

describe('when a message is due now', () => {
  it('forwards it at once, counted against the hold caps until acknowledged', async () => {
    let release: () => void = () => undefined;
    const forwarded: string[] = [];
    const { held, dispatcher, tracked } = setup({ forward: (c) => (forwarded.push(String(c.value)), new Promise<void>((r) => (release = r))) });
    let acked = false;
    dispatcher.dispatch(inbound('1'), { kind: 'forward', at: 1000 }, () => (acked = true));
    expect(held).toEqual([]);
    expect(forwarded).toEqual(['v1']);
    expect(tracked.open).toBe(1);
    release();
    await settle();
    expect(acked).toBe(true);
    expect(tracked.open).toBe(0);
  });

  it('holds it behind an earlier message of its producer still held, so it never overtakes it', async () => {
    const forwarded: string[] = [];
    const { clock, held, dispatcher } = setup({ forward: async (c) => void forwarded.push(String(c.value)) });
    dispatcher.dispatch(inbound('1'), { kind: 'forward', at: 1100 }, () => undefined);
    clock.set(1200);
    dispatcher.dispatch(inbound('2'), { kind: 'forward', at: 1150 }, () => undefined);
    dispatcher.dispatch(inbound('3', 'other'), { kind: 'forward', at: 1150 }, () => undefined);
    expect(forwarded).toEqual(['v3']);
    held[0].release();
    held[1].release();
    expect(forwarded).toEqual(['v3', 'v1', 'v2']);
  });
});

describe('when a message is parked', () => {
  it('writes it to a tier with attempt 1, its origin and reason, then acknowledges', async () => {
    const parked: unknown[] = [];
    const { dispatcher } = setup({ park: async (_c, info) => (parked.push(info), tier) });
    let acked = false;
    dispatcher.dispatch(inbound('9'), { kind: 'park', reason: { kind: 'overflow', limit: 'rate' }, notBefore: 9000 }, () => (acked = true));
    await settle();
    expect(parked).toEqual([{
      producer: 'p', attempt: 1, notBefore: 9000, firstSeen: 1000, timestamp: '123',
      origin: { topic: 'in', partition: 0, offset: '9' }, reason: { kind: 'overflow', limit: 'rate' },
    }]);
    expect(acked).toBe(true);
  });
});

describe('when the broker refuses a message as too large', () => {
  const tooLarge = async () => { throw new SluiceError('MESSAGE_TOO_LARGE', 'too large'); };

  it('dead-letters it as too-large and acknowledges', async () => {
    const dead: string[] = [];
    const { dispatcher } = setup({ park: tooLarge, deadLetter: async (_c, _i, reason) => void dead.push(reason) });
    let acked = false;
    dispatcher.dispatch(inbound('3'), { kind: 'park', reason: { kind: 'delayed' }, notBefore: 9000 }, () => (acked = true));
    await settle(); await settle();
    expect(dead).toEqual(['too-large']);
    expect(acked).toBe(true);
  });

  it('stops its partition, never acknowledging, when even the dead-letter topic refuses it', async () => {
    const { dispatcher, stuck } = setup({ park: tooLarge, deadLetter: tooLarge });
    let acked = false;
    dispatcher.dispatch(inbound('4'), { kind: 'park', reason: { kind: 'delayed' }, notBefore: 9000 }, () => (acked = true));
    await settle(); await settle();
    expect(stuck).toEqual(['4']);
    expect(acked).toBe(false);
  });
});
