/**
 * /healthz fails once a consumer has not heard from its group for kafka.stuckAfterMs
 * (src/flow/group-consumer.ts `silentMs`). That must never fire for a healthy consumer: on the
 * real broker, kafkajs's heartbeat, fetch and join events keep it near zero while messages
 * flow, while every partition is paused (the hold full) and while there is nothing to read.
 */
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { systemClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/committer';
import { createGroupConsumer, type GroupConsumer } from '../../../src/flow/group-consumer';
import { noMetrics } from '../../../src/metrics/types';
import { createKafka, createTopic, produce } from '../../helpers/kafka';
import { randomGroupId } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';

jest.setTimeout(60_000);

describe('how long a consumer on the real broker goes without hearing from its group', () => {
  let kafka: Kafka;
  let group: GroupConsumer | undefined;
  afterEach(async () => {
    await group?.stop(Date.now() + 5_000);
    group = undefined;
  });

  it('stays under 1.5 s while messages flow, while every partition is paused and while idle; 0 once stopped', async () => {
    kafka = createKafka();
    const topic = await createTopic(kafka, { prefix: 'silence', partitions: 2 });
    const tracker = createOffsetTracker();
    let taken = 0;
    group = createGroupConsumer({
      kafka, groupId: randomGroupId('silence'), topics: [topic], tracker, commitIntervalMs: 200, partitionsConsumedConcurrently: 2,
      clock: systemClock, metrics: noMetrics, logger: pino({ level: 'silent' }),
      onRebalancing: async () => undefined, onJoin: async () => undefined,
    });
    const consumer = group;
    await consumer.start(async ({ batch, resolveOffset }) => {
      taken += batch.messages.length;
      resolveOffset(batch.lastOffset());
    });
    await waitFor(() => consumer.joined(), { timeoutMs: 20_000, message: 'the group join' });

    let worst = 0;
    const sampler = setInterval(() => (worst = Math.max(worst, consumer.silentMs())), 50);
    try {
      await produce(kafka, topic, Array.from({ length: 200 }, (_, i) => ({ key: `k${i % 5}`, value: `v${i}` })));
      await waitFor(() => taken >= 200, { timeoutMs: 20_000, message: 'every message taken' });

      const until = Date.now() + 60_000;
      for (const { partitions } of consumer.assignment()) for (const p of partitions) consumer.pauser.pauseUntil(topic, p, until);
      await produce(kafka, topic, [{ key: 'k', value: 'while paused' }]);
      const pausedFrom = Date.now();
      await waitFor(() => Date.now() - pausedFrom >= 3_000, { timeoutMs: 5_000, intervalMs: 100, message: '3 s paused' });
      expect(taken).toBe(200);

      for (const { partitions } of consumer.assignment()) for (const p of partitions) consumer.pauser.pauseUntil(topic, p, Date.now());
      await waitFor(() => taken === 201, { timeoutMs: 10_000, message: 'the message produced while paused' });
      const idleFrom = Date.now();
      await waitFor(() => Date.now() - idleFrom >= 3_000, { timeoutMs: 5_000, intervalMs: 100, message: '3 s idle' });

      expect(worst).toBeLessThan(1_500);
      expect(worst).toBeGreaterThan(0);
    } finally {
      clearInterval(sampler);
    }
    await consumer.stop(Date.now() + 5_000);
    group = undefined;
    expect(consumer.silentMs()).toBe(0);
  });
});
