import { EventEmitter } from 'node:events';
import pino from 'pino';
import { createLateBroadcast, lateChannel } from '../../../src/hold/late-broadcast';
import type { OnLate } from '../../../src/hold/release-lanes';

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
      r.listen((...late) => void heard[i].push(late));
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

  it('ignores what is not its message (not JSON, entries of the wrong shape) and keeps the valid entries beside them', async () => {
    const b = bus();
    const heard: Parameters<OnLate>[] = [];
    createLateBroadcast({ publisher: b.publisher, subscriber: b.subscriber(), channel, logger }).listen((...late) => void heard.push(late));
    await tick();
    await b.publisher.publish(channel, 'not json');
    await b.publisher.publish(channel, JSON.stringify({ from: 'other', late: 'no list' }));
    await b.publisher.publish(channel, JSON.stringify({ from: 'other', late: [['p', 10, 1000], ['p', '10', 1000, 1200], [7, 10, 1000, 1200], ['p', 10, 1000, null], ['p', 10, 1000, 1200]] }));
    expect(heard).toEqual([['p', 10, 1000, 1200]]);
  });

  it('subscribes once its connection is ready', async () => {
    const b = bus();
    const subscriber = b.subscriber('connecting');
    createLateBroadcast({ publisher: b.publisher, subscriber, channel, logger }).listen(() => undefined);
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
