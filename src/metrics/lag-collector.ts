/**
 * Consumer lag per partition and retry-tier depth, read periodically from a Kafka admin client
 * (end offsets vs the group's committed offsets) into Prometheus gauges:
 *   sluice_consumer_lag{group,topic,partition}   messages not yet committed by the group
 *   sluice_retry_tier_depth{topic}                messages parked on a tier, not yet drained
 * Started by whoever composes `sluice run`; the admin is passed in (kafkajs Admin fits).
 */
import { Gauge, type Registry } from 'prom-client';

/** The two kafkajs Admin calls used (kafkajs 2.2 shapes). */
export interface OffsetsAdmin {
  fetchTopicOffsets(topic: string): Promise<Array<{ partition: number; offset: string; high: string; low: string }>>;
  fetchOffsets(options: { groupId: string; topics: string[] }): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}

export interface WatchedGroup {
  groupId: string;
  topics: string[];
  /** true for the retry tiers: their lag is also reported as retry-tier depth. */
  retryTiers?: boolean;
}

export interface PartitionLag {
  topic: string;
  partition: number;
  lag: number;
}

/** lag of one partition: end − committed; with nothing committed yet, end − log start. */
export const partitionLag = (end: { high: string; low: string }, committed: string | undefined): number => {
  const high = Number(end.high);
  const from = committed === undefined || Number(committed) < 0 ? Number(end.low) : Number(committed);
  return Math.max(0, high - Math.max(from, Number(end.low)));
};

export const groupLag = async (admin: OffsetsAdmin, group: WatchedGroup): Promise<PartitionLag[]> => {
  const committed = await admin.fetchOffsets({ groupId: group.groupId, topics: group.topics });
  const lags: PartitionLag[] = [];
  for (const topic of group.topics) {
    const ends = await admin.fetchTopicOffsets(topic);
    const mine = committed.find((c) => c.topic === topic)?.partitions ?? [];
    for (const end of ends) {
      const offset = mine.find((p) => p.partition === end.partition)?.offset;
      lags.push({ topic, partition: end.partition, lag: partitionLag(end, offset) });
    }
  }
  return lags;
};

export interface LagCollectorOptions {
  admin: OffsetsAdmin;
  registry: Registry;
  groups: WatchedGroup[];
  intervalMs?: number;
  /** told about a failed round (the gauges keep their last values). */
  onError?: (error: unknown) => void;
}

export interface LagCollector {
  /** one round now; resolves when the gauges are updated. */
  collect(): Promise<void>;
  start(): void;
  stop(): void;
}

export const createLagCollector = ({ admin, registry, groups, intervalMs = 15000, onError = () => undefined }: LagCollectorOptions): LagCollector => {
  const lagGauge = new Gauge({
    name: 'sluice_consumer_lag',
    help: 'Messages on a partition not yet committed by the group (end offset minus committed offset).',
    labelNames: ['group', 'topic', 'partition'],
    registers: [registry],
  });
  const depthGauge = new Gauge({
    name: 'sluice_retry_tier_depth',
    help: 'Messages parked on a retry tier and not yet drained.',
    labelNames: ['topic'],
    registers: [registry],
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const round = async (): Promise<void> => {
    for (const group of groups) {
      const lags = await groupLag(admin, group);
      for (const { topic, partition, lag } of lags) lagGauge.set({ group: group.groupId, topic, partition: String(partition) }, lag);
      if (!group.retryTiers) continue;
      for (const topic of group.topics) {
        depthGauge.set({ topic }, lags.filter((l) => l.topic === topic).reduce((sum, l) => sum + l.lag, 0));
      }
    }
  };

  const collect = (): Promise<void> => {
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    collect,
    start() {
      if (timer) return;
      collect().catch(onError); // so the first scrape already has numbers
      timer = setInterval(() => collect().catch(onError), intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
};
