import { maskUrl } from '../../../src/config/redact';
import { settingsMarkdown, settingsTable } from '../../../src/config/settings-table';

const contractKeys: Array<[string, string, string]> = [
  ['kafka.brokers', 'SLUICE_KAFKA_BROKERS', '127.0.0.1:9092'],
  ['kafka.clientId', 'SLUICE_KAFKA_CLIENT_ID', 'sluice'],
  ['kafka.ssl', 'SLUICE_KAFKA_SSL', 'false'],
  ['kafka.sslCa', 'SLUICE_KAFKA_SSL_CA', 'empty'],
  ['kafka.sasl.mechanism', 'SLUICE_KAFKA_SASL_MECHANISM', 'empty'],
  ['kafka.sasl.username', 'SLUICE_KAFKA_SASL_USERNAME', 'empty'],
  ['kafka.sasl.password', 'SLUICE_KAFKA_SASL_PASSWORD', 'empty'],
  ['topics.ingress', 'SLUICE_INGRESS_TOPIC', 'required'],
  ['topics.downstream', 'SLUICE_DOWNSTREAM_TOPIC', 'required'],
  ['topics.retry', 'SLUICE_RETRY_TOPIC', '<ingress>.retry'],
  ['topics.deadLetter', 'SLUICE_DEAD_LETTER_TOPIC', '<ingress>.dlq'],
  ['topics.create', 'SLUICE_TOPICS_CREATE', 'false'],
  ['group', 'SLUICE_GROUP_ID', 'sluice.<ingress>'],
  ['retry.group', 'SLUICE_RETRY_GROUP_ID', '<group>.retry'],
  ['retry.tiers', 'SLUICE_RETRY_TIERS', '5s,15s,1m,5m,15m,1h,6h,1d'],
  ['retry.maxAttempts', 'SLUICE_RETRY_MAX_ATTEMPTS', '10'],
  ['retry.maxAge', 'SLUICE_RETRY_MAX_AGE', '1d'],
  ['hold.maxMs', 'SLUICE_HOLD_MAX_MS', '5000'],
  ['identity.source', 'SLUICE_IDENTITY_SOURCE', 'header'],
  ['identity.header', 'SLUICE_IDENTITY_HEADER', 'producer-id'],
  ['identity.fallback', 'SLUICE_IDENTITY_FALLBACK', 'unidentified'],
  ['redis.url', 'SLUICE_REDIS_URL', 'redis://127.0.0.1:6379'],
  ['redis.clusterNodes', 'SLUICE_REDIS_CLUSTER_NODES', 'empty'],
  ['redis.keyPrefix', 'SLUICE_REDIS_KEY_PREFIX', 'sluice:'],
  ['redis.timeoutMs', 'SLUICE_REDIS_TIMEOUT_MS', '50'],
  ['quotas.file', 'SLUICE_QUOTAS_FILE', 'config/quotas.yaml'],
  ['limiter.onStoreError', 'SLUICE_ON_STORE_ERROR', 'local'],
  ['mode', 'SLUICE_MODE', 'enforce'],
  ['http.host', 'SLUICE_HTTP_HOST', '0.0.0.0'],
  ['http.port', 'SLUICE_HTTP_PORT', '9464'],
  ['http.adminHost', 'SLUICE_HTTP_ADMIN_HOST', '127.0.0.1'],
  ['http.adminPort', 'SLUICE_HTTP_ADMIN_PORT', '9465'],
  ['http.adminToken', 'SLUICE_HTTP_ADMIN_TOKEN', 'empty'],
  ['log.level', 'SLUICE_LOG_LEVEL', 'info'],
];

describe('settingsTable', () => {
  const rows = settingsTable();

  it.each(contractKeys)('lists %s with %s and default %s, as docs/contract.md fixes them', (key, env, shown) => {
    expect(rows.find((row) => row.key === key)).toMatchObject({ env, default: shown });
  });

  it('gives every key a doc string and its own environment variable', () => {
    expect(rows.every((row) => row.doc.length > 10)).toBe(true);
    expect(new Set(rows.map((row) => row.env)).size).toBe(rows.length);
    expect(rows.every((row) => row.env.startsWith('SLUICE_'))).toBe(true);
  });

  it('marks the secrets', () => {
    expect(rows.filter((row) => row.sensitive).map((row) => row.key)).toEqual(['kafka.sasl.password', 'redis.password', 'http.adminToken']);
  });

  it('renders a Markdown row per key', () => {
    expect(settingsMarkdown().split('\n')).toHaveLength(rows.length + 2);
  });
});

describe('maskUrl', () => {
  it('masks the password inside a URL and keeps the rest', () => {
    expect(maskUrl('rediss://default:url-secret@redis:6380/0')).toBe('rediss://default:***@redis:6380/0');
    expect(maskUrl('redis://redis:6379')).toBe('redis://redis:6379');
  });

  it('masks it in a value that is not a URL yet', () => {
    expect(maskUrl('default:url-secret@redis:6380')).toBe('default:***@redis:6380');
  });
});
