import type { KafkaMessage } from 'kafkajs';
import { manualClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/offset-tracker';
import { createBatchHandler } from '../../../src/consume/batch-handler';
import type { Inbound } from '../../../src/consume/inbound';
import type { Candidate, Verdict } from '../../../src/decide/verdict';
import { createHoldScheduler } from '../../../src/hold/hold-scheduler';
import { noMetrics, Metrics } from '../../../src/metrics/types';

const message = (offset: number, producer: string, extra: Record<string, string> = {}): KafkaMessage => ({
  key: null, value: Buffer.from(`v${offset}`), timestamp: '5', attributes: 0, offset: String(offset),
  headers: { 'producer-id': producer, ...extra },
});

const batchOf = (messages: KafkaMessage[], lastOffset = messages[messages.length - 1].offset) =>
  ({ topic: 'in', partition: 0, messages, lastOffset: () => lastOffset }) as never;

const setup = (opts: { full?: boolean; stopping?: boolean } = {}) => {
  const clock = manualClock(1000);
  const decided: Candidate[][] = [];
  const dispatched: { inbound: Inbound; verdict: Verdict; ack: () => void }[] = [];
  const forged: number[] = [];
  const tracker = createOffsetTracker();
  const hold = createHoldScheduler({ clock, maxMessages: opts.full ? 0 : 100, maxBytes: 1e6 });
  if (opts.full) hold.add({ at: 1e12, bytes: 1, release: () => undefined, evict: () => undefined });
  let paused = 0;
  const metrics: Metrics = { ...noMetrics, forgedHeadersDropped: (n) => void forged.push(n) };
  const handle = createBatchHandler({
    identity: { source: 'header', header: 'producer-id', fallback: 'unidentified' },
    resolveRule: () => ({ name: 'default', unlimited: true, shadow: false }),
    decider: { decide: async (c) => (decided.push([...c]), c.map(() => ({ kind: 'forward', at: 1000 }) as Verdict)) },
    dispatcher: { dispatch: (inbound, verdict, ack) => void dispatched.push({ inbound, verdict, ack }) },
    hold, tracker, clock, metrics,
    refuses: () => opts.stopping ?? false,
    onFull: () => void (paused += 1),
  });
  const resolved: string[] = [];
  const run = (batch: never) => handle({ batch, resolveOffset: (o: string) => void resolved.push(o), heartbeat: async () => undefined });
  return { run, decided, dispatched, resolved, tracker, forged, paused: () => paused, hold };
};

describe('when a batch arrives', () => {
  it('decides all its messages in one call, dispatches each, resolves each and the batch end (gaps included)', async () => {
    const t = setup();
    await t.run(batchOf([message(0, 'a'), message(1, 'b'), message(3, 'a')], '4'));
    expect(t.decided).toHaveLength(1);
    expect(t.decided[0].map((c) => c.producer)).toEqual(['a', 'b', 'a']);
    expect(t.resolved).toEqual(['0', '1', '3', '4']);
    t.dispatched.forEach((d) => d.ack());
    expect(t.tracker.pending()).toEqual([{ topic: 'in', partition: 0, offset: 5 }]);
  });

  it('drops and counts inbound sluice-* headers before identifying', async () => {
    const t = setup();
    await t.run(batchOf([message(0, 'a', { 'sluice-producer': 'someone-else', 'SLUICE-attempt': '3' })]));
    expect(t.forged).toEqual([2]);
    expect(t.dispatched[0].inbound.producer).toBe('a');
    expect(Object.keys(t.dispatched[0].inbound.content.headers)).toEqual(['producer-id']);
  });
});

describe('when kafkajs fetches again offsets this member already scheduled (after a rejoin)', () => {
  it('skips them: they are neither decided nor dispatched twice', async () => {
    const t = setup();
    await t.run(batchOf([message(0, 'a'), message(1, 'a')]));
    await t.run(batchOf([message(0, 'a'), message(1, 'a'), message(2, 'a')]));
    expect(t.decided.map((d) => d.length)).toEqual([2, 1]);
    expect(t.dispatched.map((d) => d.inbound.offset)).toEqual(['0', '1', '2']);
  });
});

describe('when the hold is full', () => {
  it('leaves the batch unresolved (fetched again later) and pauses', async () => {
    const t = setup({ full: true });
    await t.run(batchOf([message(0, 'a')]));
    expect(t.decided).toEqual([]);
    expect(t.resolved).toEqual([]);
    expect(t.paused()).toBe(1);
    t.hold.close();
  });
});

describe('when the process is stopping', () => {
  it('takes nothing more', async () => {
    const t = setup({ stopping: true });
    await t.run(batchOf([message(0, 'a')]));
    expect(t.decided).toEqual([]);
    expect(t.resolved).toEqual([]);
  });
});
