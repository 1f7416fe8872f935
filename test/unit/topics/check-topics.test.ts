/**
 * A Kafka error while the topics are checked at start (a broker lost after the first
 * connection, a topic the principal may not describe) ends the command with exit 2, as a
 * SluiceError naming what was being checked: never as an internal error (exit 3).
 */
import { Writable } from 'node:stream';
import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, type Admin } from 'kafkajs';
import { exitCodeOf, SluiceError } from '../../../src/errors';
import { createLogger } from '../../../src/logger';
import { checkTopics } from '../../../src/topics/check-topics';

const plan = { ingress: 'events', downstream: 'events.out', parking: ['events.retry.5s', 'events.dlq'], deadLetter: 'events.dlq', largestTierMs: 5000, create: false };
const logger = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

const denied = () =>
  // the shape kafkajs builds from the broker's error code (its typings only admit a string or an Error)
  new KafkaJSProtocolError({ type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false, message: 'Not authorized to access topics: [Topic authorization failed]' } as unknown as Error);
const lost = () =>
  new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 10.0.0.1:9092'), { retryCount: 5, retryTime: 2000 });

/** an admin whose topic list is fine but `failing` throws `error`. */
const adminThat = (failing: 'listTopics' | 'describeConfigs', error: Error): Admin =>
  ({
    listTopics: async () => {
      if (failing === 'listTopics') throw error;
      return [plan.ingress, plan.downstream, ...plan.parking];
    },
    describeConfigs: async () => {
      throw error;
    },
  }) as unknown as Admin;

describe('checkTopics', () => {
  describe.each([
    ['the broker is lost after the first connection', 'listTopics' as const, lost, 'KAFKA_UNREACHABLE', /checking the topics at start: .*ECONNREFUSED/],
    ['the principal may not describe a topic', 'describeConfigs' as const, denied, 'TOPIC_INVALID', /checking the topics at start: Not authorized .*TOPIC_AUTHORIZATION_FAILED/],
  ])('when %s', (_name, failing, error, code, message) => {
    it(`fails with ${code} (exit 2), saying what was checked`, async () => {
      const failure = await checkTopics(adminThat(failing, error()), plan, logger).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(SluiceError);
      expect(failure).toMatchObject({ code, message: expect.stringMatching(message) });
      expect(exitCodeOf(failure)).toBe(2);
    });
  });

  describe('when a topic is missing', () => {
    it('still names it as TOPIC_INVALID', async () => {
      const admin = { listTopics: async () => [plan.ingress] } as unknown as Admin;
      await expect(checkTopics(admin, plan, logger)).rejects.toMatchObject({ code: 'TOPIC_INVALID', message: expect.stringMatching(/^topic events.out: does not exist/) });
    });
  });
});
