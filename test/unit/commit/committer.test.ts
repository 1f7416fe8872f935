import fc from 'fast-check';
import pino from 'pino';
import { createCommitter, createOffsetTracker, createPartitionOffsets, isRebalanceError, NUDGE_MS } from '../../../src/commit/committer';
import { waitFor } from '../../helpers/wait';

const logger = pino({ level: 'silent' });

describe('when messages of a partition are acknowledged out of order', () => {
  it('commits only the contiguous acknowledged prefix', () => {
    const p = createPartitionOffsets();
    const acks = [10, 11, 12, 13].map((o) => p.track(o));
    expect(p.commitPoint()).toBe(10);
    acks[1]();
    acks[3]();
    expect(p.commitPoint()).toBe(10);
    acks[0]();
    expect(p.commitPoint()).toBe(12);
    acks[2]();
    expect(p.commitPoint()).toBe(14);
  });
});

describe('when a batch has offset gaps', () => {
  it('commits past the gap and past the batch end once everything is acknowledged', () => {
    const p = createPartitionOffsets();
    const a = p.track(5);
    const b = p.track(8);
    p.covered(9);
    a();
    expect(p.commitPoint()).toBe(8);
    b();
    expect(p.commitPoint()).toBe(10);
  });
});

describe('when a commit point was already committed', () => {
  it('reports nothing new until the prefix moves', () => {
    const tracker = createOffsetTracker();
    const p = tracker.partition('t', 0);
    p.track(0)();
    expect(tracker.pending()).toEqual([{ topic: 't', partition: 0, offset: 1 }]);
    tracker.markCommitted('t', 0, 1);
    expect(tracker.pending()).toEqual([]);
    p.track(1)();
    expect(tracker.pending()).toEqual([{ topic: 't', partition: 0, offset: 2 }]);
  });
});

describe('when the group rejoins and kafkajs fetches again from the committed offset', () => {
  it('knows which offsets this member already scheduled on a kept partition', () => {
    const tracker = createOffsetTracker();
    const p = tracker.partition('t', 3);
    p.track(40);
    p.track(41);
    tracker.retain([{ topic: 't', partitions: [3] }]);
    expect(tracker.partition('t', 3).scheduled(41)).toBe(true);
    expect(tracker.partition('t', 3).scheduled(42)).toBe(false);
  });

  it('forgets a partition it lost, so acks of old sends no longer count and it starts afresh when it comes back', () => {
    const tracker = createOffsetTracker();
    const ack = tracker.partition('t', 1).track(7);
    tracker.retain([{ topic: 't', partitions: [0] }]);
    ack();
    expect(tracker.pending()).toEqual([]);
    expect(tracker.partition('t', 1).scheduled(7)).toBe(false);
  });
});

describe('when an acknowledgement is reported twice', () => {
  it('counts it once', () => {
    const p = createPartitionOffsets();
    const ack = p.track(0);
    p.track(1);
    ack();
    ack();
    expect(p.inFlight()).toBe(2);
    expect(p.commitPoint()).toBe(1);
    expect(p.inFlight()).toBe(1);
  });
});

describe('when offsets are added and acknowledged by offset (no function per message)', () => {
  it('commits the contiguous acknowledged prefix, and a late second ack of a committed offset changes nothing', () => {
    const p = createPartitionOffsets();
    for (const o of [20, 21, 23, 24]) p.add(o);
    p.ack(21);
    p.ack(24);
    expect(p.commitPoint()).toBe(20);
    p.ack(20);
    expect(p.commitPoint()).toBe(23);
    p.ack(21); // reported again after the prefix passed it
    p.add(25);
    expect(p.inFlight()).toBe(3);
    p.ack(23);
    expect(p.commitPoint()).toBe(25);
    p.ack(25);
    expect(p.commitPoint()).toBe(26);
    expect(p.inFlight()).toBe(0);
  });
});

describe('when acknowledgements come in any order, some twice', () => {
  it('commits exactly the contiguous acknowledged prefix after each one', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 60 }).map((offsets) => offsets.sort((a, b) => a - b)),
      fc.array(fc.nat(), { maxLength: 120 }),
      (offsets, picks) => {
        const p = createPartitionOffsets();
        for (const o of offsets) p.add(o);
        const acked = new Set<number>();
        for (const pick of picks) {
          const offset = offsets[pick % offsets.length];
          p.ack(offset);
          acked.add(offset);
          const oldest = offsets.find((o) => !acked.has(o));
          const expected = oldest ?? offsets[offsets.length - 1] + 1;
          expect(p.commitPoint()).toBe(expected > 0 ? expected : undefined);
          // In flight: from the oldest unacknowledged on (those acknowledged behind it included).
          expect(p.inFlight()).toBe(oldest === undefined ? 0 : offsets.filter((o) => o >= oldest).length);
        }
      },
    ));
  });
});

describe('whether a partition is settled (the hand-off releases a partition lost only then)', () => {
  it('is not while any message taken is unacknowledged or the acknowledged prefix is uncommitted, in any order of acks and commits', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 20 }).map((offsets) => offsets.sort((a, b) => a - b)),
      fc.array(fc.oneof(fc.nat().map((n) => ({ ack: n })), fc.constant({ commit: true })), { maxLength: 60 }),
      (offsets, steps) => {
        const tracker = createOffsetTracker();
        const p = tracker.partition('t', 0);
        for (const o of offsets) p.add(o);
        const acked = new Set<number>();
        let committed = -1;
        for (const step of steps) {
          if ('ack' in step) {
            const offset = offsets[step.ack % offsets.length];
            p.ack(offset);
            acked.add(offset);
          } else {
            for (const point of tracker.pending()) {
              tracker.markCommitted(point.topic, point.partition, point.offset);
              committed = point.offset;
            }
          }
          const everyAcked = offsets.every((o) => acked.has(o));
          expect(tracker.settled('t', 0)).toBe(everyAcked && committed === offsets[offsets.length - 1] + 1);
        }
      },
    ));
    expect(createOffsetTracker().settled('t', 0)).toBe(true); // nothing taken
  });
});

describe('when the group is rebalancing during a commit', () => {
  it('does not throw and commits the same point on the next try', async () => {
    const tracker = createOffsetTracker();
    tracker.partition('t', 0).track(0)();
    const calls: unknown[] = [];
    let fail = true;
    const target = {
      commitOffsets: async (offsets: unknown) => {
        calls.push(offsets);
        if (fail) throw Object.assign(new Error('rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
      },
    };
    const committer = createCommitter({ tracker, target, logger });
    await committer.commitNow();
    fail = false;
    await committer.commitNow();
    await committer.commitNow();
    expect(calls).toEqual([
      [{ topic: 't', partition: 0, offset: '1' }],
      [{ topic: 't', partition: 0, offset: '1' }],
    ]);
  });
});

describe('when kafkajs refuses a commit of a member out of its group', () => {
  it('takes its wrapped error (a KafkaJSNonRetriableError around UNKNOWN_MEMBER_ID, as consumer.commitOffsets throws it) as a rebalance error', () => {
    const protocol = Object.assign(new Error('The coordinator is not aware of this member'), { name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
    const wrapped = Object.assign(new Error(protocol.message), { name: 'KafkaJSNonRetriableError', cause: protocol });
    expect(isRebalanceError(wrapped)).toBe(true);
    expect(isRebalanceError(Object.assign(new Error('x'), { cause: Object.assign(new Error('y'), { type: 'ILLEGAL_GENERATION' }) }))).toBe(true);
    expect(isRebalanceError(Object.assign(new Error('broker down'), { cause: new Error('ECONNREFUSED') }))).toBe(false);
  });
});

describe('when a message is acknowledged', () => {
  it('commits within NUDGE_MS instead of waiting for the interval, once for a burst of acknowledgements', async () => {
    const tracker = createOffsetTracker();
    const calls: unknown[] = [];
    const target = { commitOffsets: async (offsets: unknown) => void calls.push(offsets) };
    const committer = createCommitter({ tracker, target, logger, intervalMs: 60_000 });
    committer.start();
    try {
      const offsets = tracker.partition('t', 0);
      const acks = [offsets.track(0), offsets.track(1)];
      for (const ack of acks) {
        ack();
        committer.nudge();
      }
      const started = Date.now();
      await waitFor(() => calls.length > 0, { timeoutMs: 1000, intervalMs: 5 });
      expect(Date.now() - started).toBeLessThan(NUDGE_MS + 200);
      expect(calls).toEqual([[{ topic: 't', partition: 0, offset: '2' }]]);
    } finally {
      committer.stop();
    }
  });
});

describe('when the commit interval is longer than setTimeout holds (2^31 − 1 ms)', () => {
  it('does not commit every millisecond', async () => {
    const tracker = createOffsetTracker();
    tracker.partition('t', 0).track(0)();
    const calls: unknown[] = [];
    const committer = createCommitter({ tracker, target: { commitOffsets: async (offsets: unknown) => void calls.push(offsets) }, logger, intervalMs: 30 * 86_400_000 });
    committer.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(calls).toEqual([]);
    } finally {
      committer.stop();
    }
  });
});
