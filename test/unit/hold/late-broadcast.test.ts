import { EventEmitter } from 'node:events';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import type { HeldMessage } from '../../../src/hold/hold-scheduler';
import { createLateBroadcast, lateChannel } from '../../../src/hold/late-broadcast';
import { CLOCK_SKEW_MS, MAX_ENTRIES, MAX_MESSAGE_CHARS, MAX_SPACING_MS, SENT_PAST_MS, SLOT_PAST_MS, SLOT_PAST_SPACINGS } from '../../../src/hold/late-message';
import { createReleaseLanes, type OnLate } from '../../../src/hold/release-lanes';
import { MAX_ID_LENGTH } from '../../../src/headers/header-list';
import type { LateIgnoredReason } from '../../../src/metrics/types';

/** One channel in memory: every subscriber hears every publish, its own included (as Redis does). */
const bus = () => {
  const subscribers: (EventEmitter & { status: string; subscribed: string[]; disconnected: boolean })[] = [];
  const published: string[] = [];
  const publisher = {
    publish: async (channel: string, message: string) => {
      published.push(message);
      for (const s of subscribers) if (s.subscribed.includes(channel)) s.emit('message', channel, message);
      return 1;
    },
  };
  const subscriber = (status = 'ready') => {
    const s = Object.assign(new EventEmitter(), {
      status, subscribed: [] as string[], disconnected: false,
      subscribe: async (channel: string) => void s.subscribed.push(channel),
      disconnect: () => void (s.disconnected = true),
    });
    subscribers.push(s);
    return s;
  };
  return { publisher, subscriber, published };
};

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const logger = pino({ level: 'silent' });
const channel = lateChannel('sluice:');

describe('late-broadcast', () => {
  it('hands what one replica counted late to the others, not back to itself, in one message per tick', async () => {
    const b = bus();
    const heard: Parameters<OnLate>[][] = [[], []];
    const replicas = [0, 1].map((i) => {
      const r = createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger });
      r.listen((...late) => void heard[i].push(late), { clock: manualClock(2200) });
      return r;
    });
    await tick();
    replicas[0].publish('p', 10, 1000, 1200);
    replicas[0].publish('q', 50, 2000, 2150);
    await tick();
    expect(b.published).toHaveLength(1);
    expect(heard[1]).toEqual([['p', 10, 1000, 1200], ['q', 50, 2000, 2150]]);
    expect(heard[0]).toEqual([]);
  });

  it('does not parse what it published itself when it hears it back', async () => {
    const b = bus();
    const heard: Parameters<OnLate>[] = [];
    const r = createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger });
    r.listen((...late) => void heard.push(late), { clock: manualClock(2200) });
    await tick();
    const parse = jest.spyOn(JSON, 'parse');
    try {
      r.publish('p', 10, 1000, 1200);
      await tick();
      expect(b.published).toHaveLength(1);
      expect(parse).not.toHaveBeenCalled();
      await b.publisher.publish(channel, b.published[0].replace(/^\{"from":"[^"]*"/, '{"from":"other"'));
      expect(parse).toHaveBeenCalledTimes(1);
      expect(heard).toEqual([['p', 10, 1000, 1200]]);
    } finally {
      parse.mockRestore();
    }
  });

  it('ignores what is not its message (not JSON, entries of the wrong shape) and keeps the valid entries beside them', async () => {
    const b = bus();
    const heard: Parameters<OnLate>[] = [];
    createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger }).listen((...late) => void heard.push(late), { clock: manualClock(1200) });
    await tick();
    await b.publisher.publish(channel, 'not json');
    await b.publisher.publish(channel, JSON.stringify({ from: 'other', late: 'no list' }));
    await b.publisher.publish(channel, JSON.stringify({ from: 'other', late: [['p', 10, 1000], ['p', '10', 1000, 1200], [7, 10, 1000, 1200], ['p', 10, 1000, null], ['p', 10, 1000, 1200]] }));
    expect(heard).toEqual([['p', 10, 1000, 1200]]);
  });

  it('subscribes once its connection is ready', async () => {
    const b = bus();
    const subscriber = b.subscriber('connecting');
    createLateBroadcast({ publisher: b.publisher, subscriber, channel, logger }).listen(() => undefined, { clock: manualClock() });
    expect(subscriber.subscribed).toEqual([]);
    subscriber.status = 'ready';
    subscriber.emit('ready');
    await tick();
    expect(subscriber.subscribed).toEqual([channel]);
  });

  it('drops what Redis does not take (the lanes then bound each replica alone) and publishes nothing once closed', async () => {
    const b = bus();
    const failing = { publish: jest.fn(async () => { throw new Error('Connection is closed.'); }) };
    const subscriber = b.subscriber();
    const r = createLateBroadcast({ publisher: failing, subscriber, channel, logger });
    r.publish('p', 10, 1000, 1200);
    await tick();
    await tick();
    expect(failing.publish).toHaveBeenCalledTimes(1);
    r.publish('p', 10, 1010, 1210);
    r.close();
    await tick();
    expect(failing.publish).toHaveBeenCalledTimes(1);
    expect(subscriber.disconnected).toBe(true);
  });
});

describe('what another replica tells, checked against the store\'s clock before it is believed', () => {
  const NOW = 10_000_000;
  const listening = () => {
    const b = bus();
    const clock = manualClock(NOW);
    const heard: Parameters<OnLate>[] = [];
    const ignored: [LateIgnoredReason, number][] = [];
    const metrics = { lateReleasesIgnored: (reason: LateIgnoredReason, count: number) => void ignored.push([reason, count]) };
    createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger }).listen((...late) => void heard.push(late), { clock, metrics });
    const tell = async (...late: unknown[]) => b.publisher.publish(channel, JSON.stringify({ from: 'other', late }));
    return { b, clock, heard, ignored, tell };
  };
  /** A late release as a replica tells it: slot 500 ms ago, counted 100 ms ago. */
  const entry = (change: Partial<{ producer: string; spacingMs: number; slot: number; sent: number }> = {}): Parameters<OnLate> => {
    const { producer = 'p', spacingMs = 10, slot = NOW - 500, sent = NOW - 100 } = change;
    return [producer, spacingMs, slot, sent];
  };

  it.each<[string, Parameters<OnLate>, Parameters<OnLate>, LateIgnoredReason]>([
    ['a producer id no longer than ids are cut to', entry({ producer: 'x'.repeat(MAX_ID_LENGTH) }), entry({ producer: 'x'.repeat(MAX_ID_LENGTH + 1) }), 'producer'],
    ['an interval of at most a day', entry({ spacingMs: MAX_SPACING_MS }), entry({ spacingMs: MAX_SPACING_MS + 1 }), 'spacing'],
    ['an interval above 0', entry({ spacingMs: 0.5 }), entry({ spacingMs: 0 }), 'spacing'],
    ['a send instant at most CLOCK_SKEW_MS ahead', entry({ sent: NOW + CLOCK_SKEW_MS }), entry({ sent: NOW + CLOCK_SKEW_MS + 1 }), 'sent'],
    ['a send instant at most SENT_PAST_MS behind', entry({ sent: NOW - SENT_PAST_MS, slot: NOW - SENT_PAST_MS - 500 }), entry({ sent: NOW - SENT_PAST_MS - 1, slot: NOW - SENT_PAST_MS - 500 }), 'sent'],
    ['a slot not after its send instant', entry({ slot: NOW - 100 }), entry({ slot: NOW - 99 }), 'slot'],
    ['a slot at most SLOT_PAST_MS behind', entry({ slot: NOW - SLOT_PAST_MS }), entry({ slot: NOW - SLOT_PAST_MS - 1 }), 'slot'],
    ['a slot at most SLOT_PAST_SPACINGS intervals behind (a slow rule)', entry({ spacingMs: 3_600_000, slot: NOW - SLOT_PAST_SPACINGS * 3_600_000 }), entry({ spacingMs: 3_600_000, slot: NOW - SLOT_PAST_SPACINGS * 3_600_000 - 1 }), 'slot'],
  ])('believes %s, and ignores and counts one just past it', async (_, inside, outside, reason) => {
    const l = listening();
    await l.tell(inside, outside, outside);
    expect(l.heard).toEqual([inside]);
    expect(l.ignored).toEqual([[reason, 2]]);
  });

  it('reads a message up to MAX_MESSAGE_CHARS and ignores a longer one before parsing it', async () => {
    const l = listening();
    const message = JSON.stringify({ from: 'other', late: [entry()] });
    await l.b.publisher.publish(channel, message.padEnd(MAX_MESSAGE_CHARS, ' '));
    expect(l.heard).toEqual([entry()]);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      await l.b.publisher.publish(channel, message.padEnd(MAX_MESSAGE_CHARS + 1, ' '));
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(l.heard).toHaveLength(1);
    expect(l.ignored).toEqual([['size', 1]]);
  });

  it('reads MAX_ENTRIES entries of a message and ignores a message with more', async () => {
    const l = listening();
    await l.tell(...Array.from({ length: MAX_ENTRIES }, () => entry()));
    expect(l.heard).toHaveLength(MAX_ENTRIES);
    await l.tell(...Array.from({ length: MAX_ENTRIES + 1 }, () => entry()));
    expect(l.heard).toHaveLength(MAX_ENTRIES);
    expect(l.ignored).toEqual([['entries', 1]]);
  });

  it('ignores and counts JSON that is no message (null, a number, a list), without throwing', async () => {
    const l = listening();
    for (const raw of ['null', '5', '"late"', '[]', '{"from":"other"}', 'not json']) await l.b.publisher.publish(channel, raw);
    await l.tell(['p', '10', NOW - 500, NOW - 100]);
    expect(l.heard).toEqual([]);
    expect(l.ignored).toEqual([['json', 1], ['json', 1], ['json', 1], ['json', 1], ['json', 1], ['json', 1], ['shape', 1]]);
  });

  it('checks against the clock it is given (the store\'s), not the pod\'s', async () => {
    const l = listening();
    l.clock.set(NOW + 3_600_000); // the store's clock an hour ahead of these instants
    await l.tell(entry());
    expect(l.heard).toEqual([]);
    expect(l.ignored).toEqual([['sent', 1]]);
  });

  it('no longer lets a send instant a year ahead hold a producer\'s lane', async () => {
    const l = listening();
    const held: HeldMessage[] = [];
    const sent: number[] = [];
    const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock: l.clock });
    createLateBroadcast({ publisher: l.b.publisher, subscriber: l.b.subscriber(), channel, logger }).listen(lanes.lateElsewhere, { clock: l.clock });
    await l.tell(entry({ slot: NOW - 2000, sent: NOW + 365 * 86_400_000 }));
    lanes.due('p', 10, { bytes: 1, slot: NOW, send: () => void sent.push(l.clock.now()), evict: () => undefined });
    expect(sent).toEqual([NOW]);
    expect(held).toEqual([]);
  });

  it('paces a lane by this replica\'s own interval, not by the one told (a day apart, within bounds)', async () => {
    const run = async (spacingOf?: (producer: string) => number): Promise<number[]> => {
      const l = listening();
      const held: HeldMessage[] = [];
      const lanes = createReleaseLanes({ hold: { add: (m: HeldMessage) => void held.push(m) } as never, clock: l.clock });
      createLateBroadcast({ publisher: l.b.publisher, subscriber: l.b.subscriber(), channel, logger }).listen(lanes.lateElsewhere, { clock: l.clock, spacingOf });
      const item = () => ({ bytes: 1, slot: NOW, send: () => undefined, evict: () => undefined });
      lanes.due('p', 10, item());
      lanes.due('p', 10, item()); // waits one interval behind the first, armed in the hold
      await l.tell(entry({ spacingMs: MAX_SPACING_MS }));
      const next = held.shift() as HeldMessage;
      l.clock.set(next.at);
      next.release();
      return held.map((h) => h.at - NOW); // what is still armed, and for when
    };
    expect(await run((producer) => (producer === 'p' ? 10 : 0))).toEqual([]);
    expect(await run()).toEqual([MAX_SPACING_MS]); // the interval told would have held it a day
  });
});

describe('what one tick counts late, told in bounded messages', () => {
  it('splits many entries with long ids into messages within MAX_MESSAGE_CHARS and MAX_ENTRIES, and all are heard', async () => {
    const b = bus();
    const now = 10_000_000;
    const heard: Parameters<OnLate>[] = [];
    const teller = createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger });
    createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger }).listen((...late) => void heard.push(late), { clock: manualClock(now) });
    await tick();
    const told: Parameters<OnLate>[] = [
      ...Array.from({ length: 1500 }, (_, i): Parameters<OnLate> => [`short-${i}`, 10, now - 500, now - 100]),
      ...Array.from({ length: 300 }, (_, i): Parameters<OnLate> => [`${'\u0001'.repeat(MAX_ID_LENGTH - 4)}${String(i).padStart(4, '0')}`, 10, now - 500, now - 100]),
    ];
    for (const late of told) teller.publish(...late);
    await tick();
    expect(b.published.length).toBeGreaterThan(2);
    for (const message of b.published) {
      expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      expect((JSON.parse(message) as { late: unknown[] }).late.length).toBeLessThanOrEqual(MAX_ENTRIES);
    }
    expect(heard).toEqual(told);
  });
});
