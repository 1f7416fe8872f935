/**
 * The batch sender against the real broker: bursts bigger than one partition's record-batch
 * limit (the broker's default max.message.bytes, 1 MiB) reach Kafka exactly once, checked by
 * id, whether keyed (forwarded) or on an explicit partition (parked); a single message too
 * large for the topic is refused alone.
 */
import pino from 'pino';
import type { Kafka, Producer } from 'kafkajs';
import { createBatchSender } from '../../../src/produce/batch-sender';
import { consumeAll, createKafka, createTopic } from '../../helpers/kafka';

const logger = pino({ level: 'silent' });
const body = (id: string, bytes: number): string => `${id}:`.padEnd(bytes, 'x');
const idOf = (value: Buffer | null): string => String(value).split(':')[0];

describe('when bursts bigger than 1 MiB for one partition are sent through the real broker', () => {
  let kafka: Kafka;
  let producer: Producer;

  beforeAll(async () => {
    kafka = createKafka();
    producer = kafka.producer({ allowAutoTopicCreation: false, maxInFlightRequests: 1, idempotent: false });
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
  });

  it('appends every forwarded and parked message exactly once, and refuses only the oversize one', async () => {
    const downstream = await createTopic(kafka, { prefix: 'sender-out', partitions: 2 });
    const tier = await createTopic(kafka, { prefix: 'sender-tier', partitions: 2 });
    const sender = createBatchSender({ producer, logger });
    const sends: Promise<void>[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 1500; i += 1) {
      const small = i % 50 === 0;
      const forwarded = `f${i}`;
      const parked = `p${i}`;
      ids.push(forwarded, parked);
      sends.push(sender.send(downstream, { key: small ? `other-${i}` : 'bursting-producer', value: body(forwarded, small ? 100 : 1024) }));
      sends.push(sender.send(tier, { key: 'bursting-producer', value: body(parked, small ? 100 : 1024), partition: small ? 1 : 0 }));
    }
    const oversize = sender.send(tier, { key: 'bursting-producer', value: body('huge', 1_200_000), partition: 0 });
    await Promise.all(sends);
    await expect(oversize).rejects.toMatchObject({ code: 'MESSAGE_TOO_LARGE' });

    const received = [...(await consumeAll(kafka, downstream)), ...(await consumeAll(kafka, tier))].map((m) => idOf(m.value));
    expect(received).toHaveLength(ids.length);
    expect(new Set(received).size).toBe(received.length);
    expect([...received].sort()).toEqual([...ids].sort());
  }, 60_000);
});
