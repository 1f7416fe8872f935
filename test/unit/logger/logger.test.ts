import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config/load-config';
import { SluiceError } from '../../../src/errors';
import { createLogger, redactSecrets, redactString } from '../../../src/logger';

const SASL = 'sasl-Pa55-word-1';
const REDIS = 'redis-Pa55-word-2';
const TOKEN = 'tok-abcdef-3';
const SECRET = 'shh-secret-4';

const capture = (secrets: string[] = []) => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'trace', destination, secrets });
  return { logger, lines, text: () => lines.join('\n') };
};

const expectNoSecrets = (text: string) => {
  for (const secret of [SASL, REDIS, TOKEN, SECRET]) expect(text).not.toContain(secret);
};

describe('logger', () => {
  describe('when the settings, with every secret set, are logged', () => {
    const config = loadConfig({
      env: {
        SLUICE_INGRESS_TOPIC: 'orders', SLUICE_DOWNSTREAM_TOPIC: 'orders.out',
        SLUICE_KAFKA_SASL_MECHANISM: 'scram-sha-512', SLUICE_KAFKA_SASL_USERNAME: 'sluice', SLUICE_KAFKA_SASL_PASSWORD: SASL,
        SLUICE_REDIS_URL: `redis://default:${SECRET}@redis:6379/0`, SLUICE_REDIS_PASSWORD: REDIS, SLUICE_HTTP_ADMIN_TOKEN: TOKEN,
      },
    });

    it('masks the SASL and Redis passwords, the admin token and the password inside redis.url, whole or in parts', () => {
      const { logger, lines, text } = capture();
      logger.info({ config }, 'starting');
      logger.info(config, 'the settings at the top level');
      logger.info({ kafka: config.kafka, redis: config.redis, http: config.http, sasl: config.kafka.sasl }, 'in parts');
      expectNoSecrets(text());
      const line = JSON.parse(lines[0]);
      expect(line.msg).toBe('starting');
      expect(line.level).toBe('info');
      expect(line.config.kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'sluice', password: '[redacted]' });
      expect(line.config.redis.url).toBe('redis://default:[redacted]@redis:6379/0');
      expect(line.config.http.adminToken).toBe('[redacted]');
      expect(line.config.topics.ingress).toBe('orders');
    });

    it('leaves the logged object as it was', () => {
      capture().logger.info({ config: { redis: { password: REDIS } } });
      expect(config.kafka.sasl?.password).toBe(SASL);
    });
  });

  describe("when a field named for a secret, or a request's credentials, are logged", () => {
    it('masks them', () => {
      const { logger, lines, text } = capture();
      logger.info({ password: SASL, token: TOKEN, secret: SECRET, headers: { authorization: `Bearer ${TOKEN}`, cookie: `s=${SECRET}`, host: 'h' } });
      logger.info({ url: `redis://u:${REDIS}@redis:6379` });
      logger.info({ url: new URL(`redis://u:${REDIS}@redis:6379`) });
      expectNoSecrets(text());
      expect(JSON.parse(lines[0]).headers.host).toBe('h');
      expect(JSON.parse(lines[1]).url).toBe('redis://u:[redacted]@redis:6379');
    });
  });

  describe('when an error carrying secrets is logged', () => {
    it('masks URL passwords in its message, stack and cause', () => {
      const { logger, text, lines } = capture();
      const cause = new Error(`connect ECONNREFUSED redis://:${REDIS}@10.0.0.1:6379`);
      const error = new SluiceError('STORE_UNAVAILABLE', `Redis at redis://u:${REDIS}@redis:6379 did not answer`, { cause });
      logger.error({ err: error }, 'store down');
      logger.error(error);
      expectNoSecrets(text());
      expect(JSON.parse(lines[0]).err.code).toBe('STORE_UNAVAILABLE');
    });
  });

  describe('when secrets appear in the message text or in child bindings', () => {
    it('masks them too', () => {
      const { logger, text } = capture([SASL, TOKEN]);
      logger.child({ redisPassword: REDIS, url: `amqp://a:${SECRET}@h` }).warn(`login with ${SASL} and token ${TOKEN} failed for kafka://x:${SECRET}@b`);
      logger.info('%s', `password is ${SASL}`);
      expectNoSecrets(text());
    });
  });

  describe('when nothing secret is logged', () => {
    it('leaves the values alone', () => {
      expect(redactSecrets({ url: 'redis://redis:6379', topic: 'events', passwordless: false, n: 3 })).toEqual({
        url: 'redis://redis:6379',
        topic: 'events',
        passwordless: false,
        n: 3,
      });
      expect(redactString('http://host:9464/metrics')).toBe('http://host:9464/metrics');
    });
  });

  describe('when a URL password holds an @', () => {
    it('masks all of it, up to the last @ before the host', () => {
      expect(redactString(`redis://u:${REDIS}@x@redis:6379/0 and more`)).toBe('redis://u:[redacted]@redis:6379/0 and more');
    });
  });

  describe('when an ioredis error carrying the AUTH command is logged', () => {
    /** what ioredis attaches to a reply error: the command and its arguments (AUTH: the password). */
    const authError = (args: string[]) => Object.assign(new Error('WRONGPASS invalid username-password pair or user is disabled.'), {
      name: 'ReplyError',
      command: { name: 'auth', args },
    });

    it('drops the arguments, whatever key the error is logged under, and keeps the command name', () => {
      const { logger, lines, text } = capture();
      logger.warn({ err: authError([REDIS]) }, 'redis connection trouble');
      logger.warn({ error: authError(['sluice', REDIS]) }, 'as a plain field');
      logger.error(authError([REDIS]));
      logger.warn({ err: new Error('wrapped', { cause: authError([REDIS]) }) }, 'as a cause');
      expectNoSecrets(text());
      expect(JSON.parse(lines[0]).err.command).toEqual({ name: 'auth', args: '[redacted]' });
      expect(JSON.parse(lines[0]).err.message).toMatch(/^WRONGPASS/);
    });
  });

  describe('when the level is above a call', () => {
    it('writes nothing for it', () => {
      const lines: string[] = [];
      const destination = new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) });
      const logger = createLogger({ level: 'warn', destination });
      logger.info('quiet');
      logger.warn('loud');
      expect(lines).toHaveLength(1);
    });
  });
});
