import { maxLagMessages, readLag } from '../../../src/budget/follow-lag';

const admin = (committed: Array<[number, string]>, ends: Array<[number, string, string]>) => ({
  fetchOffsets: async () => [{ topic: 't', partitions: committed.map(([partition, offset]) => ({ partition, offset, metadata: null })) }],
  fetchTopicOffsets: async () => ends.map(([partition, low, high]) => ({ partition, low, high, offset: high })),
});

describe('the followed group\'s lag', () => {
  it('adds up high watermark − committed offset, from the low watermark where nothing was committed', async () => {
    expect(await readLag(admin([[0, '90'], [1, '-1']], [[0, '0', '100'], [1, '20', '50']]) as never, 'g', 't')).toBe(10 + 30);
  });

  it('is unknown for a group that committed nothing on the topic (no step is taken)', async () => {
    expect(await readLag(admin([[0, '-1']], [[0, '0', '100']]) as never, 'g', 't')).toBeUndefined();
  });

  it('reads maxLag as messages, or as a duration of the configured rate', () => {
    expect(maxLagMessages({ kind: 'count', messages: 500 }, 300)).toBe(500);
    expect(maxLagMessages({ kind: 'duration', ms: 30_000 }, 300)).toBe(9000);
  });
});
