/**
 * Topics created at start wait for their leaders, also through the moment a KRaft broker says
 * "This server does not host this topic-partition" for a topic it has just created (kafkajs's
 * own waitForLeaders gave up there: seen in CI on Kafka 4.3.1), and through the moment after
 * that when metadata names a leader that does not serve the partition yet (a produce then was
 * appended on some partitions and resent whole: duplicates, seen in CI and in 25 of 60 probes).
 */
import type { Admin } from 'kafkajs';
import { createTopicsWithLeaders } from '../../../src/topics/create-topics';

const unknown = () => Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });

const notLeader = () => Object.assign(new Error('This server is not the leader for that topic-partition'), { type: 'NOT_LEADER_FOR_PARTITION' });

const adminWith = (answers: Array<() => unknown>, createError?: Error, offsetAnswers: Array<() => unknown> = [() => []]) => {
  const calls = { create: 0, metadata: 0, offsets: 0 };
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
    fetchTopicOffsets: async () => {
      const answer = offsetAnswers[Math.min(calls.offsets, offsetAnswers.length - 1)];
      calls.offsets += 1;
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
    expect(calls).toEqual({ create: 1, metadata: 3, offsets: 1 });
  });

  it('waits until the named leader serves the topic: its offsets can be listed', async () => {
    const { admin, calls } = adminWith([led(1)], undefined, [() => { throw notLeader(); }, () => { throw notLeader(); }, () => []]);
    await createTopicsWithLeaders(admin, [{ topic: 't' }]);
    expect(calls).toEqual({ create: 1, metadata: 3, offsets: 3 });
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
