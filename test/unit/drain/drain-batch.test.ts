import type { Batch, KafkaMessage, Message } from 'kafkajs';
import pino from 'pino';
import { manualClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/offset-tracker';
import type { FetchDecider } from '../../../src/decide/fetch-decider';
import type { Candidate, Verdict } from '../../../src/decide/verdict';
import type { HeldMessage, HoldScheduler } from '../../../src/hold/hold-scheduler';
import { noMetrics } from '../../../src/metrics/types';
import { decodeParkHeaders, encodeParkHeaders, ParkInfo } from '../../../src/park/park-headers';
import { producerPartition } from '../../../src/park/park-message';
import { buildTiers } from '../../../src/park/tiers';
import type { Sender } from '../../../src/produce/batch-sender';
import { handleDrainBatch } from '../../../src/drain/drain-batch';
import { createRetryRouter } from '../../../src/drain/retry-router';

const T0 = 1_700_000_000_000;
const tiers = buildTiers('in.retry', [1000, 3000]);

const setup = (verdictFor: (c: Candidate) => Verdict = (c) => ({ kind: 'forward', at: clock.now() + (c.size > 0 ? 0 : 0) })) => {
  const sent: { topic: string; message: Message }[] = [];
  const acks: (() => void)[] = [];
  const sender: Sender = {
    send: (topic, message) => {
      sent.push({ topic, message });
      return new Promise((resolve) => acks.push(resolve));
    },
    flush: async () => undefined,
    pending: () => acks.length,
    close: () => undefined,
  };
  const calls: Candidate[][] = [];
  const decider: FetchDecider = {
    decide: async (candidates) => {
      calls.push([...candidates]);
      return candidates.map(verdictFor);
    },
  };
  const held: HeldMessage[] = [];
  const scheduler = { add: (m: HeldMessage) => held.push(m) } as unknown as HoldScheduler;
  const pauses: [string, number, number][] = [];
  const pauser = { pauseUntil: (t: string, p: number, u: number) => pauses.push([t, p, u]), setBlocked: () => undefined, onAssignment: () => undefined, paused: () => new Map(), close: () => undefined };
  let malformed = 0;
  const metrics = { ...noMetrics, malformedRetryHeaders: (n: number) => (malformed += n) };
  const policy = { tiers, holdMaxMs: 1000, maxAttempts: 3, maxAgeMs: 60_000 };
  const ruleOf = () => ({ name: 'default', unlimited: false, shadow: false, limit: { intervalMs: 50 } as never });
  const router = createRetryRouter({
    clock, sender, scheduler, decider, ruleOf, policy, metrics, logger: pino({ level: 'silent' }),
    partitionsOf: () => 4,
    topics: { downstream: 'out', deadLetter: 'in.dlq' },
  });
  const tracker = createOffsetTracker();
  const resolved: string[] = [];
  const deps = { router, tracker, pauser, tiers, identity: { source: 'header' as const, header: 'producer-id', fallback: 'unidentified' }, clock, metrics, waitForTier: true };
  const run = (topic: string, messages: KafkaMessage[]) =>
    handleDrainBatch(deps, {
      batch: { topic, partition: 0, messages, lastOffset: () => messages[messages.length - 1].offset } as unknown as Batch,
      resolveOffset: (o) => resolved.push(o),
      isRunning: () => true,
      isStale: () => false,
    });
  return { sent, acks, calls, held, pauses, resolved, tracker, run, malformed: () => malformed };
};

let clock = manualClock(T0);
beforeEach(() => {
  clock = manualClock(T0);
});

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

const tierMessage = (offset: number, parkedAt: number, headers: Record<string, string>): KafkaMessage =>
  ({ offset: String(offset), timestamp: String(parkedAt), key: Buffer.from('k'), value: Buffer.from(`v${offset}`), headers, attributes: 0, size: 0 }) as unknown as KafkaMessage;

describe('when the head of a tier partition is not due', () => {
  it('leaves it unresolved and pauses the partition until its tier delay is over', async () => {
    const s = setup();
    await s.run('in.retry.1s', [tierMessage(0, T0 - 400, encodeParkHeaders(info()))]);
    expect(s.sent).toEqual([]);
    expect(s.resolved).toEqual([]);
    expect(s.pauses).toEqual([['in.retry.1s', 0, T0 + 600]]);
  });
});

describe('when a delayed message is due', () => {
  it('forwards it without a decision, restoring its timestamp, and commits once acknowledged', async () => {
    const s = setup();
    await s.run('in.retry.1s', [tierMessage(0, T0 - 1000, { app: 'x', ...encodeParkHeaders(info()) })]);
    expect(s.calls).toEqual([]);
    expect(s.sent).toHaveLength(1);
    const [{ topic, message }] = s.sent;
    expect(topic).toBe('out');
    expect(message.timestamp).toBe(String(T0 - 6000));
    expect(message.headers).toEqual({ app: 'x', 'sluice-waited-ms': '5000', 'sluice-attempt': '1' });
    expect(s.resolved).toEqual(['0']);
    expect(s.tracker.pending()).toEqual([]);
    s.acks[0]();
    await new Promise((r) => setImmediate(r));
    expect(s.tracker.pending()).toEqual([{ topic: 'in.retry.1s', partition: 0, offset: 1 }]);
  });
});

describe('when overflow messages of several producers are due', () => {
  it('decides them in one call and re-parks refusals with attempt + 1 on the producer partition', async () => {
    const s = setup(() => ({ kind: 'park', reason: { kind: 'overflow', limit: 'rate' }, notBefore: T0 + 2500 }));
    const overflow = { kind: 'overflow', limit: 'rate' } as const;
    await s.run('in.retry.3s', [
      tierMessage(0, T0 - 3000, encodeParkHeaders(info({ reason: overflow }))),
      tierMessage(1, T0 - 3000, encodeParkHeaders(info({ reason: overflow, producer: 'reports' }))),
    ]);
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0].map((c) => c.producer)).toEqual(['billing', 'reports']);
    expect(s.sent.map((x) => x.topic)).toEqual(['in.retry.1s', 'in.retry.1s']);
    const decoded = decodeParkHeaders(s.sent[1].message.headers);
    expect(decoded.kind === 'valid' && decoded.info).toEqual(info({ producer: 'reports', attempt: 2, notBefore: T0 + 2500, reason: overflow }));
    expect(s.sent[1].message.partition).toBe(producerPartition('reports', 4));
    expect(s.resolved).toEqual(['1']);
  });
});

describe('when the store is down under onStoreError = park', () => {
  it('dispatches what comes before, leaves the rest unresolved and pauses without burning attempts', async () => {
    const s = setup(() => ({ kind: 'park', reason: { kind: 'store-unavailable' }, notBefore: T0 + 1000 }));
    await s.run('in.retry.1s', [
      tierMessage(0, T0 - 1000, encodeParkHeaders(info())),
      tierMessage(1, T0 - 1000, encodeParkHeaders(info({ reason: { kind: 'store-unavailable' } }))),
    ]);
    expect(s.sent.map((x) => x.topic)).toEqual(['out']);
    expect(s.resolved).toEqual(['0']);
    expect(s.pauses).toEqual([['in.retry.1s', 0, T0 + 1000]]);
  });
});

describe('when the sluice headers of a retry message are malformed', () => {
  it('counts it and decides it again under the producer found in its headers', async () => {
    const s = setup();
    await s.run('in.retry.1s', [tierMessage(0, T0 - 1000, { 'producer-id': 'billing', 'sluice-attempt': 'x' })]);
    expect(s.malformed()).toBe(1);
    expect(s.calls[0].map((c) => c.producer)).toEqual(['billing']);
    expect(s.held).toHaveLength(1);
  });
});

describe('when a message waits less than hold.maxMs after its tier delay', () => {
  it('holds it in memory and forwards it at its not-before', async () => {
    const s = setup();
    await s.run('in.retry.1s', [tierMessage(0, T0 - 1000, encodeParkHeaders(info({ notBefore: T0 + 700 })))]);
    expect(s.held.map((h) => h.at)).toEqual([T0 + 700]);
    expect(s.resolved).toEqual(['0']);
    clock.set(T0 + 700);
    s.held[0].release();
    await new Promise((r) => setImmediate(r));
    expect(s.sent.map((x) => x.topic)).toEqual(['out']);
  });

  it('hops it to a shorter tier when it waits longer than hold.maxMs', async () => {
    const s = setup();
    await s.run('in.retry.3s', [tierMessage(0, T0 - 3000, encodeParkHeaders(info({ notBefore: T0 + 2000 })))]);
    expect(s.sent.map((x) => x.topic)).toEqual(['in.retry.1s']);
  });
});

describe('when the group rejoins and kafkajs fetches from the committed offset again', () => {
  it('skips what this member already scheduled', async () => {
    const s = setup();
    const m = tierMessage(0, T0 - 1000, encodeParkHeaders(info()));
    await s.run('in.retry.1s', [m]);
    await s.run('in.retry.1s', [m, tierMessage(1, T0 - 1000, encodeParkHeaders(info()))]);
    expect(s.sent).toHaveLength(2);
    expect(s.resolved).toEqual(['0', '1']);
  });
});

describe('when the drainer stops with messages held', () => {
  it('parks an evicted held message again with its slot (not-before) unchanged', async () => {
    const s = setup();
    const parked = info({ notBefore: T0 + 700 });
    await s.run('in.retry.1s', [tierMessage(0, T0 - 1000, encodeParkHeaders(parked))]);
    s.held[0].evict();
    await new Promise((r) => setImmediate(r));
    expect(s.sent.map((x) => x.topic)).toEqual(['in.retry.1s']);
    const decoded = decodeParkHeaders(s.sent[0].message.headers);
    expect(decoded.kind === 'valid' && decoded.info).toEqual(parked);
  });

  it('parks an evicted admitted message as delayed with the attempt its decision counted', async () => {
    const s = setup(() => ({ kind: 'forward', at: T0 + 400 }));
    await s.run('in.retry.1s', [tierMessage(0, T0 - 1000, encodeParkHeaders(info({ reason: { kind: 'overflow', limit: 'rate' } })))]);
    s.held[0].evict();
    await new Promise((r) => setImmediate(r));
    const decoded = decodeParkHeaders(s.sent[0].message.headers);
    expect(decoded.kind === 'valid' && decoded.info).toEqual(info({ attempt: 2, notBefore: T0 + 400, reason: { kind: 'delayed' } }));
  });
});
