/**
 * The batch sender against the real broker: bursts bigger than one partition's record-batch
 * limit (the broker's default max.message.bytes, 1 MiB) reach Kafka exactly once, checked by
 * id, whether keyed (forwarded) or on an explicit partition (parked); a single message too
 * large for the topic is refused alone, and each partition keeps the order sent while requests
 * for the others are in flight (sluice's producer settings); a send resolves with the broker's
 * append time where the topic records it (the lanes count that). And a topic written the
 * moment it is created (its partitions' leaders not serving yet, as after a leader election)
 * gets every message once: one partition's refusal no longer makes the sender resend what the
 * others appended.
 */
import pino from 'pino';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { createProducer } from '../../../src/app/wiring';
import { createBatchSender } from '../../../src/produce/batch-sender';
import { consumeAll, createKafka, createTopic } from '../../helpers/kafka';
import { randomTopicName } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';

const logger = pino({ level: 'silent' });
const body = (id: string, bytes: number): string => `${id}:`.padEnd(bytes, 'x');
const idOf = (value: Buffer | null): string => String(value).split(':')[0];

describe('when bursts bigger than 1 MiB for one partition are sent through the real broker', () => {
  let kafka: Kafka;
  let producer: Producer;

  beforeAll(async () => {
    kafka = createKafka();
    producer = createProducer(kafka); // sluice's settings: requests not limited per connection
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
  });

  it('appends every forwarded and parked message exactly once and in order per partition, and refuses only the oversize one', async () => {
    const downstream = await createTopic(kafka, { prefix: 'sender-out', partitions: 2 });
    const tier = await createTopic(kafka, { prefix: 'sender-tier', partitions: 2 });
    const sender = createBatchSender({ producer, logger });
    const sends: Promise<unknown>[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 1500; i += 1) {
      const small = i % 50 === 0;
      const forwarded = `f${i}`;
      const parked = `p${i}`;
      ids.push(forwarded, parked);
      sends.push(sender.send(downstream, { key: small ? `other-${i}` : 'bursting-producer', value: body(forwarded, small ? 100 : 1024) }));
      sends.push(sender.send(tier, { key: 'bursting-producer', value: body(parked, small ? 100 : 1024), partition: small ? 1 : 0 }));
    }
    // Its refusal may come before the other sends are all acknowledged: expected from the start.
    const oversize = expect(sender.send(tier, { key: 'bursting-producer', value: body('huge', 1_200_000), partition: 0 })).rejects.toMatchObject({ code: 'MESSAGE_TOO_LARGE' });
    await Promise.all(sends);
    await oversize;

    const received = [...(await consumeAll(kafka, downstream)), ...(await consumeAll(kafka, tier))].map((m) => idOf(m.value));
    expect(received).toHaveLength(ids.length);
    expect(new Set(received).size).toBe(received.length);
    expect([...received].sort()).toEqual([...ids].sort());
    // Each partition in the order sent, though requests for the other partitions and topic were in flight meanwhile.
    const sentOrder = new Map(ids.map((id, i) => [id, i]));
    for (const topic of [downstream, tier]) {
      for (const partition of [0, 1]) {
        const order = (await consumeAll(kafka, topic)).filter((m) => m.partition === partition).map((m) => sentOrder.get(idOf(m.value)) as number);
        expect(order.length).toBeGreaterThan(0);
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
    }
  }, 60_000);
});

describe('when the broker answers a send', () => {
  it('resolves with the broker\'s append time on a topic with LogAppendTime, and with undefined on one with CreateTime', async () => {
    const kafka = createKafka();
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      const appendTime = await createTopic(kafka, { prefix: 'sender-append', partitions: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] });
      const createTime = await createTopic(kafka, { prefix: 'sender-create', partitions: 1 });
      const sender = createBatchSender({ producer, logger });
      const before = Date.now();
      const { appendedAt: appended, slow } = await sender.send(appendTime, { key: 'k', value: 'v', partition: 0 });
      const after = Date.now();
      // The broker's clock is this machine's here.
      expect(appended).toBeGreaterThanOrEqual(before - 5);
      expect(appended).toBeLessThanOrEqual(after + 5);
      const [stored] = await consumeAll(kafka, appendTime);
      expect(Number(stored.timestamp)).toBe(appended);
      expect(slow).toBe(false);
      await expect(sender.send(createTime, { key: 'k', value: 'v', partition: 0 })).resolves.toEqual({ appendedAt: undefined, slow: false });
    } finally {
      await producer.disconnect();
    }
  }, 30_000);
});

/** Creates a 3-partition topic and returns as soon as metadata names a leader for each (a moment before the leader serves it). */
const createLedTopic = async (admin: Admin, topic: string): Promise<void> => {
  await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: 3 }] });
  await waitFor(async () => {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => undefined);
    return meta?.topics[0]?.partitions.length === 3 && meta.topics[0].partitions.every((p) => p.leader >= 0);
  }, { timeoutMs: 10_000, intervalMs: 20, message: `leaders of ${topic}` });
};

describe('when a topic is written the moment it is created, before every partition\'s leader serves it', () => {
  it('appends every message exactly once on each of ten such topics (a request refused for one partition repeats nothing)', async () => {
    const kafka = createKafka();
    const producer = createProducer(kafka);
    const admin = kafka.admin();
    await Promise.all([producer.connect(), admin.connect()]);
    try {
      const sender = createBatchSender({ producer, logger, backoffMs: [20] });
      const totals: number[] = [];
      for (let round = 0; round < 10; round += 1) {
        const topic = randomTopicName('sender-fresh');
        await createLedTopic(admin, topic);
        await Promise.all(Array.from({ length: 30 }, (_, i) => sender.send(topic, { key: `producer-${i % 4}`, value: body(`${round}-${i}`, 50), partition: i % 3 })));
        const ends = await admin.fetchTopicOffsets(topic);
        totals.push(ends.reduce((sum, end) => sum + Number(end.high), 0));
      }
      expect(totals).toEqual(Array.from({ length: 10 }, () => 30));
    } finally {
      await Promise.all([producer.disconnect(), admin.disconnect()]);
    }
  }, 60_000);
});
