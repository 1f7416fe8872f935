import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createLateBroadcast, lateChannel, type LateBroadcast } from '../../../src/hold/late-broadcast';
import type { OnLate } from '../../../src/hold/release-lanes';
import { createRedisClient } from '../../../src/limit/redis-client';
import { randomKeyPrefix, redisClusterNodes, redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';

// the integration project's testTimeout is not applied per project: set it here
jest.setTimeout(60_000);

const logger = pino({ level: 'silent' });

describe.each([
  ['Redis', () => createRedisClient({ url: redisUrl(), timeoutMs: 2000 })],
  ['Redis Cluster', () => createRedisClient({ clusterNodes: redisClusterNodes(), timeoutMs: 2000 })],
])('late releases told between two replicas through %s', (_, client) => {
  const clients: ReturnType<typeof createRedisClient>[] = [];
  const broadcasts: LateBroadcast[] = [];
  afterEach(() => {
    for (const b of broadcasts.splice(0)) b.close();
    for (const c of clients.splice(0)) c.disconnect();
  });

  const replica = (channel: string, heard: Parameters<OnLate>[]) => {
    const publisher = client();
    const subscriber = client();
    clients.push(publisher, subscriber);
    const b = createLateBroadcast({ publisher, subscriber, channel, logger });
    b.listen((...late) => void heard.push(late), { clock: manualClock(5000) }); // the instants told below are recent
    broadcasts.push(b);
    return b;
  };

  it('reaches the other replica (and not the one that told it) within a moment', async () => {
    const channel = lateChannel(randomKeyPrefix());
    const heardA: Parameters<OnLate>[] = [];
    const heardB: Parameters<OnLate>[] = [];
    const a = replica(channel, heardA);
    replica(channel, heardB);
    // Subscribing takes a round trip: tell until it is heard (what is told before is lost, as designed).
    let slot = 1000;
    await waitFor(() => {
      a.publish('p', 10, (slot += 10), 5000);
      return heardB.length > 0;
    }, { timeoutMs: 10_000, intervalMs: 50, message: 'a late release heard by the other replica' });
    expect(heardB[0]).toEqual(['p', 10, expect.any(Number), 5000]);
    expect(heardA).toEqual([]);
  });

  it('survives what any client publishes on the channel (null, a send instant a year ahead) and hears what follows', async () => {
    const channel = lateChannel(randomKeyPrefix());
    const heard: Parameters<OnLate>[] = [];
    replica(channel, heard);
    const stranger = client();
    clients.push(stranger);
    let slot = 1000;
    await waitFor(async () => {
      await stranger.publish(channel, 'null');
      await stranger.publish(channel, JSON.stringify({ from: 'stranger', late: [['p', 10, 4000, 5000 + 365 * 86_400_000]] }));
      await stranger.publish(channel, JSON.stringify({ from: 'stranger', late: [['p', 10, (slot += 10), 5000]] }));
      return heard.length > 0;
    }, { timeoutMs: 10_000, intervalMs: 50, message: 'a late release heard after the ones ignored' });
    expect(heard.every(([, , , sent]) => sent === 5000)).toBe(true);
  });
});
