import pino from 'pino';
import { createCommitter, NUDGE_MS } from '../../../src/commit/committer';
import { waitFor } from '../../helpers/wait';
import { createOffsetTracker } from '../../../src/commit/offset-tracker';

const logger = pino({ level: 'silent' });

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
