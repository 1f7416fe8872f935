import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/committer';
import { ownerOf } from '../../../src/flow/flow-item';
import { createGroupConsumer, type GroupConsumerOptions } from '../../../src/flow/group-consumer';
import type { FenceStore } from '../../../src/flow/handoff-fence';
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
    commitOffsets: jest.fn(async (_points: unknown): Promise<void> => undefined),
    seek: jest.fn(),
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: jest.fn(async (): Promise<void> => undefined),
    stop: async () => undefined,
    disconnect: jest.fn(async () => undefined),
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
  const join = (assignment: Record<string, number[]>, memberId = 'm0'): void => void emitter.emit(events.GROUP_JOIN, { payload: { memberAssignment: assignment, memberId } });
  return { kafka: { consumer: () => consumer, admin: () => admin } as unknown as Kafka, admin, calls, committed, paused, join, rebalance: () => emitter.emit(events.REBALANCING, {}), consumer, emit: (event: string) => emitter.emit(event, {}),
    crash: (restart: boolean) => emitter.emit(events.CRASH, { payload: { restart, error: new Error('Failed to find group coordinator') } }) };
};

const build = ({ handoffMs, ...more }: { handoffMs?: number } & Partial<GroupConsumerOptions> = {}) => {
  const fake = fakeKafka();
  const joins: ((owner: string) => boolean)[] = [];
  const rebalancing = jest.fn(async (_owned: (owner: string) => boolean) => undefined);
  const tracker = createOffsetTracker();
  const group = createGroupConsumer({
    kafka: fake.kafka, groupId: 'g', topics: ['t.5s', 't.1m'], tracker, commitIntervalMs: 200,
    partitionsConsumedConcurrently: 1, clock: manualClock(0), metrics: noMetrics, logger: pino({ level: 'silent' }),
    onRebalancing: rebalancing, onJoin: async (lost) => void joins.push(lost), handoffMs, ...more,
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

describe('when a commit is refused as of a past generation (the group went on without this member)', () => {
  const refused = (type: string) => Object.assign(new Error(`refused: ${type}`), { type });
  /** Joined with t.5s/0, and one message of it acknowledged: the next commit has something to send. */
  const acknowledged = (g: ReturnType<typeof build>, offset: number): void => g.tracker.partition('t.5s', 0).track(offset)();

  it('holds forwards back at once, as at REBALANCING, and once only until the next join', async () => {
    const g = build();
    g.join({ 't.5s': [0] });
    for (const [offset, type] of [[10, 'ILLEGAL_GENERATION'], [11, 'UNKNOWN_MEMBER_ID']] as const) {
      g.consumer.commitOffsets.mockRejectedValueOnce(refused(type));
      acknowledged(g, offset);
      await g.group.commitNow();
    }
    expect(g.rebalancing).toHaveBeenCalledTimes(1);
    const owned = g.rebalancing.mock.calls[0][0];
    expect([ownerOf('t.5s', 0), ownerOf('t.5s', 1)].map(owned)).toEqual([true, false]);
    g.join({ 't.5s': [0] });
    g.consumer.commitOffsets.mockRejectedValueOnce(refused('UNKNOWN_MEMBER_ID'));
    acknowledged(g, 12);
    await g.group.commitNow();
    expect(g.rebalancing).toHaveBeenCalledTimes(2);
  });

  it('does nothing for a refusal answered after a join (a commit of the generation before), nor for a rebalance under way or a coordinator moved', async () => {
    const g = build();
    g.join({ 't.5s': [0] });
    let refuse: (error: Error) => void = () => undefined;
    g.consumer.commitOffsets.mockImplementationOnce(() => new Promise<void>((_, reject) => (refuse = reject)));
    acknowledged(g, 10);
    const committing = g.group.commitNow();
    await new Promise((resolve) => setImmediate(resolve));
    g.join({ 't.5s': [0] });
    refuse(refused('ILLEGAL_GENERATION'));
    await committing;
    for (const [offset, type] of [[11, 'REBALANCE_IN_PROGRESS'], [12, 'NOT_COORDINATOR']] as const) {
      g.consumer.commitOffsets.mockRejectedValueOnce(refused(type));
      acknowledged(g, offset);
      await g.group.commitNow();
    }
    expect(g.consumer.commitOffsets.mock.calls.length).toBeGreaterThanOrEqual(3); // the join commits too
    expect(g.rebalancing).not.toHaveBeenCalled();
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
    // alone in its group (a new group): read at once, without connecting again or reading commits
    await until(() => paused.size === 0);
    expect(calls).toEqual([]);
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
    const { group, join, calls, committed, paused, consumer, admin } = build({ handoffMs: 50 });
    admin.members = 2;
    committed.set('t.5s', [{ partition: 0, offset: '42' }]);
    await group.start(async () => undefined);
    calls.length = 0;
    const joinedAt = Date.now();
    join({ 't.5s': [0] });
    await until(() => paused.size === 0);
    expect(Date.now() - joinedAt).toBeGreaterThanOrEqual(45);
    expect(calls).toEqual(['fetchOffsets t.5s']); // once, after the wait
    expect(consumer.seek).toHaveBeenCalledWith({ topic: 't.5s', partition: 0, offset: '42' });
    await group.stop(Date.now() + 1_000);
  });
});

/** Fences in memory, shared by the consumers of a test (what Redis keeps). */
const memoryFences = (): FenceStore & { values: Map<string, string> } => {
  const values = new Map<string, string>();
  return {
    values,
    claim: async (key, instance, value) => {
      const v = values.get(key);
      if (v !== undefined && !v.startsWith(`${instance}:`)) return false;
      values.set(key, value);
      return true;
    },
    release: async (key, instance) => {
      if (values.get(key)?.startsWith(`${instance}:`)) values.delete(key);
    },
  };
};

/**
 * Two members sharing fences, started, each joined with its first partitions of t.5s: `a` (which
 * runs `onJoin` at its joins) and `b` (which counts its expired waits in `expired`); what `a`
 * commits is what `b` reads.
 */
const sharingFences = async (handoffMs: number, first: { a: number[]; b: number[] }, onJoin?: () => Promise<void>) => {
  const store = memoryFences();
  const fences = { store, keyPrefix: 'p:' };
  const expired = jest.fn();
  const a = build({ handoffMs, fences, ...(onJoin ? { onJoin } : {}) });
  const b = build({ handoffMs, fences, metrics: { ...noMetrics, handoffWaitExpired: expired } });
  for (const c of [a, b]) c.admin.members = 2;
  await a.group.start(async () => undefined);
  await b.group.start(async () => undefined);
  a.join({ 't.5s': first.a }, 'a1');
  if (first.b.length > 0) b.join({ 't.5s': first.b }, 'b1');
  await until(() => a.paused.size === 0 && b.paused.size === 0);
  a.consumer.commitOffsets.mockImplementation(async (points: unknown) => {
    for (const x of points as { topic: string; partition: number; offset: string }[]) b.committed.set(x.topic, [{ partition: x.partition, offset: x.offset }]);
  });
  return { store, a, b, expired };
};

describe('when a partition moves to another member (hand-off fences, issue 28)', () => {
  it('the new owner starts it only once the old owner released it after its final commit, from that commit, however slow the old owner is', async () => {
    let park = async (): Promise<void> => undefined;
    const { store, a: oldOwner, b: newOwner } = await sharingFences(3_000, { a: [0, 1], b: [] }, () => park());
    expect([...store.values.keys()].sort()).toEqual(['p:handoff:{g}:t.5s:0', 'p:handoff:{g}:t.5s:1']);
    // The old owner has acknowledged offsets 10-11 of t.5s/1 and holds 12, which it parks at the
    // join — slowly: 600 ms (a stopped process, a slow broker), far beyond the old fixed 300 ms.
    const offsets = oldOwner.tracker.partition('t.5s', 1);
    offsets.track(10)();
    offsets.track(11)();
    const held = offsets.track(12);
    park = () => new Promise<void>((resolve) => setTimeout(() => {
      held();
      resolve();
    }, 600));
    await oldOwner.group.commitNow();
    expect(newOwner.committed.get('t.5s')).toEqual([{ partition: 1, offset: '12' }]);
    const startedAt = Date.now();
    newOwner.join({ 't.5s': [1] }, 'b');
    oldOwner.join({ 't.5s': [0] }, 'a');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(newOwner.paused.has('t.5s/1')).toBe(true); // not before the release
    await waitFor(() => !newOwner.paused.has('t.5s/1'), { timeoutMs: 3_000, intervalMs: 5, message: 'the partition to start' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(590);
    expect(Date.now() - startedAt).toBeLessThan(2_000); // by the release, not the bound
    expect(newOwner.consumer.seek).toHaveBeenLastCalledWith({ topic: 't.5s', partition: 1, offset: '13' });
    expect(store.values.get('p:handoff:{g}:t.5s:1')).toMatch(/:b$/);
    await Promise.all([oldOwner.group.stop(Date.now() + 1_000), newOwner.group.stop(Date.now() + 1_000)]);
    expect(store.values.size).toBe(0); // a graceful stop releases what it owned
  });
});

describe('when the old owner was frozen at its join (rebalance-stopped-owner)', () => {
  it('releases a partition lost only once what it took from it is acknowledged and committed, though its wait for the writes ended first', async () => {
    // The flow's wait for its writes (src/flow/flow.ts) races a 2 s timer, which a process frozen
    // for 2 s finds run out at once: the join's work ends while the parked write is under way.
    let park = async (): Promise<void> => undefined;
    const { a: oldOwner, b: newOwner } = await sharingFences(3_000, { a: [0, 1], b: [] }, () => park());
    const offsets = oldOwner.tracker.partition('t.5s', 1);
    offsets.track(10)();
    const parked = offsets.track(11);
    const acked = offsets.track(12); // acknowledged, but behind 11: not committable before it
    acked();
    park = async () => void setTimeout(parked, 400);
    await oldOwner.group.commitNow();
    expect(newOwner.committed.get('t.5s')).toEqual([{ partition: 1, offset: '11' }]);
    const startedAt = Date.now();
    newOwner.join({ 't.5s': [1] }, 'b');
    oldOwner.join({ 't.5s': [0] }, 'a');
    await waitFor(() => !newOwner.paused.has('t.5s/1'), { timeoutMs: 3_000, intervalMs: 5, message: 'the partition to start' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(390); // not before the parked write was acknowledged
    expect(newOwner.consumer.seek).toHaveBeenLastCalledWith({ topic: 't.5s', partition: 1, offset: '13' });
    await Promise.all([oldOwner.group.stop(Date.now() + 1_000), newOwner.group.stop(Date.now() + 1_000)]);
  });
});

describe('when the old owner cannot settle a partition lost within the hand-off bound', () => {
  it('keeps its fence, so the new owner\'s wait runs out and is counted, rather than releasing it unsettled', async () => {
    const { a: oldOwner, b: newOwner, expired } = await sharingFences(3_500, { a: [0, 1], b: [] });
    oldOwner.tracker.partition('t.5s', 1).track(11); // a write never acknowledged (a broker refusing it)
    const startedAt = Date.now();
    newOwner.join({ 't.5s': [1] }, 'b');
    oldOwner.join({ 't.5s': [0] }, 'a');
    await waitFor(() => !newOwner.paused.has('t.5s/1'), { timeoutMs: 6_000, intervalMs: 5, message: 'the partition to start' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(3_400); // the new owner's whole bound
    expect(expired).toHaveBeenCalledWith('g', 'timeout', 1);
    await Promise.all([oldOwner.group.stop(Date.now() + 1_000), newOwner.group.stop(Date.now() + 1_000)]);
  });
});

describe('when a partition lost comes back to its old owner before it was settled', () => {
  it('keeps its fence as this member\'s (no release of a partition it owns again)', async () => {
    const { store, a: oldOwner, b: newOwner } = await sharingFences(3_500, { a: [0, 1], b: [] });
    const write = oldOwner.tracker.partition('t.5s', 1).track(11);
    newOwner.join({ 't.5s': [1] }, 'b');
    oldOwner.join({ 't.5s': [0] }, 'a');
    await new Promise((resolve) => setTimeout(resolve, 100));
    oldOwner.join({ 't.5s': [0, 1] }, 'a'); // the new member left again: both back
    write();
    await oldOwner.group.commitNow();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the release loop's next turns
    expect(store.values.get('p:handoff:{g}:t.5s:1')).toMatch(/:a$/);
    await Promise.all([oldOwner.group.stop(Date.now() + 1_000), newOwner.group.stop(Date.now() + 1_000)]);
  });
});

describe('when the broker stalled and dropped the members of the group (broker-pause-rejoin)', () => {
  /** `a` owns t.5s/1 and `b` t.5s/0, both started and reading. */
  const twoOwners = (handoffMs: number, park: { slow: () => Promise<void> }) => sharingFences(handoffMs, { a: [1], b: [0] }, () => park.slow());

  it('the member back first, alone in the group, starts no partition of a dropped member before that member released it after its final commit', async () => {
    const park = { slow: async (): Promise<void> => undefined };
    const { store, a, b } = await twoOwners(3_000, park);
    const offsets = a.tracker.partition('t.5s', 1);
    offsets.track(20)();
    await a.group.commitNow();
    expect(b.committed.get('t.5s')).toEqual([{ partition: 1, offset: '21' }]);
    // The broker stalls and drops both. `a` goes on sending what it read (21 acknowledged, 22
    // held), its commits refused; `b` is back first and alone in the group, with both partitions.
    a.consumer.commitOffsets.mockRejectedValueOnce(Object.assign(new Error('The coordinator is not aware of this member'), { type: 'UNKNOWN_MEMBER_ID' }));
    offsets.track(21)();
    const held = offsets.track(22);
    await a.group.commitNow();
    b.admin.members = 1;
    const startedAt = Date.now();
    b.join({ 't.5s': [0, 1] }, 'b2');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(b.paused.has('t.5s/1')).toBe(true); // `a` still holds and sends what it read from it
    // `a` notices (a heartbeat refused) and rejoins; the rebalance leaves both partitions to `b`
    // (a second join of `b` that keeps t.5s/1 must not start it either), and `a` parks what it
    // held of t.5s/1 (slowly), commits, and releases it.
    a.consumer.commitOffsets.mockImplementation(async (points: unknown) => {
      for (const x of points as { topic: string; partition: number; offset: string }[]) b.committed.set(x.topic, [{ partition: x.partition, offset: x.offset }]);
    });
    park.slow = () => new Promise<void>((resolve) => setTimeout(() => {
      held();
      resolve();
    }, 300));
    b.admin.members = 2;
    b.join({ 't.5s': [0, 1] }, 'b3');
    a.join({}, 'a2');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(b.paused.has('t.5s/1')).toBe(true);
    await waitFor(() => !b.paused.has('t.5s/1'), { timeoutMs: 3_000, intervalMs: 5, message: 't.5s/1 to start' });
    expect(Date.now() - startedAt).toBeLessThan(2_500); // by the release, not the bound
    expect(b.consumer.seek).toHaveBeenLastCalledWith({ topic: 't.5s', partition: 1, offset: '23' });
    expect(store.values.get('p:handoff:{g}:t.5s:1')).toMatch(/:b[23]$/); // b's now (ownership is its instance)
    await Promise.all([a.group.stop(Date.now() + 1_000), b.group.stop(Date.now() + 1_000)]);
  });

  it('a partition gained and lost again before its previous owner was done is never started (no seek, its fence left to its owner)', async () => {
    const park = { slow: async (): Promise<void> => undefined };
    const { store, a, b, expired } = await twoOwners(200, park);
    b.committed.set('t.5s', [{ partition: 1, offset: '7' }]);
    const fenceOfA = store.values.get('p:handoff:{g}:t.5s:1');
    b.join({ 't.5s': [0, 1] }, 'b2');
    b.join({ 't.5s': [0] }, 'b3'); // `a` came back and kept t.5s/1
    a.join({ 't.5s': [1] }, 'a2');
    await new Promise((resolve) => setTimeout(resolve, 400)); // past b's bound of 200 ms
    expect(b.consumer.seek).not.toHaveBeenCalledWith(expect.objectContaining({ partition: 1 }));
    expect(store.values.get('p:handoff:{g}:t.5s:1')).toMatch(/:a2$/);
    expect(fenceOfA).toMatch(/:a1$/);
    expect(expired).not.toHaveBeenCalled(); // no wait of its counted as expired: it stopped waiting when it lost it
    await Promise.all([a.group.stop(Date.now() + 1_000), b.group.stop(Date.now() + 1_000)]);
  });
});

describe('when the consumer drops out of its group and kafkajs does not rejoin (issue 28)', () => {
  const settings = { config: { sessionTimeout: 150, rebalanceTimeout: 150 }, watchdog: { everyMs: 20, graceMs: 60 } };

  it('disconnects and runs it again once no heartbeat or join came for a session timeout and the group lacks it', async () => {
    const c = build(settings);
    await c.group.start(async () => undefined);
    c.join({ 't.5s': [0] }, 'gone');
    c.admin.members = 1; // the broker knows m0 only
    c.consumer.run.mockImplementation(async () => c.join({ 't.5s': [0] }, 'm0'));
    const runsBefore = c.consumer.run.mock.calls.length;
    await waitFor(() => c.consumer.run.mock.calls.length > runsBefore, { timeoutMs: 2_000, intervalMs: 5, message: 'a rejoin' });
    expect(c.consumer.disconnect).toHaveBeenCalled();
    expect(c.rebalancing).toHaveBeenCalled(); // forwards held back first, as for a rebalance
    expect(c.group.rejoinFailed()).toBe(false);
    await c.group.stop(Date.now() + 1_000);
  });

  it('while kafkajs goes on fetching outside the group, asks kafkajs to rejoin from inside its fetch loop (UNKNOWN_MEMBER_ID out of a FETCH event), without disconnecting it', async () => {
    const c = build(settings);
    await c.group.start(async () => undefined);
    c.join({ 't.5s': [0] }, 'gone');
    c.admin.members = 1;
    const thrown: unknown[] = [];
    const fetching = setInterval(() => {
      try {
        c.emit(c.consumer.events.FETCH);
      } catch (error) {
        thrown.push(error);
      }
    }, 10);
    try {
      await waitFor(() => thrown.length > 0, { timeoutMs: 2_000, intervalMs: 5, message: 'the rejoin asked of kafkajs' });
    } finally {
      clearInterval(fetching);
    }
    expect(thrown).toEqual([expect.objectContaining({ type: 'UNKNOWN_MEMBER_ID' })]);
    expect(c.consumer.disconnect).not.toHaveBeenCalled();
    await c.group.stop(Date.now() + 1_000);
  });

  it('takes a crash while it runs the consumer again (the coordinator not found yet) as one failed attempt, and tries again', async () => {
    const c = build(settings);
    await c.group.start(async () => undefined);
    c.join({ 't.5s': [0] }, 'gone');
    c.admin.members = 1;
    c.consumer.run.mockImplementationOnce(async () => void c.crash(false)).mockImplementation(async () => c.join({ 't.5s': [0] }, 'm0'));
    const runsBefore = c.consumer.run.mock.calls.length;
    await waitFor(() => c.consumer.run.mock.calls.length >= runsBefore + 2, { timeoutMs: 3_000, intervalMs: 5, message: 'a second attempt' });
    expect(c.group.crashed()).toBe(false);
    expect(c.group.rejoinFailed()).toBe(false);
    await c.group.stop(Date.now() + 1_000);
  });

  it('leaves a member alone while heartbeats come, or while the group counts it (a long rebalance)', async () => {
    const c = build(settings);
    await c.group.start(async () => undefined);
    c.join({ 't.5s': [0] }, 'm0'); // in the group as the broker sees it
    const runs = c.consumer.run.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    c.join({ 't.5s': [0] }, 'gone');
    c.admin.members = 0;
    const beat = setInterval(() => c.emit(c.consumer.events.HEARTBEAT), 30);
    await new Promise((resolve) => setTimeout(resolve, 500));
    clearInterval(beat);
    expect(c.consumer.run.mock.calls.length).toBe(runs);
    expect(c.consumer.disconnect).not.toHaveBeenCalled();
    await c.group.stop(Date.now() + 1_000);
  });

  it('says so (/healthz) when running it again did not bring it back, and no more once it joins', async () => {
    const c = build(settings);
    await c.group.start(async () => undefined);
    c.join({ 't.5s': [0] }, 'gone');
    c.admin.members = 0;
    await waitFor(() => c.group.rejoinFailed(), { timeoutMs: 3_000, intervalMs: 5, message: 'the failed rejoin to be reported' });
    c.join({ 't.5s': [0] }, 'back');
    expect(c.group.rejoinFailed()).toBe(false);
    await c.group.stop(Date.now() + 1_000);
  });
});

const until = (done: () => boolean): Promise<boolean> => waitFor(done, { timeoutMs: 1_000, intervalMs: 5, message: 'the partitions gained to be resumed' });
