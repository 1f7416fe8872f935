import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/offset-tracker';
import { ownerOf } from '../../../src/flow/flow-item';
import { createGroupConsumer } from '../../../src/flow/group-consumer';
import { noMetrics } from '../../../src/metrics/types';
import { waitFor } from '../../helpers/wait';

/** Just enough of a kafkajs consumer to emit its group events. */
const fakeKafka = () => {
  const emitter = new EventEmitter();
  const events = { GROUP_JOIN: 'group_join', REBALANCING: 'rebalancing', CRASH: 'crash', HEARTBEAT: 'heartbeat', FETCH: 'fetch' };
  const consumer = {
    events,
    on: (event: string, listener: (e: unknown) => void) => emitter.on(event, listener),
    pause: () => undefined,
    resume: () => undefined,
    commitOffsets: jest.fn(async () => undefined),
    seek: jest.fn(),
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async () => undefined,
    stop: async () => undefined,
    disconnect: async () => undefined,
  };
  const calls: string[] = [];
  const committed = new Map<string, { partition: number; offset: string }[]>();
  const admin = {
    connect: async () => void calls.push('admin.connect'),
    fetchOffsets: async ({ topics }: { topics: string[] }) => {
      calls.push(`fetchOffsets ${topics.join(',')}`);
      return topics.map((topic) => ({ topic, partitions: committed.get(topic) ?? [] }));
    },
    disconnect: async () => void calls.push('admin.disconnect'),
    members: 1,
    describeGroups: async () => ({ groups: [{ members: Array.from({ length: admin.members }, (_, i) => ({ memberId: `m${i}` })) }] }),
  };
  consumer.subscribe = async () => void calls.push('subscribe');
  const paused = new Set<string>();
  const each = (what: { topic: string; partitions: number[] }[], act: (key: string) => void): void =>
    what.forEach(({ topic, partitions }) => partitions.forEach((p) => act(`${topic}/${p}`)));
  consumer.pause = ((what: { topic: string; partitions: number[] }[]) => each(what, (key) => paused.add(key))) as never;
  consumer.resume = ((what: { topic: string; partitions: number[] }[]) => each(what, (key) => paused.delete(key))) as never;
  const join = (assignment: Record<string, number[]>): void => void emitter.emit(events.GROUP_JOIN, { payload: { memberAssignment: assignment } });
  return { kafka: { consumer: () => consumer, admin: () => admin } as unknown as Kafka, admin, calls, committed, paused, join, rebalance: () => emitter.emit(events.REBALANCING, {}), consumer, emit: (event: string) => emitter.emit(event, {}) };
};

const build = ({ handoffMs }: { handoffMs?: number } = {}) => {
  const fake = fakeKafka();
  const joins: ((owner: string) => boolean)[] = [];
  const rebalancing = jest.fn(async (_owned: (owner: string) => boolean) => undefined);
  const tracker = createOffsetTracker();
  const group = createGroupConsumer({
    kafka: fake.kafka, groupId: 'g', topics: ['t.5s', 't.1m'], tracker, commitIntervalMs: 200,
    partitionsConsumedConcurrently: 1, clock: manualClock(0), metrics: noMetrics, logger: pino({ level: 'silent' }),
    onRebalancing: rebalancing, onJoin: async (lost) => void joins.push(lost), handoffMs,
  });
  return { ...fake, group, joins, rebalancing, tracker };
};

describe('when the group assigns partitions', () => {
  it('reports as lost only partitions this consumer owned before and not now — never another flow\'s', () => {
    const { join, joins, group } = build();
    join({ 't.5s': [0, 1], 't.1m': [0] });
    expect(group.joined()).toBe(true);
    // First join: nothing was owned before, so nothing is lost (not even another flow's ingress partitions).
    expect([ownerOf('t.5s', 0), ownerOf('ingress', 0)].map(joins[0])).toEqual([false, false]);
    join({ 't.5s': [1] });
    const lost = joins[1];
    expect([ownerOf('t.5s', 0), ownerOf('t.1m', 0), ownerOf('t.5s', 1), ownerOf('ingress', 0)].map(lost)).toEqual([true, true, false, false]);
    expect(group.assignment()).toEqual([{ topic: 't.5s', partitions: [1] }]);
  });
});

describe('when a rebalance starts', () => {
  it('lets the flow hand over what it owns first, then commits the acknowledged prefix (not what is still unsent)', async () => {
    const { join, rebalance, rebalancing, consumer, tracker } = build();
    join({ 't.5s': [0] });
    const offsets = tracker.partition('t.5s', 0);
    const first = offsets.track(10);
    offsets.track(11); // held, not sent
    first();
    let handedOver: string[] = [];
    rebalancing.mockImplementation(async (owned: (owner: string) => boolean) => {
      handedOver = [ownerOf('t.5s', 0), ownerOf('t.5s', 1)].filter(owned);
    });
    rebalance();
    expect(handedOver).toEqual([ownerOf('t.5s', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: 't.5s', partition: 0, offset: '11' }]);
  });
});

describe('how long the consumer has not heard from its group', () => {
  afterEach(() => jest.restoreAllMocks());

  it('counts from the start or the last heartbeat, fetch or join, and is 0 before the start and once stopping', async () => {
    let now = 1_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { group, emit, join, consumer } = build();
    now = 5_000;
    expect(group.silentMs()).toBe(0);
    await group.start(async () => undefined);
    now = 9_000;
    expect(group.silentMs()).toBe(4_000);
    emit(consumer.events.HEARTBEAT);
    now = 9_500;
    expect(group.silentMs()).toBe(500);
    emit(consumer.events.FETCH);
    now = 70_000;
    expect(group.silentMs()).toBe(60_500);
    join({ 't.5s': [0] });
    expect(group.silentMs()).toBe(0);
    now = 71_000;
    await group.stop(now + 1_000);
    now = 500_000;
    expect(group.silentMs()).toBe(0);
  });
});

describe('when partitions gained wait for their previous owner\'s commit (handoffMs)', () => {
  it('reads the group\'s commits once before subscribing; alone in its group, it reads partitions never committed at once', async () => {
    const { group, join, calls, paused } = build({ handoffMs: 300 });
    await group.start(async () => undefined);
    expect(calls).toEqual(['admin.connect', 'fetchOffsets t.5s', 'subscribe']);
    calls.length = 0;
    join({ 't.5s': [0], 't.1m': [1] });
    expect([...paused].sort()).toEqual(['t.1m/1', 't.5s/0']); // until their commits are read
    // never committed (a new group): read at once, without connecting again
    await until(() => paused.size === 0);
    expect(calls).toEqual(['fetchOffsets t.5s', 'fetchOffsets t.1m']);
    await group.stop(Date.now() + 1_000);
    expect(calls).toContain('admin.disconnect');
  });

  it('with another member in the group, a partition never committed waits for the hand-off too (its owner may commit it now)', async () => {
    const { group, join, calls, paused, admin } = build({ handoffMs: 50 });
    admin.members = 2;
    await group.start(async () => undefined);
    calls.length = 0;
    const joinedAt = Date.now();
    join({ 't.5s': [0] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([...paused]).toEqual(['t.5s/0']);
    expect(group.joined()).toBe(false); // not ready while its first assignment waits (/readyz)
    await until(() => paused.size === 0);
    expect(Date.now() - joinedAt).toBeGreaterThanOrEqual(45);
    await until(() => group.joined());
    expect(calls).toEqual(['fetchOffsets t.5s']); // once, after the wait: before it they would decide nothing
    // a later rebalance's hand-off leaves it ready
    join({ 't.5s': [0, 1] });
    expect([...paused]).toEqual(['t.5s/1']);
    expect(group.joined()).toBe(true);
    await group.stop(Date.now() + 1_000);
  });

  it('keeps a committed partition gained paused for the hand-off, reads its commit again, then resumes it', async () => {
    const { group, join, calls, committed, paused, consumer } = build({ handoffMs: 50 });
    committed.set('t.5s', [{ partition: 0, offset: '42' }]);
    await group.start(async () => undefined);
    calls.length = 0;
    const joinedAt = Date.now();
    join({ 't.5s': [0] });
    await until(() => paused.size === 0);
    expect(Date.now() - joinedAt).toBeGreaterThanOrEqual(45);
    expect(calls).toEqual(['fetchOffsets t.5s', 'fetchOffsets t.5s']);
    expect(consumer.seek).toHaveBeenCalledWith({ topic: 't.5s', partition: 0, offset: '42' });
    await group.stop(Date.now() + 1_000);
  });
});

const until = (done: () => boolean): Promise<boolean> => waitFor(done, { timeoutMs: 1_000, intervalMs: 5, message: 'the partitions gained to be resumed' });
