/**
 * Issue 28: a consumer that drops out of its group and stays out (3 of 13 broker-pause chaos
 * runs). kafkajs 2.2.4's runner, on UNKNOWN_MEMBER_ID from a heartbeat (the broker expired the
 * member during a stall), sets the member id to null and calls joinAndSync inside its fetch
 * retrier; joinAndSync gives up (bail) on any error that is not a rebalance or UNKNOWN_MEMBER_ID
 * — a coordinator not available yet, a request timeout — and the retrier, the error being
 * retriable, just starts the fetch manager again: with the old assignment and a null member id,
 * for which ConsumerGroup skips every heartbeat. Nothing throws again: the consumer fetches its
 * old partitions outside the group for good, FETCH events keep coming (so `silentMs` stays
 * near 0 and /healthz said 200), and its commits are refused.
 *
 * Here that path is taken on the real (shared) broker without pausing it: the member leaves the
 * group as the broker would expire it and the heartbeat answers UNKNOWN_MEMBER_ID, and the
 * rejoin that follows fails once with GROUP_COORDINATOR_NOT_AVAILABLE. sluice's watchdog
 * (src/flow/group-consumer.ts) must bring the consumer back into its group within a session
 * timeout (10 s), and it must read again.
 */
import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { systemClock } from '../../../src/clock';
import { createOffsetTracker } from '../../../src/commit/committer';
import { CONSUMER_SETTINGS, createGroupConsumer, type GroupConsumer } from '../../../src/flow/group-consumer';
import { noMetrics } from '../../../src/metrics/types';
import { createKafka, createTopic, produce } from '../../helpers/kafka';
import { randomGroupId } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';

// kafkajs's own modules, the ones its consumer uses (one module registry per test file)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup') as { prototype: Record<string, (...args: unknown[]) => Promise<unknown>> };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(code: number): Error };

jest.setTimeout(90_000);

const original = { heartbeat: ConsumerGroup.prototype.heartbeat, joinAndSync: ConsumerGroup.prototype.joinAndSync };
const armed = { drop: false, failJoin: false };

beforeAll(() => {
  ConsumerGroup.prototype.heartbeat = async function heartbeat(this: { leave(): Promise<void> }, ...args: unknown[]) {
    if (armed.drop) {
      armed.drop = false;
      await this.leave(); // the broker no longer counts the member, as after a session expiry
      throw createErrorFromCode(25); // UNKNOWN_MEMBER_ID
    }
    return original.heartbeat.apply(this, args);
  };
  ConsumerGroup.prototype.joinAndSync = async function joinAndSync(this: unknown, ...args: unknown[]) {
    if (armed.failJoin) {
      armed.failJoin = false;
      throw createErrorFromCode(15); // GROUP_COORDINATOR_NOT_AVAILABLE: joinAndSync bails on it
    }
    return original.joinAndSync.apply(this, args);
  };
});

afterAll(() => {
  Object.assign(ConsumerGroup.prototype, original);
});

describe('when kafkajs leaves a consumer out of its group (UNKNOWN_MEMBER_ID, then a failed rejoin)', () => {
  let group: GroupConsumer | undefined;
  afterEach(async () => {
    await group?.stop(Date.now() + 5_000);
    group = undefined;
  });

  it('the consumer is back in its group within a session timeout and reads again', async () => {
    const kafka: Kafka = createKafka();
    const topic = await createTopic(kafka, { prefix: 'dropout', partitions: 2 });
    const groupId = randomGroupId('dropout');
    let taken = 0;
    let joins = 0;
    group = createGroupConsumer({
      kafka, groupId, topics: [topic], tracker: createOffsetTracker(), commitIntervalMs: 200, partitionsConsumedConcurrently: 2,
      clock: systemClock, metrics: noMetrics, logger: pino({ level: 'silent' }),
      onRebalancing: async () => undefined, onJoin: async () => void (joins += 1),
    });
    const consumer = group;
    await consumer.start(async ({ batch, resolveOffset }) => {
      taken += batch.messages.length;
      resolveOffset(batch.lastOffset());
    });
    await waitFor(() => consumer.joined(), { timeoutMs: 20_000, message: 'the group join' });
    const admin = kafka.admin();
    await admin.connect();
    const members = async (): Promise<number> => (await admin.describeGroups([groupId])).groups[0]?.members.length ?? 0;
    try {
      expect(await members()).toBe(1);
      const joinsBefore = joins;
      armed.failJoin = true;
      armed.drop = true;
      const droppedAt = Date.now();
      await waitFor(() => !armed.drop && !armed.failJoin, { timeoutMs: 10_000, intervalMs: 20, message: 'the drop-out' });
      await waitFor(async () => (await members()) === 0, { timeoutMs: 5_000, intervalMs: 100, message: 'the group to lack the member' });
      // kafkajs's fetch loop goes on outside the group: fetches are heard, heartbeats are not.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(consumer.silentMs()).toBeLessThan(1_000);
      await waitFor(async () => joins > joinsBefore && (await members()) === 1, {
        timeoutMs: 30_000, intervalMs: 100, message: 'the consumer back in its group',
      });
      const backMs = Date.now() - droppedAt;
      process.stderr.write(`group-dropout: out of the group at ${droppedAt}, back after ${(backMs / 1000).toFixed(1)} s\n`);
      expect(backMs).toBeLessThanOrEqual(CONSUMER_SETTINGS.sessionTimeout);
      expect(consumer.rejoinFailed()).toBe(false);
      await produce(kafka, topic, Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `after ${i}` })));
      await waitFor(() => taken >= 20, { timeoutMs: 20_000, message: 'messages read after the rejoin' });
    } finally {
      await admin.disconnect();
    }
  });
});
