import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load-config';
import { SluiceError } from '../../../src/errors';

const topics = { SLUICE_INGRESS_TOPIC: 'orders', SLUICE_DOWNSTREAM_TOPIC: 'orders.out' };

// Every file a test writes goes under one folder, removed when the file's tests end.
const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writeTemp = (name: string, text: string): string => {
  const path = join(mkdtempSync(join(dir, 'case-')), name);
  writeFileSync(path, text);
  return path;
};

const errorOf = (load: () => unknown): SluiceError => {
  try {
    load();
  } catch (error) {
    return error as SluiceError;
  }
  throw new Error('expected loadConfig to throw');
};

describe('loadConfig', () => {
  describe('when only the required topics are set', () => {
    const config = loadConfig({ env: topics });

    it('applies the defaults of the contract', () => {
      expect(config.kafka.brokers).toEqual(['127.0.0.1:9092']);
      expect(config.kafka.clientId).toBe('sluice');
      expect(config.kafka.ssl).toBe(false);
      expect(config.kafka.sasl).toBeUndefined();
      expect(config.topics.create).toBe(false);
      expect(config.retry.maxAttempts).toBe(10);
      expect(config.retry.maxAgeMs).toBe(86_400_000);
      expect(config.hold.maxMs).toBe(5000);
      expect(config.identity).toEqual({ source: 'header', header: 'producer-id', fallback: 'unidentified' });
      expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', clusterNodes: [], keyPrefix: 'sluice:', timeoutMs: 50, tls: false });
      expect(config.quotas.file).toBe('config/quotas.yaml');
      expect(config.limiter.onStoreError).toBe('local');
      expect(config.mode).toBe('enforce');
      expect(config.http).toEqual({ host: '0.0.0.0', port: 9464, adminHost: '127.0.0.1', adminPort: 9465 });
      expect(config.log.level).toBe('info');
    });

    it('derives the retry base, dead-letter topic and both groups from the ingress topic', () => {
      expect(config.topics.retry).toBe('orders.retry');
      expect(config.topics.deadLetter).toBe('orders.dlq');
      expect(config.group).toBe('sluice.orders');
      expect(config.retry.group).toBe('sluice.orders.retry');
    });

    it('names one topic per retry tier, shortest first', () => {
      expect(config.retry.tiers).toEqual([
        { delayMs: 5000, label: '5s', topic: 'orders.retry.5s' },
        { delayMs: 15_000, label: '15s', topic: 'orders.retry.15s' },
        { delayMs: 60_000, label: '1m', topic: 'orders.retry.1m' },
        { delayMs: 300_000, label: '5m', topic: 'orders.retry.5m' },
        { delayMs: 900_000, label: '15m', topic: 'orders.retry.15m' },
        { delayMs: 3_600_000, label: '1h', topic: 'orders.retry.1h' },
        { delayMs: 21_600_000, label: '6h', topic: 'orders.retry.6h' },
        { delayMs: 86_400_000, label: '1d', topic: 'orders.retry.1d' },
      ]);
    });

    it('returns a deeply frozen object', () => {
      expect(Object.isFrozen(config)).toBe(true);
      expect(Object.isFrozen(config.retry.tiers[0])).toBe(true);
      expect(Object.isFrozen(config.kafka.brokers)).toBe(true);
    });
  });

  describe('when a group is set but not the retry group', () => {
    it('derives the retry group from the group', () => {
      const config = loadConfig({ env: { ...topics, SLUICE_GROUP_ID: 'g1' } });
      expect(config.retry.group).toBe('g1.retry');
    });
  });

  describe('when environment variables set values', () => {
    it('parses lists, booleans, numbers and durations', () => {
      const config = loadConfig({
        env: {
          ...topics,
          SLUICE_KAFKA_BROKERS: 'k1:9092, k2:9093',
          SLUICE_KAFKA_SSL: 'true',
          SLUICE_RETRY_TIERS: '1h,2s,30s',
          SLUICE_RETRY_MAX_AGE: '12h',
          SLUICE_HOLD_MAX_MS: '2s',
          SLUICE_HOLD_MAX_BYTES: '1MiB',
          SLUICE_REDIS_CLUSTER_NODES: 'r1:7000,r2:7001',
          SLUICE_HTTP_PORT: '0',
          SLUICE_TOPICS_CREATE: 'yes',
        },
      });
      expect(config.kafka.brokers).toEqual(['k1:9092', 'k2:9093']);
      expect(config.kafka.ssl).toBe(true);
      expect(config.retry.tiers.map((t) => t.label)).toEqual(['2s', '30s', '1h']);
      expect(config.retry.maxAgeMs).toBe(43_200_000);
      expect(config.hold).toEqual({ maxMs: 2000, maxMessages: 30000, maxBytes: 1_048_576 });
      expect(config.redis.clusterNodes).toEqual([
        { host: 'r1', port: 7000 },
        { host: 'r2', port: 7001 },
      ]);
      expect(config.http.port).toBe(0);
      expect(config.topics.create).toBe(true);
    });

    it('turns TLS on when a CA file is given', () => {
      const config = loadConfig({ env: { ...topics, SLUICE_KAFKA_SSL_CA: '/etc/ca.pem' } });
      expect(config.kafka).toMatchObject({ ssl: true, sslCa: '/etc/ca.pem' });
    });

    it('turns TLS on and keeps both paths when a client certificate and its key are given', () => {
      const config = loadConfig({ env: { ...topics, SLUICE_KAFKA_SSL_CERT: '/etc/client.pem', SLUICE_KAFKA_SSL_KEY: '/etc/client.key' } });
      expect(config.kafka).toMatchObject({ ssl: true, sslCert: '/etc/client.pem', sslKey: '/etc/client.key' });
      expect(config.kafka.sslCa).toBeUndefined();
    });

    it('turns Redis TLS on for redis.tls or a rediss:// URL', () => {
      expect(loadConfig({ env: { ...topics, SLUICE_REDIS_TLS: 'true' } }).redis.tls).toBe(true);
      expect(loadConfig({ env: { ...topics, SLUICE_REDIS_URL: 'rediss://redis:6380' } }).redis.tls).toBe(true);
    });

    it('keeps the admin token when set, and leaves it out when empty', () => {
      expect(loadConfig({ env: { ...topics, SLUICE_HTTP_ADMIN_TOKEN: 'tok-123' } }).http.adminToken).toBe('tok-123');
      expect(loadConfig({ env: topics }).http).toEqual({ host: '0.0.0.0', port: 9464, adminHost: '127.0.0.1', adminPort: 9465 });
    });

    it('builds the SASL settings when a mechanism is set', () => {
      const env = { ...topics, SLUICE_KAFKA_SASL_MECHANISM: 'scram-sha-512', SLUICE_KAFKA_SASL_USERNAME: 'u', SLUICE_KAFKA_SASL_PASSWORD: 'p' };
      expect(loadConfig({ env }).kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'u', password: 'p' });
    });
  });

  describe('when a config file is given', () => {
    it('reads YAML, and the environment wins over the file', () => {
      const file = writeTemp('sluice.yaml', 'topics:\n  ingress: a\n  downstream: b\nretry:\n  tiers: [2s, 1m]\nhttp:\n  port: 8080\n');
      const config = loadConfig({ file, env: { SLUICE_HTTP_PORT: '9000' } });
      expect(config.topics.ingress).toBe('a');
      expect(config.retry.tiers.map((t) => t.delayMs)).toEqual([2000, 60_000]);
      expect(config.http.port).toBe(9000);
    });

    it('reads JSON', () => {
      const file = writeTemp('sluice.json', JSON.stringify({ topics: { ingress: 'a', downstream: 'b' }, mode: 'shadow' }));
      expect(loadConfig({ file, env: {} }).mode).toBe('shadow');
    });

    it('takes the file from SLUICE_CONFIG when no file is passed', () => {
      const file = writeTemp('sluice.yaml', 'topics: { ingress: x, downstream: y }\n');
      expect(loadConfig({ env: { SLUICE_CONFIG: file } }).topics.ingress).toBe('x');
    });

    it('lets overrides win over the environment', () => {
      expect(loadConfig({ env: { ...topics, SLUICE_HTTP_PORT: '1' }, args: { 'http.port': 2 } }).http.port).toBe(2);
    });
  });

  describe('when topics are not required', () => {
    it('loads without them', () => {
      expect(loadConfig({ env: {}, requireTopics: false }).retry.maxAgeMs).toBe(86_400_000);
    });
  });

  describe('when settings are wrong', () => {
    const cases: Array<[string, NodeJS.ProcessEnv, string]> = [
      ['a missing ingress topic', { SLUICE_DOWNSTREAM_TOPIC: 'b' }, 'topics.ingress is required: set SLUICE_INGRESS_TOPIC (or topics.ingress in the config file)'],
      ['a bad broker list', { ...topics, SLUICE_KAFKA_BROKERS: 'localhost' }, 'kafka.brokers = "localhost" (from SLUICE_KAFKA_BROKERS): expected a comma-separated list of host:port, e.g. 127.0.0.1:9092'],
      ['a bad boolean', { ...topics, SLUICE_TOPICS_CREATE: 'maybe' }, 'topics.create = "maybe" (from SLUICE_TOPICS_CREATE): expected true or false'],
      ['a bad number', { ...topics, SLUICE_RETRY_MAX_ATTEMPTS: '0' }, 'retry.maxAttempts = "0" (from SLUICE_RETRY_MAX_ATTEMPTS): expected a whole number ≥ 1'],
      ['a bad duration', { ...topics, SLUICE_RETRY_MAX_AGE: 'forever' }, 'retry.maxAge = "forever" (from SLUICE_RETRY_MAX_AGE): expected a duration > 0 such as 500ms, 5s, 1m, 1h or 1d (not a number followed by a unit)'],
      ['duplicate tiers', { ...topics, SLUICE_RETRY_TIERS: '5s,5000ms' }, 'retry.tiers = "5s,5000ms" (from SLUICE_RETRY_TIERS): expected a comma-separated list of distinct durations > 0, e.g. 5s,1m,10m,1h (5s twice)'],
      ['a zero tier', { ...topics, SLUICE_RETRY_TIERS: '0s,1m' }, 'retry.tiers = "0s,1m" (from SLUICE_RETRY_TIERS): expected a comma-separated list of distinct durations > 0, e.g. 5s,1m,10m,1h ("0s": zero is not allowed here)'],
      ['a hold size in unknown units', { ...topics, SLUICE_HOLD_MAX_BYTES: '64mb' }, 'hold.maxBytes = "64mb" (from SLUICE_HOLD_MAX_BYTES): expected a size > 0 in bytes, or with a unit such as 512KiB, 64MiB or 1GB (unknown unit "mb"; the units are B, KB, KiB, MB, MiB, GB, GiB, case-sensitive)'],
      ['an unknown enum value', { ...topics, SLUICE_ON_STORE_ERROR: 'drop' }, 'limiter.onStoreError = "drop" (from SLUICE_ON_STORE_ERROR): expected one of local, park, forward'],
      ['a bad topic name', { ...topics, SLUICE_DEAD_LETTER_TOPIC: 'a b' }, `topics.deadLetter = "a b" (from SLUICE_DEAD_LETTER_TOPIC): expected a Kafka topic name (letters, digits, '.', '_' and '-', at most 249 characters)`],
      ['a port out of range', { ...topics, SLUICE_HTTP_PORT: '70000' }, 'http.port = "70000" (from SLUICE_HTTP_PORT): expected a port number from 0 to 65535'],
      ['braces in the key prefix', { ...topics, SLUICE_REDIS_KEY_PREFIX: '{x}' }, 'redis.keyPrefix = "{x}" (from SLUICE_REDIS_KEY_PREFIX): expected a string without braces (Redis Cluster hash tags are added by sluice)'],
      ['hold shorter than the smallest tier', { ...topics, SLUICE_HOLD_MAX_MS: '1000' }, 'hold.maxMs = 1000: expected at least the smallest retry tier (5s = 5000 ms)'],
      ['downstream equal to ingress', { SLUICE_INGRESS_TOPIC: 'a', SLUICE_DOWNSTREAM_TOPIC: 'a' }, 'topics.downstream = "a": must differ from topics.ingress (sluice would read its own output)'],
      ['the retry group equal to the group', { ...topics, SLUICE_GROUP_ID: 'g', SLUICE_RETRY_GROUP_ID: 'g' }, 'retry.group = "g": must differ from group (the drainer needs its own consumer group)'],
      ['a mechanism without credentials', { ...topics, SLUICE_KAFKA_SASL_MECHANISM: 'plain' }, 'kafka.sasl.mechanism = "plain": expected kafka.sasl.username and kafka.sasl.password to be set too'],
      ['a client certificate without its key', { ...topics, SLUICE_KAFKA_SSL_CERT: '/etc/c.pem' }, 'kafka.sslCert = "/etc/c.pem": expected kafka.sslKey to be set too (a client certificate and its key go together)'],
      ['a client key without its certificate', { ...topics, SLUICE_KAFKA_SSL_KEY: '/etc/c.key' }, 'kafka.sslKey = "/etc/c.key": expected kafka.sslCert to be set too (a client certificate and its key go together)'],
      ['credentials without a mechanism', { ...topics, SLUICE_KAFKA_SASL_USERNAME: 'u' }, 'kafka.sasl.mechanism is empty but a SASL user name or password is set: set SLUICE_KAFKA_SASL_MECHANISM'],
    ];
    it.each(cases)('refuses %s with a message naming key, value and expectation', (_name, env, message) => {
      const error = errorOf(() => loadConfig({ env }));
      expect(error).toBeInstanceOf(SluiceError);
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toBe(message);
    });

    it('reports every problem at once, one line each', () => {
      const error = errorOf(() => loadConfig({ env: { SLUICE_MODE: 'loud', SLUICE_LOG_LEVEL: 'chatty' } }));
      expect(error.message.split('\n')).toEqual([
        'topics.ingress is required: set SLUICE_INGRESS_TOPIC (or topics.ingress in the config file)',
        'topics.downstream is required: set SLUICE_DOWNSTREAM_TOPIC (or topics.downstream in the config file)',
        'mode = "loud" (from SLUICE_MODE): expected one of enforce, shadow',
        'log.level = "chatty" (from SLUICE_LOG_LEVEL): expected one of fatal, error, warn, info, debug, trace, silent',
      ]);
    });
  });

  describe('when a value is a secret', () => {
    it('masks the password inside a Redis URL', () => {
      const error = errorOf(() => loadConfig({ env: { ...topics, SLUICE_REDIS_URL: 'http://user:hunter2@redis:6379' } }));
      expect(error.message).toBe('redis.url = "http://user:***@redis:6379" (from SLUICE_REDIS_URL): expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379');
    });

    it('masks the admin token', () => {
      const file = writeTemp('s.yaml', 'http:\n  adminToken: [tok-hunter2]\n');
      const error = errorOf(() => loadConfig({ file, env: topics }));
      expect(error.message).toBe(`http.adminToken = "***" (from ${file}): expected a string`);
    });

    it('masks the SASL password', () => {
      const file = writeTemp('s.yaml', 'kafka:\n  sasl:\n    password: [hunter2]\n');
      const error = errorOf(() => loadConfig({ file, env: topics }));
      expect(error.message).toBe(`kafka.sasl.password = "***" (from ${file}): expected a string`);
      expect(error.message).not.toContain('hunter2');
    });
  });

  describe('when the config file is wrong', () => {
    it('refuses an unknown key and suggests the closest one', () => {
      const file = writeTemp('s.yaml', 'kafka:\n  broker: k:9092\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toBe(`unknown setting kafka.broker in ${file}; did you mean kafka.brokers?`);
    });

    it('refuses an environment variable name used as a key', () => {
      const file = writeTemp('s.yaml', 'SLUICE_MODE: shadow\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toBe(
        `unknown setting SLUICE_MODE in ${file}; did you mean mode? (SLUICE_MODE is its environment variable)`,
      );
    });

    it('refuses a dotted key and says to nest it', () => {
      const file = writeTemp('s.yaml', '"http.port": 1\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toBe(`unknown setting http.port in ${file}; write it nested (http: { port: … })`);
    });

    it('refuses a scalar where a group of settings belongs', () => {
      const file = writeTemp('s.yaml', 'log: debug\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toBe(`log in ${file} must be a mapping of settings (log.level)`);
    });

    it('names the file and line of a syntax error', () => {
      const file = writeTemp('s.yaml', 'http:\n  port: [1\nmode: x\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toMatch(new RegExp(`^${file}:3: `));
    });

    it('names a file that does not exist', () => {
      expect(errorOf(() => loadConfig({ file: '/nonexistent/sluice.yaml', env: topics })).message).toBe(
        'cannot read config file /nonexistent/sluice.yaml: no such file',
      );
    });

    it('names the file as the source of a bad value', () => {
      const file = writeTemp('s.yaml', 'identity:\n  source: body\n');
      expect(errorOf(() => loadConfig({ file, env: topics })).message).toBe(`identity.source = "body" (from ${file}): expected one of header, key`);
    });

    it('refuses an unknown override key', () => {
      expect(errorOf(() => loadConfig({ env: topics, args: { 'http.prot': 1 } })).message).toBe('unknown setting http.prot on the command line');
    });
  });
});

describe('loadConfig with a list of numbers', () => {
  describe('when retry.tiers is a YAML list of plain numbers', () => {
    it('refuses them: a tier is written with its unit (it names a topic)', () => {
      const file = writeTemp('s.yaml', 'topics: { ingress: a, downstream: b }\nretry:\n  tiers: [5000, 60000]\n');
      expect(errorOf(() => loadConfig({ file, env: {} })).message).toBe(
        `retry.tiers = [5000,60000] (from ${file}): expected a comma-separated list of distinct durations > 0, e.g. 5s,1m,10m,1h ("5000": a number needs a unit here)`,
      );
    });

    it('reads a YAML list of durations', () => {
      const file = writeTemp('s.yaml', 'topics: { ingress: a, downstream: b }\nretry:\n  tiers: [5s, 1m]\n');
      expect(loadConfig({ file, env: {} }).retry.tiers.map((t) => t.label)).toEqual(['5s', '1m']);
    });
  });

  describe('when a …Ms setting is a YAML number', () => {
    it('reads it as milliseconds', () => {
      const file = writeTemp('s.yaml', 'topics: { ingress: a, downstream: b }\nredis:\n  timeoutMs: 80\n');
      expect(loadConfig({ file, env: {} }).redis.timeoutMs).toBe(80);
    });
  });
});
