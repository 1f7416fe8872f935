/**
 * The kafkajs client from the settings: TLS with a CA and a client certificate (mTLS), a
 * warning for SASL PLAIN in clear text, clear errors for TLS files that cannot be read, and
 * exit 2 for a Kafka error that ends a command.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, logLevel } from 'kafkajs';
import { createKafka, kafkaOptionsOf, pinoLevelOf } from '../../../src/app/kafka-client';
import { loadConfig } from '../../../src/config';
import { exitCodeOf, SluiceError } from '../../../src/errors';
import { createLogger } from '../../../src/logger';

const topics = { SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.out' };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-kafka-tls-'));
const pem = (name: string, text: string): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const capture = () => {
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(JSON.parse(line)) } });
  return { logger, warnings: () => lines.filter((l) => l.level === 'warn').map((l) => l.msg) };
};

const sasl = (mechanism: string) => ({ SLUICE_KAFKA_SASL_MECHANISM: mechanism, SLUICE_KAFKA_SASL_USERNAME: 'u', SLUICE_KAFKA_SASL_PASSWORD: 'sasl-pw' });

describe('the Kafka client', () => {
  describe('when kafkajs logs an answer as an error', () => {
    it('logs a ListOffsets "not the leader" of a topic just created at debug (it is waited out), every other error as an error', () => {
      const notLeader = { message: 'Response ListOffsets(key: 2, version: 3)', error: 'This server is not the leader for that topic-partition' };
      expect(pinoLevelOf(logLevel.ERROR, notLeader)).toBe('debug');
      expect(pinoLevelOf(logLevel.ERROR, { ...notLeader, error: 'This server does not host this topic-partition' })).toBe('debug');
      expect(pinoLevelOf(logLevel.ERROR, { ...notLeader, message: 'Response Produce(key: 0, version: 7)' })).toBe('error');
      expect(pinoLevelOf(logLevel.ERROR, { ...notLeader, error: 'Not authorized to access topics: [Topic authorization failed]' })).toBe('error');
      expect(pinoLevelOf(logLevel.WARN, { message: 'x' })).toBe('warn');
    });
  });

  describe('when SASL PLAIN is set without TLS', () => {
    it('warns at creation that the password crosses the network in clear text', () => {
      const { logger, warnings } = capture();
      createKafka(loadConfig({ env: { ...topics, ...sasl('plain') } }), logger);
      expect(warnings()).toEqual([expect.stringMatching(/kafka\.sasl\.mechanism = plain without TLS.*clear text.*SLUICE_KAFKA_SSL/)]);
      expect(warnings().join('')).not.toContain('sasl-pw');
    });
  });

  describe('when SASL PLAIN runs over TLS, or SCRAM without it', () => {
    it('does not warn', () => {
      const { logger, warnings } = capture();
      createKafka(loadConfig({ env: { ...topics, ...sasl('plain'), SLUICE_KAFKA_SSL: 'true' } }), logger);
      createKafka(loadConfig({ env: { ...topics, ...sasl('scram-sha-512') } }), logger);
      expect(warnings()).toEqual([]);
    });
  });

  describe('when a client certificate and its key are set', () => {
    it('hands kafkajs the CA, the certificate and the key', () => {
      const env = {
        ...topics,
        SLUICE_KAFKA_SSL_CA: pem('ca.pem', 'CA PEM'),
        SLUICE_KAFKA_SSL_CERT: pem('client.pem', 'CERT PEM'),
        SLUICE_KAFKA_SSL_KEY: pem('client.key', 'KEY PEM'),
      };
      expect(kafkaOptionsOf(loadConfig({ env })).ssl).toEqual({ ca: ['CA PEM'], cert: 'CERT PEM', key: 'KEY PEM' });
      const withoutCa = { ...env, SLUICE_KAFKA_SSL_CA: '' };
      expect(kafkaOptionsOf(loadConfig({ env: withoutCa })).ssl).toEqual({ cert: 'CERT PEM', key: 'KEY PEM' });
    });

    it('plain TLS with the system CAs stays `true`', () => {
      expect(kafkaOptionsOf(loadConfig({ env: { ...topics, SLUICE_KAFKA_SSL: 'true' } })).ssl).toBe(true);
      expect(kafkaOptionsOf(loadConfig({ env: topics })).ssl).toBeUndefined();
    });
  });

  describe.each([
    ['kafka.sslCa', 'SLUICE_KAFKA_SSL_CA', {}],
    ['kafka.sslCert', 'SLUICE_KAFKA_SSL_CERT', { SLUICE_KAFKA_SSL_KEY: pem('k.key', 'KEY') }],
    ['kafka.sslKey', 'SLUICE_KAFKA_SSL_KEY', { SLUICE_KAFKA_SSL_CERT: pem('c.pem', 'CERT') }],
  ])('when %s cannot be read', (key, env, others) => {
    it('refuses with CONFIG_INVALID (exit 1) naming the key, the file, its variable and what was expected', () => {
      const missing = path.join(dir, 'nowhere.pem');
      const { logger } = capture();
      let failure: unknown;
      try {
        createKafka(loadConfig({ env: { ...topics, ...others, [env]: missing } }), logger);
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(SluiceError);
      expect(failure).toMatchObject({ code: 'CONFIG_INVALID' });
      expect((failure as Error).message).toBe(`${key} = "${missing}" (${env}): cannot read it (ENOENT); expected a readable PEM file`);
      expect(exitCodeOf(failure)).toBe(1);
    });
  });
});

describe('the exit code of a Kafka error that ends a command', () => {
  const lost = () => new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'), { retryCount: 5, retryTime: 2000 });

  it('is 2 for a kafkajs error, even one wrapped in another error', () => {
    expect(exitCodeOf(lost())).toBe(2);
    expect(exitCodeOf(new Error('group join failed', { cause: lost() }))).toBe(2);
  });

  it('stays 3 for any other error', () => {
    expect(exitCodeOf(new TypeError('x is undefined'))).toBe(3);
  });
});
