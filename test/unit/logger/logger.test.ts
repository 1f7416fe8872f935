import { Writable } from 'node:stream';
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
  describe('when a settings summary with secrets is logged', () => {
    it('masks the SASL password, passwords in URLs and anything named password, secret or token', () => {
      const { logger, lines, text } = capture();
      logger.info(
        {
          config: {
            kafka: { brokers: ['k:9092'], sasl: { mechanism: 'scram-sha-512', username: 'sluice', password: SASL } },
            redis: { url: `redis://default:${REDIS}@redis:6379/0`, clusterNodes: [`rediss://:${REDIS}@node-1:6379`] },
            auth: { apiToken: TOKEN, clientSecret: SECRET, accessToken: TOKEN },
          },
        },
        'starting',
      );
      expectNoSecrets(text());
      const line = JSON.parse(lines[0]);
      expect(line.msg).toBe('starting');
      expect(line.level).toBe('info');
      expect(line.config.kafka.sasl.username).toBe('sluice');
      expect(line.config.kafka.sasl.password).toBe('[redacted]');
      expect(line.config.redis.url).toBe('redis://default:[redacted]@redis:6379/0');
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
