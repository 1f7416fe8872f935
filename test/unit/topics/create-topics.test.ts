/**
 * Topics created at start wait for their leaders, also through the moment a KRaft broker says
 * "This server does not host this topic-partition" for a topic it has just created (kafkajs's
 * own waitForLeaders gave up there: seen in CI on Kafka 4.3.1).
 */
import type { Admin } from 'kafkajs';
import { createTopicsWithLeaders } from '../../../src/topics/create-topics';

const unknown = () => Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });

const adminWith = (answers: Array<() => unknown>, createError?: Error) => {
  const calls = { create: 0, metadata: 0 };
  const admin = {
    createTopics: async () => {
      calls.create += 1;
      if (createError) throw createError;
      return true;
    },
    fetchTopicMetadata: async () => {
      const answer = answers[Math.min(calls.metadata, answers.length - 1)];
      calls.metadata += 1;
      return answer();
    },
  } as unknown as Admin;
  return { admin, calls };
};

const led = (leader: number) => () => ({ topics: [{ name: 't', partitions: [{ partitionId: 0, leader }] }] });

describe('createTopicsWithLeaders', () => {
  it('waits through unknown-topic answers and partitions without a leader', async () => {
    const { admin, calls } = adminWith([() => { throw unknown(); }, led(-1), led(1)]);
    await createTopicsWithLeaders(admin, [{ topic: 't' }]);
    expect(calls).toEqual({ create: 1, metadata: 3 });
  });

  it('takes a topic another replica created first', async () => {
    const exists = Object.assign(new Error('Topic with this name already exists'), { type: 'TOPIC_ALREADY_EXISTS' });
    const { admin } = adminWith([led(1)], exists);
    await expect(createTopicsWithLeaders(admin, [{ topic: 't' }])).resolves.toBeUndefined();
  });

  it('gives up after timeoutMs with KAFKA_UNREACHABLE (exit 2), naming the topics and the last error', async () => {
    const { admin } = adminWith([() => { throw unknown(); }]);
    await expect(createTopicsWithLeaders(admin, [{ topic: 't' }], { timeoutMs: 250 })).rejects.toMatchObject({
      code: 'KAFKA_UNREACHABLE',
      message: expect.stringMatching(/^topics t have no leader 250 ms after their creation: This server does not host/),
    });
  });
});
