import { Registry } from 'prom-client';
import { createLagCollector, partitionLag, type OffsetsAdmin } from '../../../src/metrics/lag-collector';

const fakeAdmin = (ends: Record<string, Array<[number, number, number]>>, committed: Record<string, Record<string, Array<[number, number]>>>): OffsetsAdmin => ({
  fetchTopicOffsets: async (topic) => (ends[topic] ?? []).map(([partition, low, high]) => ({ partition, low: String(low), high: String(high), offset: String(high) })),
  fetchOffsets: async ({ groupId, topics }) =>
    topics.map((topic) => ({ topic, partitions: (committed[groupId]?.[topic] ?? []).map(([partition, offset]) => ({ partition, offset: String(offset) })) })),
});

describe('partition lag', () => {
  describe('when the group has committed', () => {
    it('is the end offset minus the committed offset', () => {
      expect(partitionLag({ low: '0', high: '120' }, '100')).toBe(20);
    });
  });
  describe('when the group has not committed yet (-1)', () => {
    it('counts from the log start offset', () => {
      expect(partitionLag({ low: '30', high: '120' }, '-1')).toBe(90);
      expect(partitionLag({ low: '30', high: '120' }, undefined)).toBe(90);
    });
  });
  describe('when retention deleted past the committed offset', () => {
    it('counts only what is still in the log', () => {
      expect(partitionLag({ low: '500', high: '520' }, '100')).toBe(20);
    });
  });
});

describe('lag collector', () => {
  describe('when it collects', () => {
    it('sets lag per group, topic and partition, and retry-tier depth per tier', async () => {
      const registry = new Registry();
      const admin = fakeAdmin(
        { events: [[0, 0, 100], [1, 0, 50]], 'events.retry.5s': [[0, 0, 10], [1, 0, 7]], 'events.retry.1m': [[0, 0, 3]] },
        { 'sluice.events': { events: [[0, 90], [1, 50]] }, 'sluice.events.retry': { 'events.retry.5s': [[0, 4], [1, -1]] } },
      );
      const collector = createLagCollector({
        admin,
        registry,
        groups: [
          { groupId: 'sluice.events', topics: ['events'] },
          { groupId: 'sluice.events.retry', topics: ['events.retry.5s', 'events.retry.1m'], retryTiers: true },
        ],
      });
      await collector.collect();
      const text = await registry.metrics();
      expect(text).toContain('sluice_consumer_lag{group="sluice.events",topic="events",partition="0"} 10');
      expect(text).toContain('sluice_consumer_lag{group="sluice.events",topic="events",partition="1"} 0');
      expect(text).toContain('sluice_retry_tier_depth{topic="events.retry.5s"} 13');
      expect(text).toContain('sluice_retry_tier_depth{topic="events.retry.1m"} 3');
      expect(text).not.toContain('sluice_retry_tier_depth{topic="events"}');
    });
  });

  describe('when the admin fails', () => {
    it('rejects that round and collects again on the next', async () => {
      const registry = new Registry();
      let fail = true;
      const good = fakeAdmin({ events: [[0, 0, 5]] }, {});
      const admin: OffsetsAdmin = {
        fetchOffsets: async (o) => {
          if (fail) throw new Error('broker gone');
          return good.fetchOffsets(o);
        },
        fetchTopicOffsets: good.fetchTopicOffsets,
      };
      const collector = createLagCollector({ admin, registry, groups: [{ groupId: 'g', topics: ['events'] }] });
      await expect(collector.collect()).rejects.toThrow('broker gone');
      fail = false;
      await collector.collect();
      expect(await registry.metrics()).toContain('sluice_consumer_lag{group="g",topic="events",partition="0"} 5');
    });
  });
});
