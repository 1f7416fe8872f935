/** The real broker: what is produced comes back through a consumer group, headers and all. */
import { Kafka } from 'kafkajs';
import { consumeAll, createKafka, createTopic, headerValues, produce, waitForMessages } from '../../helpers/kafka';
import { randomId } from '../../helpers/names';

describe('when messages are produced to a topic on the real broker', () => {
  let kafka: Kafka;
  let topic: string;
  const ids = Array.from({ length: 20 }, () => randomId());

  beforeAll(async () => {
    kafka = createKafka();
    topic = await createTopic(kafka, { prefix: 'round-trip', partitions: 3 });
    await produce(
      kafka,
      topic,
      ids.map((id, i) => ({
        key: `producer-${i % 4}`,
        value: JSON.stringify({ id }),
        headers: { 'message-id': id, trace: ['first', 'second'] },
      })),
    );
  });

  it('delivers every message exactly once to a consumer group, checked by id', async () => {
    const messages = await waitForMessages(kafka, topic, ids.length);
    const received = messages.map((m) => (JSON.parse(String(m.value)) as { id: string }).id);
    expect(received.sort()).toEqual([...ids].sort());
  });

  it('keeps headers, including repeated header keys in order, and gives timestamps', async () => {
    const messages = await consumeAll(kafka, topic);
    expect(messages).toHaveLength(ids.length);
    for (const message of messages) {
      const { id } = JSON.parse(String(message.value)) as { id: string };
      expect(headerValues(message.headers, 'message-id')).toEqual([id]);
      expect(headerValues(message.headers, 'trace')).toEqual(['first', 'second']);
      expect(Math.abs(Number(message.timestamp) - Date.now())).toBeLessThan(10 * 60_000);
    }
  });

  it('keeps the order of one key within its partition', async () => {
    const messages = await consumeAll(kafka, topic);
    const sentForKey = ids.filter((_, i) => i % 4 === 0);
    const readForKey = messages
      .filter((m) => String(m.key) === 'producer-0')
      .sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)))
      .map((m) => (JSON.parse(String(m.value)) as { id: string }).id);
    expect(new Set(messages.filter((m) => String(m.key) === 'producer-0').map((m) => m.partition)).size).toBe(1);
    expect(readForKey).toEqual(sentForKey);
  });

  it('lets a connected client idle between requests: no check re-armed every millisecond (kafkajs#1556, patched)', async () => {
    const idleTopic = await createTopic(kafka, { prefix: 'idle-timers', partitions: 1 });
    const producer = kafka.producer();
    await producer.connect();
    try {
      // The broker's answers are where the loop began: each one re-armed a 1 ms check for good.
      await producer.send({ topic: idleTopic, messages: [{ value: 'x' }] });
      const timers = jest.spyOn(global, 'setTimeout');
      try {
        await new Promise((resolve) => setTimeout(resolve, 500)); // the window observed, one timer of its own
        expect(timers.mock.calls.length).toBeLessThan(10); // unpatched: about 450 in 500 ms
      } finally {
        timers.mockRestore();
      }
    } finally {
      await producer.disconnect();
    }
  });
});
