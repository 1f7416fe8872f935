import pino from 'pino';
import { createCommitter } from '../../../src/commit/committer';
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
