import type { Batch, KafkaMessage } from 'kafkajs';
import { manualClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/committer';
import type { Candidate, FetchDecider, RuleView, Verdict } from '../../../src/decide/fetch-decider';
import { createBatchHandler, type SourceOptions } from '../../../src/flow/batch-handler';
import { LOOK_EVERY, type LoopTurns } from '../../../src/loop-turns';
import type { Dispatcher } from '../../../src/flow/dispatch';
import type { Action, FlowItem, RoutePolicy } from '../../../src/flow/flow-item';
import { type PartitionPauser, READ_BATCH_MS } from '../../../src/flow/partition-pauser';
import { createHoldScheduler } from '../../../src/hold/hold-scheduler';
import { noMetrics, type Metrics } from '../../../src/metrics/types';
import { buildTiers, encodeParkHeaders, type ParkInfo } from '../../../src/park/park';

const T0 = 1_700_000_000_000;
const tiers = buildTiers('in.retry', [1000, 3000]);
const [t1s, t3s] = tiers;
const identity = { source: 'header' as const, header: 'producer-id', fallback: 'unidentified' };
const policy: RoutePolicy = { tiers, holdMaxMs: 1000, maxAttempts: 3, maxAgeMs: 60_000, hop: true };
const rule: RuleView = {
  name: 'default', unlimited: false, shadow: false,
  limit: { algorithm: 'leaky-bucket', intervalMs: 50, capacityMs: 1000, burst: 1, windows: [], labels: { rate: '20/s' }, fingerprint: 'f' },
};
const ingressSource: SourceOptions = { tiers: [], parked: false, waitForTurn: false, readAheadMs: 0, identity };
const tierSource: SourceOptions = { tiers, parked: true, waitForTurn: true, readAheadMs: policy.holdMaxMs, identity };

type Dispatched = { item: FlowItem; action: Action; ack: () => void };

const setup = (options: {
  source: SourceOptions;
  verdictFor?: (c: Candidate) => Verdict;
  full?: boolean;
  refuses?: (topic: string, partition: number) => boolean;
  turns?: LoopTurns;
}) => {
  const clock = manualClock(T0);
  const calls: Candidate[][] = [];
  const decider: FetchDecider = {
    decide: async (candidates) => {
      calls.push([...candidates]);
      return candidates.map(options.verdictFor ?? (() => ({ kind: 'forward', at: clock.now() })));
    },
  };
  const dispatched: Dispatched[] = [];
  const dispatcher: Dispatcher = {
    dispatch: (item, action, ack) => void dispatched.push({ item, action, ack }),
    dispatchAll: (entries, acks) => void dispatched.push(...entries.map(({ item, action }) => ({ item, action, ack: () => acks.ack(item) }))),
    handOver: () => undefined,
    resume: () => undefined,
    parkOut: async () => undefined,
  };
  const hold = createHoldScheduler({ clock, maxMessages: 1, maxBytes: 1e6 });
  if (options.full) hold.track(1);
  const tracker = createOffsetTracker();
  const pauses: [string, number, number][] = [];
  const pauser = { pauseUntil: (t: string, p: number, until: number) => void pauses.push([t, p, until]) } as unknown as PartitionPauser;
  const counted = { forged: [] as number[], malformed: 0, unreadable: 0, offered: [] as [string, number][] };
  const metrics: Metrics = {
    ...noMetrics,
    offered: (producer, n) => void counted.offered.push([producer, n]),
    forgedHeadersDropped: (n) => void counted.forged.push(n),
    malformedRetryHeaders: (n) => void (counted.malformed += n),
    unreadableRecords: (n) => void (counted.unreadable += n),
  };
  const handle = createBatchHandler({
    source: options.source, take: { decider, ruleOf: () => rule, policy, clock, turns: options.turns }, dispatcher, hold, tracker, pauser, clock, metrics,
    refuses: options.refuses ?? (() => false),
  });
  const resolved: string[] = [];
  let heartbeats = 0;
  const run = (topic: string, messages: KafkaMessage[], lastOffset = messages[messages.length - 1].offset, running = () => true, stale = () => false) =>
    handle({
      batch: { topic, partition: 0, messages, lastOffset: () => lastOffset } as unknown as Batch,
      resolveOffset: (o) => void resolved.push(o),
      heartbeat: async () => void (heartbeats += 1),
      isRunning: running,
      isStale: stale,
    });
  return { clock, calls, dispatched, resolved, tracker, pauses, counted, run, hold, heartbeats: () => heartbeats };
};

const message = (offset: number, producer: string, extra: Record<string, string> = {}): KafkaMessage => ({
  key: null, value: Buffer.from(`v${offset}`), timestamp: '5', attributes: 0, offset: String(offset),
  headers: { 'producer-id': producer, ...extra },
}) as unknown as KafkaMessage;

const info = (change: Partial<ParkInfo> = {}): ParkInfo => ({
  producer: 'billing',
  attempt: 1,
  notBefore: T0,
  firstSeen: T0 - 5000,
  timestamp: String(T0 - 6000),
  origin: { topic: 'in', partition: 0, offset: '9' },
  reason: { kind: 'delayed' },
  ...change,
});

const tierMessage = (offset: number, parkedAt: number, headers: [string, string][]): KafkaMessage =>
  ({ offset: String(offset), timestamp: String(parkedAt), key: Buffer.from('k'), value: Buffer.from(`v${offset}`), headers: Object.fromEntries(headers), attributes: 0 }) as unknown as KafkaMessage;

const overflow = { kind: 'overflow', limit: 'rate' } as const;

describe('ingress: when a batch arrives', () => {
  it('decides all its messages in one call, dispatches each with its offset\'s ack, resolves the batch end (gaps included)', async () => {
    const t = setup({ source: ingressSource });
    await t.run('in', [message(0, 'a'), message(1, 'b'), message(3, 'a')], '4');
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0].map((c) => c.producer)).toEqual(['a', 'b', 'a']);
    expect(t.counted.offered).toEqual([['a', 2], ['b', 1]]); // once per producer and batch
    expect(t.dispatched.map((d) => [d.item.offset, d.action])).toEqual([
      ['0', { kind: 'release', at: T0, attempt: 1, spacingMs: 0 }],
      ['1', { kind: 'release', at: T0, attempt: 1, spacingMs: 0 }],
      ['3', { kind: 'release', at: T0, attempt: 1, spacingMs: 0 }],
    ]);
    // Changed on purpose: the handler resolves once per batch (its last offset) instead of every message.
    expect(t.resolved).toEqual(['4']);
    expect(t.tracker.pending()).toEqual([]);
    t.dispatched.slice(0, 2).forEach((d) => d.ack());
    expect(t.tracker.pending()).toEqual([{ topic: 'in', partition: 0, offset: 3 }]);
    t.dispatched[2].ack();
    expect(t.tracker.pending()).toEqual([{ topic: 'in', partition: 0, offset: 5 }]);
    expect(t.heartbeats()).toBe(1);
  });

  it('drops and counts inbound sluice-* headers before identifying', async () => {
    const t = setup({ source: ingressSource });
    await t.run('in', [message(0, 'a', { 'sluice-producer': 'someone-else', 'SLUICE-attempt': '3' })]);
    expect(t.counted.forged).toEqual([2]);
    expect(t.dispatched[0].item.info.producer).toBe('a');
    expect(t.dispatched[0].item.content.headers.map((h) => h.key)).toEqual(['producer-id']);
    expect(t.dispatched[0].item.fromTier).toBe(false);
  });

  it('takes headers named like object internals as any others, with a sluice-* header among them (the record that stopped every replica)', async () => {
    const t = setup({ source: ingressSource });
    const hostile = {
      key: null, value: Buffer.from('v0'), timestamp: '5', attributes: 0, offset: '0',
      headerList: [
        { key: Buffer.from('__proto__'), value: Buffer.from([1, 2, 3]) },
        { key: Buffer.from('sluice-attempt'), value: Buffer.from('1') },
        { key: Buffer.from('producer-id'), value: Buffer.from('a') },
        { key: Buffer.from('constructor'), value: null },
      ],
    } as unknown as KafkaMessage;
    await t.run('in', [hostile, message(1, 'b')]);
    expect(t.counted.forged).toEqual([1]);
    expect(t.dispatched.map((d) => [d.item.info.producer, d.action.kind])).toEqual([['a', 'release'], ['b', 'release']]);
    expect(t.dispatched[0].item.content.headers.map((h) => String(h.key))).toEqual(['__proto__', 'producer-id', 'constructor']);
    expect(t.dispatched[0].item.size).toBe(2 + 9 + 3 + 11 + 1 + 11);
  });

  it('dead-letters a record that reading throws on as unreadable, with the error, and takes the rest of the batch', async () => {
    const t = setup({ source: ingressSource });
    const poison = {
      key: Buffer.from('k'), value: Buffer.from('v'), timestamp: '5', attributes: 0, offset: '1',
      get headerList(): never {
        throw new TypeError('no such thing');
      },
    } as unknown as KafkaMessage;
    await t.run('in', [message(0, 'a'), poison, message(2, 'a')]);
    expect(t.counted.unreadable).toBe(1);
    expect(t.dispatched.map((d) => [d.item.offset, d.action.kind])).toEqual([['0', 'release'], ['1', 'dead-letter'], ['2', 'release']]);
    const dead = t.dispatched[1];
    expect(dead.action).toMatchObject({ kind: 'dead-letter', reason: 'unreadable', info: { producer: 'unidentified', error: 'TypeError: no such thing' } });
    expect(dead.item.content).toEqual({ key: Buffer.from('k'), value: Buffer.from('v'), headers: [] });
    expect(t.calls[0].map((c) => c.producer)).toEqual(['a', 'a']); // never decided
    expect(t.resolved).toEqual(['2']);
  });

  it('counts nothing forged when no header was dropped', async () => {
    const t = setup({ source: ingressSource });
    await t.run('in', [message(0, 'a')]);
    expect(t.counted.forged).toEqual([]);
  });
});

describe('when kafkajs fetches again offsets this member already scheduled (after a rejoin)', () => {
  it('skips them: they are neither decided nor dispatched twice', async () => {
    const t = setup({ source: ingressSource });
    await t.run('in', [message(0, 'a'), message(1, 'a')]);
    await t.run('in', [message(0, 'a'), message(1, 'a'), message(2, 'a')]);
    expect(t.calls.map((d) => d.length)).toEqual([2, 1]);
    expect(t.dispatched.map((d) => d.item.offset)).toEqual(['0', '1', '2']);
    expect(t.resolved).toEqual(['1', '2']);
  });

  it('skips them on a tier too, resolving up to the last one skipped when it stops before anything new', async () => {
    const t = setup({ source: tierSource });
    const due = tierMessage(0, T0 - 1000, encodeParkHeaders(info()));
    await t.run(t1s.topic, [due]);
    await t.run(t1s.topic, [due, tierMessage(1, T0 - 100, encodeParkHeaders(info({ notBefore: T0 + 5000 })))]);
    expect(t.dispatched.map((d) => d.item.offset)).toEqual(['0']);
    expect(t.resolved).toEqual(['0', '0']);
    expect(t.pauses).toEqual([[t1s.topic, 0, T0 + 900]]);
  });
});

describe('when the hold is full', () => {
  it('returns without taking or resolving anything (fetched again later; the hold\'s pressure pauses fetching)', async () => {
    // The old handler also paused through an onFull callback; the hold's onPressure now pauses every flow (src/app/wiring.ts).
    const t = setup({ source: ingressSource, full: true });
    expect(t.hold.isFull()).toBe(true);
    await t.run('in', [message(0, 'a')]);
    expect(t.calls).toEqual([]);
    expect(t.dispatched).toEqual([]);
    expect(t.resolved).toEqual([]);
    expect(t.tracker.partition('in', 0).scheduled(0)).toBe(false);
  });
});

describe('when the process is stopping, or the partition is stopped', () => {
  it('takes nothing more from a refused partition and keeps taking from the others', async () => {
    const t = setup({ source: ingressSource, refuses: (topic, partition) => topic === 'stuck' && partition === 0 });
    await t.run('stuck', [message(0, 'a')]);
    expect(t.calls).toEqual([]);
    expect(t.resolved).toEqual([]);
    await t.run('in', [message(0, 'a')]);
    expect(t.dispatched.map((d) => d.item.topic)).toEqual(['in']);
  });

  // A slice is read in one synchronous pass (nothing in it can stop the consumer or seek), so
  // kafkajs is asked once, before it: it used to be asked for every message.
  it('takes nothing of a batch when kafkajs no longer runs or the batch is stale, and resolves nothing', async () => {
    const t = setup({ source: ingressSource });
    let checks = 0;
    await t.run('in', [message(0, 'a'), message(1, 'a'), message(3, 'a')], '5', () => (checks += 1) < 0);
    expect(checks).toBe(1);
    await t.run('in', [message(0, 'a'), message(1, 'a')], '1', () => true, () => (checks += 1) > 0);
    expect(checks).toBe(2);
    expect(t.dispatched).toEqual([]);
    expect(t.resolved).toEqual([]);
    expect(t.tracker.pending()).toEqual([]);
  });
});

describe('when a large batch is taken while the event loop is due to turn', () => {
  /** A loop due to turn at every question: a slice is LOOK_EVERY messages. */
  const due: LoopTurns = { due: () => true, turn: () => new Promise((resolve) => setImmediate(resolve)) };
  const many = (n: number): KafkaMessage[] => Array.from({ length: n }, (_, i) => message(i, i % 2 === 0 ? 'a' : 'b'));
  /**
   * Calls `look` at every turn of the event loop until `run` ends (the first before the
   * handler's own first turn); on the code before, the handler never let the loop turn.
   */
  const atEveryTurn = async (run: () => Promise<void>, look: () => void): Promise<void> => {
    let done = false;
    const tick = (): void => {
      if (done) return;
      look();
      setImmediate(tick);
    };
    setImmediate(tick);
    await run();
    done = true;
  };

  it('takes it in one go while the loop is not due to turn', async () => {
    const t = setup({ source: ingressSource, turns: { due: () => false, turn: due.turn } });
    const n = 3 * LOOK_EVERY;
    const turns: number[] = [];
    await atEveryTurn(() => t.run('in', many(n)), () => turns.push(t.dispatched.length));
    expect(turns).toEqual([]);
    expect(t.dispatched).toHaveLength(n);
    expect(t.resolved).toEqual([String(n - 1)]);
  });

  it('reads and hands it over a slice at a time, in order, letting the event loop turn between two slices, and decides it in one call', async () => {
    const t = setup({ source: ingressSource, turns: due });
    const n = 2 * LOOK_EVERY + 5;
    const turns: [number, number][] = [];
    await atEveryTurn(() => t.run('in', many(n), String(n + 1)), () => turns.push([t.calls.length, t.dispatched.length]));
    // Two turns while reading (nothing decided yet), two while handing over (a slice more each time).
    expect(turns).toEqual([[0, 0], [0, 0], [1, LOOK_EVERY], [1, 2 * LOOK_EVERY]]);
    expect(t.calls.map((c) => c.length)).toEqual([n]);
    expect(t.dispatched.map((d) => Number(d.item.offset))).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(t.resolved).toEqual([String(n + 1)]);
    t.dispatched.forEach((d) => d.ack());
    expect(t.tracker.pending()).toEqual([{ topic: 'in', partition: 0, offset: n + 2 }]);
    expect(t.heartbeats()).toBe(1);
  });

  type Flags = { refused: boolean; stale: boolean };
  it.each([
    ['the partition is refused (a graceful stop)', (_t: ReturnType<typeof setup>, flags: Flags) => void (flags.refused = true)],
    ['the batch went stale (a rebalance, a seek)', (_t: ReturnType<typeof setup>, flags: Flags) => void (flags.stale = true)],
    ['the hold is full', (t: ReturnType<typeof setup>) => t.hold.track(1)],
  ])('reads nothing more once %s between two slices: takes what it read, the rest stays unresolved (fetched again)', async (_what, change) => {
    const flags: Flags = { refused: false, stale: false };
    const t = setup({ source: ingressSource, refuses: () => flags.refused, turns: due });
    let turns = 0;
    await atEveryTurn(() => t.run('in', many(LOOK_EVERY + 3), undefined, () => true, () => flags.stale), () => void (turns++ === 0 && change(t, flags)));
    expect(t.calls.map((c) => c.length)).toEqual([LOOK_EVERY]);
    expect(t.dispatched).toHaveLength(LOOK_EVERY);
    expect(t.resolved).toEqual([String(LOOK_EVERY - 1)]);
    expect(t.tracker.partition('in', 0).scheduled(LOOK_EVERY)).toBe(false);
  });

  it('hands over all it decided even when a stop comes between two slices of the hand-over', async () => {
    let refused = false;
    const t = setup({ source: ingressSource, refuses: () => refused, turns: due });
    const n = 2 * LOOK_EVERY + 1;
    await atEveryTurn(() => t.run('in', many(n)), () => void (t.calls.length > 0 && (refused = true)));
    expect(refused).toBe(true);
    expect(t.dispatched).toHaveLength(n);
    expect(t.resolved).toEqual([String(n - 1)]);
  });

  it('on a tier, stops at a gate in a later slice: takes what comes before it and pauses until its turn', async () => {
    const t = setup({ source: tierSource, turns: due });
    const ready = Array.from({ length: LOOK_EVERY + 2 }, (_, i) => tierMessage(i, T0 - 1000, encodeParkHeaders(info({ notBefore: T0 }))));
    const later = tierMessage(LOOK_EVERY + 2, T0, encodeParkHeaders(info({ notBefore: T0 + 5000 })));
    await t.run(t1s.topic, [...ready, later]);
    expect(t.dispatched).toHaveLength(LOOK_EVERY + 2);
    expect(t.resolved).toEqual([String(LOOK_EVERY + 1)]);
    expect(t.pauses).toHaveLength(1);
    expect(t.tracker.partition(t1s.topic, 0).scheduled(LOOK_EVERY + 2)).toBe(false);
  });
});

describe('a tier: when the head of the partition has not had its turn', () => {
  it('leaves it unresolved and pauses the partition until its tier delay is over', async () => {
    // Changed fixture: its not-before is now more than the read-ahead (hold.maxMs) away, else the gate takes it early (below).
    const t = setup({ source: tierSource });
    await t.run(t1s.topic, [tierMessage(0, T0 - 400, encodeParkHeaders(info({ notBefore: T0 + 5000 })))]);
    expect(t.dispatched).toEqual([]);
    expect(t.resolved).toEqual([]);
    expect(t.pauses).toEqual([[t1s.topic, 0, T0 + 600]]);
  });

  it('takes it before its tier delay is over once its not-before is within the read-ahead', async () => {
    const t = setup({ source: tierSource });
    await t.run(t3s.topic, [tierMessage(0, T0 - 400, encodeParkHeaders(info({ notBefore: T0 + 700 })))]);
    expect(t.dispatched.map((d) => d.action)).toEqual([{ kind: 'release', at: T0 + 700, attempt: 1, spacingMs: 50 }]);
    expect(t.pauses).toEqual([]);
  });

  it('stops at the first message whose turn has not come: takes what comes before, pauses until its turn', async () => {
    const t = setup({ source: tierSource });
    const messages = [
      tierMessage(0, T0 - 1000, encodeParkHeaders(info())),
      tierMessage(1, T0 - 400, encodeParkHeaders(info({ notBefore: T0 + 5000 }))),
      tierMessage(2, T0 - 1000, encodeParkHeaders(info())),
    ];
    await t.run(t1s.topic, messages);
    expect(t.dispatched.map((d) => d.item.offset)).toEqual(['0']);
    expect(t.resolved).toEqual(['0']);
    expect(t.pauses).toEqual([[t1s.topic, 0, T0 + 600]]);
    expect(t.tracker.partition(t1s.topic, 0).scheduled(1)).toBe(false);
    t.clock.set(T0 + 600);
    await t.run(t1s.topic, messages.slice(1));
    expect(t.dispatched.map((d) => d.item.offset)).toEqual(['0', '1', '2']);
    expect(t.resolved).toEqual(['0', '2']);
  });

  it('reads the partition again at the head\'s turn and takes, with it, what falls due within READ_BATCH_MS after it (one fetch per second of slots, not one per slot)', async () => {
    const t = setup({ source: tierSource });
    // Slots 10 ms apart on the 3 s tier, read hold.maxMs (1 s) ahead: at T0 the first READ_BATCH_MS of them are taken.
    const slots = Array.from({ length: 300 }, (_, i) => T0 + policy.holdMaxMs + i * 10);
    const messages = slots.map((notBefore, i) => tierMessage(i, T0 - 100, encodeParkHeaders(info({ notBefore }))));
    await t.run(t3s.topic, messages);
    const first = slots.filter((at) => at <= T0 + policy.holdMaxMs + READ_BATCH_MS).length;
    expect(t.dispatched).toHaveLength(first);
    expect(t.dispatched.every((d) => d.action.kind === 'release')).toBe(true);
    expect(t.pauses).toEqual([[t3s.topic, 0, slots[first] - policy.holdMaxMs]]);
    t.clock.set(slots[first] - policy.holdMaxMs);
    await t.run(t3s.topic, messages.slice(first));
    expect(t.dispatched).toHaveLength(2 * first);
    expect(t.pauses).toHaveLength(2);
  });

  it('takes everything at once when the source does not wait for turns (sluice drain)', async () => {
    const t = setup({ source: { ...tierSource, waitForTurn: false } });
    await t.run(t1s.topic, [tierMessage(0, T0 - 400, encodeParkHeaders(info({ notBefore: T0 + 5000 })))]);
    expect(t.dispatched.map((d) => d.action)).toEqual([{ kind: 'park', tier: tiers[1], info: info({ notBefore: T0 + 5000 }), moved: true }]);
    expect(t.pauses).toEqual([]);
  });
});

describe('a tier: when a delayed message is due', () => {
  it('releases it on its slot without a decision, and its offset is committable once acknowledged', async () => {
    const t = setup({ source: tierSource });
    await t.run(t1s.topic, [tierMessage(0, T0 - 1000, [['app', 'x'], ...encodeParkHeaders(info())])]);
    expect(t.calls).toEqual([]);
    expect(t.dispatched).toHaveLength(1);
    const [{ item, action, ack }] = t.dispatched;
    expect(action).toEqual({ kind: 'release', at: T0, attempt: 1, spacingMs: 50 });
    expect(item).toMatchObject({ fromTier: true, info: info(), content: { headers: [{ key: 'app', value: 'x' }] } });
    expect(t.resolved).toEqual(['0']);
    expect(t.tracker.pending()).toEqual([]);
    ack();
    expect(t.tracker.pending()).toEqual([{ topic: t1s.topic, partition: 0, offset: 1 }]);
  });
});

describe('a tier: when overflow messages of several producers are due', () => {
  it('decides them in one call and re-parks refusals with attempt + 1', async () => {
    const t = setup({ source: tierSource, verdictFor: () => ({ kind: 'park', reason: overflow, notBefore: T0 + 2500 }) });
    await t.run(t3s.topic, [
      tierMessage(0, T0 - 3000, encodeParkHeaders(info({ reason: overflow }))),
      tierMessage(1, T0 - 3000, encodeParkHeaders(info({ reason: overflow, producer: 'reports' }))),
    ]);
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0].map((c) => [c.producer, c.asOf])).toEqual([['billing', T0], ['reports', T0]]);
    // The producer partition of the write is the message writer's (test/unit/park/park.test.ts).
    expect(t.dispatched.map((d) => d.action)).toEqual([
      { kind: 'park', tier: t1s, info: info({ attempt: 2, notBefore: T0 + 2500, reason: overflow }), moved: false },
      { kind: 'park', tier: t1s, info: info({ producer: 'reports', attempt: 2, notBefore: T0 + 2500, reason: overflow }), moved: false },
    ]);
    expect(t.resolved).toEqual(['1']);
  });
});

describe('a tier: when the store is down under onStoreError = park', () => {
  it('dispatches what comes before, leaves the rest unresolved and pauses without burning attempts', async () => {
    const t = setup({ source: tierSource, verdictFor: () => ({ kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: T0 + 1000 }) });
    await t.run(t1s.topic, [
      tierMessage(0, T0 - 1000, encodeParkHeaders(info())),
      tierMessage(1, T0 - 1000, encodeParkHeaders(info({ reason: { kind: 'store-unavailable' } }))),
      tierMessage(2, T0 - 1000, encodeParkHeaders(info())),
    ]);
    expect(t.dispatched.map((d) => [d.item.offset, d.action.kind])).toEqual([['0', 'release']]);
    expect(t.resolved).toEqual(['0']);
    expect(t.pauses).toEqual([[t1s.topic, 0, T0 + 1000]]);
    expect(t.tracker.partition(t1s.topic, 0).scheduled(1)).toBe(false);
  });
});

describe('a tier: when the sluice headers of a message are malformed', () => {
  it('counts it and decides it again under the producer found in its headers, at once', async () => {
    const t = setup({ source: tierSource });
    await t.run(t1s.topic, [tierMessage(0, T0 - 1000, [['producer-id', 'billing'], ['sluice-attempt', 'x']])]);
    expect(t.counted.malformed).toBe(1);
    expect(t.calls[0].map((c) => c.producer)).toEqual(['billing']);
    expect(t.dispatched.map((d) => d.action)).toEqual([{ kind: 'release', at: T0, attempt: 2, spacingMs: 0 }]);
  });
});

describe('a tier: when a message waits after its turn', () => {
  it('releases a delayed one at its not-before when that is at most hold.maxMs away', async () => {
    const t = setup({ source: tierSource });
    await t.run(t1s.topic, [tierMessage(0, T0 - 1000, encodeParkHeaders(info({ notBefore: T0 + 700 })))]);
    expect(t.dispatched.map((d) => d.action)).toEqual([{ kind: 'release', at: T0 + 700, attempt: 1, spacingMs: 50 }]);
    expect(t.resolved).toEqual(['0']);
  });

  it('hops it when it waits longer than hold.maxMs + HOP_MARGIN_MS, and holds it when it waits less', async () => {
    const t = setup({ source: tierSource });
    await t.run(t3s.topic, [tierMessage(0, T0 - 3000, encodeParkHeaders(info({ notBefore: T0 + 2500 }))), tierMessage(1, T0 - 3000, encodeParkHeaders(info({ notBefore: T0 + 2000 })))]);
    expect(t.dispatched.map((d) => d.action)).toEqual([
      { kind: 'park', tier: t3s, info: info({ notBefore: T0 + 2500 }), moved: true },
      { kind: 'release', at: T0 + 2000, attempt: 1, spacingMs: 50 },
    ]);
  });
});

describe('a source with accept and prepare (sluice drain)', () => {
  it('stops the batch at the first message it does not accept, and prepares each message it takes', async () => {
    const t = setup({
      source: {
        ...tierSource, waitForTurn: false,
        accept: (_topic, _partition, m) => Number(m.offset) < 1,
        prepare: (item, now) => ({ ...item, decideAgain: true, info: { ...item.info, attempt: 0, firstSeen: now } }),
      },
    });
    await t.run(t1s.topic, [tierMessage(0, T0 - 1000, encodeParkHeaders(info())), tierMessage(1, T0 - 1000, encodeParkHeaders(info()))]);
    expect(t.calls.map((c) => c.length)).toEqual([1]);
    expect(t.dispatched.map((d) => [d.item.offset, d.action])).toEqual([['0', { kind: 'release', at: T0, attempt: 1, spacingMs: 0 }]]);
    expect(t.resolved).toEqual(['0']);
  });
});
