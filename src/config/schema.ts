/**
 * THE settings schema (convict): every key with its doc, format, default and environment
 * variable. Formats are the named parsers of formats.ts, or a list of allowed values.
 * `defaultText` is how a derived default reads in docs; `required` keys have no default.
 */

export interface SettingLeaf {
  doc: string;
  format: string | readonly string[];
  default: string | number | boolean;
  env: string;
  sensitive?: boolean;
  required?: boolean;
  defaultText?: string;
}
export interface SettingBranch {
  [key: string]: SettingNode;
}
export type SettingNode = SettingLeaf | SettingBranch;

export const isLeaf = (node: SettingNode): node is SettingLeaf => typeof (node as SettingLeaf).env === 'string';

export const schema = {
  kafka: {
    brokers: { doc: 'Kafka bootstrap brokers, host:port, comma-separated.', format: 'sluice-brokers', default: '127.0.0.1:9092', env: 'SLUICE_KAFKA_BROKERS' },
    clientId: { doc: 'Kafka client id of the consumers and the producer.', format: 'sluice-string', default: 'sluice', env: 'SLUICE_KAFKA_CLIENT_ID' },
    ssl: { doc: 'Connect to Kafka with TLS (also on when kafka.sslCa or kafka.sslCert is set).', format: 'sluice-boolean', default: false, env: 'SLUICE_KAFKA_SSL' },
    sslCa: { doc: 'Path of a PEM file with the CA certificates that sign the brokers\' certificates; empty: the system CAs.', format: 'sluice-optional-string', default: '', env: 'SLUICE_KAFKA_SSL_CA' },
    sslCert: { doc: 'Path of a PEM file with the client certificate for TLS client authentication (mTLS); set with kafka.sslKey.', format: 'sluice-optional-string', default: '', env: 'SLUICE_KAFKA_SSL_CERT' },
    sslKey: { doc: 'Path of a PEM file with the private key of kafka.sslCert (unencrypted); set with kafka.sslCert.', format: 'sluice-optional-string', default: '', env: 'SLUICE_KAFKA_SSL_KEY' },
    sasl: {
      mechanism: { doc: 'SASL mechanism; empty: no SASL.', format: ['', 'plain', 'scram-sha-256', 'scram-sha-512'], default: '', env: 'SLUICE_KAFKA_SASL_MECHANISM' },
      username: { doc: 'SASL user name (required with a mechanism).', format: 'sluice-optional-string', default: '', env: 'SLUICE_KAFKA_SASL_USERNAME' },
      password: { doc: 'SASL password (required with a mechanism); never logged.', format: 'sluice-optional-string', default: '', env: 'SLUICE_KAFKA_SASL_PASSWORD', sensitive: true },
    },
    connectionTimeoutMs: { doc: 'How long to wait for a broker connection; at start, a cluster not reached in this time ends the command with exit 2.', format: 'sluice-duration-ms', default: 10000, env: 'SLUICE_KAFKA_CONNECTION_TIMEOUT_MS' },
    stuckAfterMs: { doc: 'How long Kafka trouble may last before /healthz fails: a topic refusing every send (the stuck messages are retried, never skipped; only their source partitions wait), or a consumer that has not heard from its group (no heartbeat, fetch or join).', format: 'sluice-duration-ms', default: 300000, env: 'SLUICE_KAFKA_STUCK_AFTER_MS' },
  },
  topics: {
    ingress: { doc: 'Topic the producers write to; sluice consumes it.', format: 'sluice-topic', default: '', env: 'SLUICE_INGRESS_TOPIC', required: true },
    downstream: { doc: 'Topic conforming messages are forwarded to; must exist.', format: 'sluice-topic', default: '', env: 'SLUICE_DOWNSTREAM_TOPIC', required: true },
    retry: { doc: 'Base name of the retry tiers: one topic <retry>.<tier> per tier.', format: 'sluice-topic', default: '', env: 'SLUICE_RETRY_TOPIC', defaultText: '<ingress>.retry' },
    deadLetter: { doc: 'Dead-letter topic.', format: 'sluice-topic', default: '', env: 'SLUICE_DEAD_LETTER_TOPIC', defaultText: '<ingress>.dlq' },
    create: { doc: 'Create missing retry tiers and the dead-letter topic at start.', format: 'sluice-boolean', default: false, env: 'SLUICE_TOPICS_CREATE' },
  },
  group: { doc: 'Consumer group of the ingress topic (a new group starts from the earliest offset).', format: 'sluice-optional-string', default: '', env: 'SLUICE_GROUP_ID', defaultText: 'sluice.<ingress>' },
  retry: {
    group: { doc: 'Consumer group of the drainer of the retry tiers (and of sluice drain).', format: 'sluice-optional-string', default: '', env: 'SLUICE_RETRY_GROUP_ID', defaultText: '<group>.retry' },
    tiers: { doc: 'Fixed delays of the retry tiers, one topic each. The default lets any wait up to a day be parked with at most two tier writes.', format: 'sluice-durations', default: '5s,15s,1m,5m,15m,1h,6h,1d', env: 'SLUICE_RETRY_TIERS' },
    maxAttempts: { doc: 'A message is decided at most this many times, then dead-lettered.', format: 'sluice-positive-int', default: 10, env: 'SLUICE_RETRY_MAX_ATTEMPTS' },
    maxAge: { doc: 'A message older than this since first seen is dead-lettered.', format: 'sluice-duration', default: '1d', env: 'SLUICE_RETRY_MAX_AGE' },
  },
  hold: {
    maxMs: { doc: 'Longest wait held in memory; longer waits are parked. At least the smallest tier.', format: 'sluice-duration-ms', default: 5000, env: 'SLUICE_HOLD_MAX_MS' },
    maxMessages: { doc: 'Most messages held in memory at once (waiting for their slot or being written); past it the consumer pauses. Each costs about 2 KB of heap besides its bytes.', format: 'sluice-positive-int', default: 30000, env: 'SLUICE_HOLD_MAX_MESSAGES' },
    maxBytes: { doc: 'Most message bytes held in memory at once; past it the consumer pauses.', format: 'sluice-byte-size', default: '64MiB', env: 'SLUICE_HOLD_MAX_BYTES' },
  },
  commit: {
    intervalMs: { doc: 'How often acknowledged offsets are committed.', format: 'sluice-duration-ms', default: 200, env: 'SLUICE_COMMIT_INTERVAL_MS' },
  },
  identity: {
    source: { doc: 'Where the producer id is read: a header or the message key.', format: ['header', 'key'], default: 'header', env: 'SLUICE_IDENTITY_SOURCE' },
    header: { doc: 'Header that carries the producer id (identity.source = header).', format: 'sluice-string', default: 'producer-id', env: 'SLUICE_IDENTITY_HEADER' },
    fallback: { doc: 'Producer id used when a message carries none.', format: 'sluice-string', default: 'unidentified', env: 'SLUICE_IDENTITY_FALLBACK' },
  },
  redis: {
    url: { doc: 'Redis URL (standalone); a password in it is never logged.', format: 'sluice-redis-url', default: 'redis://127.0.0.1:6379', env: 'SLUICE_REDIS_URL' },
    clusterNodes: { doc: 'Redis Cluster seed nodes, host:port, comma-separated; when set it wins over redis.url.', format: 'sluice-host-ports', default: '', env: 'SLUICE_REDIS_CLUSTER_NODES' },
    password: { doc: 'Redis password (standalone and cluster); overrides one in redis.url; never logged.', format: 'sluice-optional-string', default: '', env: 'SLUICE_REDIS_PASSWORD', sensitive: true },
    tls: { doc: 'Connect to Redis with TLS, system CAs (on by itself for a rediss:// URL); the way to TLS with redis.clusterNodes.', format: 'sluice-boolean', default: false, env: 'SLUICE_REDIS_TLS' },
    keyPrefix: { doc: 'Prefix of every Redis key; two deployments sharing a Redis use different prefixes.', format: 'sluice-key-prefix', default: 'sluice:', env: 'SLUICE_REDIS_KEY_PREFIX' },
    timeoutMs: { doc: 'Timeout of one Redis command; past it the store-error policy applies.', format: 'sluice-duration-ms', default: 50, env: 'SLUICE_REDIS_TIMEOUT_MS' },
  },
  quotas: {
    file: { doc: 'Quota file (YAML); reloaded when it changes on disk.', format: 'sluice-string', default: 'config/quotas.yaml', env: 'SLUICE_QUOTAS_FILE' },
  },
  limiter: {
    onStoreError: { doc: 'When Redis fails: local (quota ÷ replicas in memory), park or forward.', format: ['local', 'park', 'forward'], default: 'local', env: 'SLUICE_ON_STORE_ERROR' },
  },
  mode: { doc: 'enforce, or shadow: measure and report, never delay or park.', format: ['enforce', 'shadow'], default: 'enforce', env: 'SLUICE_MODE' },
  http: {
    host: { doc: 'Address of the main HTTP listener: /healthz, /readyz, /metrics (and /v1/* only with http.adminToken).', format: 'sluice-string', default: '0.0.0.0', env: 'SLUICE_HTTP_HOST' },
    port: { doc: 'Port of the main HTTP listener (0: any free port).', format: 'sluice-port', default: 9464, env: 'SLUICE_HTTP_PORT' },
    adminHost: { doc: 'Address of the admin listener, which serves /v1/* (and the probes and /metrics); loopback by default, so only the pod itself reaches it. Any other address requires http.adminToken.', format: 'sluice-string', default: '127.0.0.1', env: 'SLUICE_HTTP_ADMIN_HOST' },
    adminPort: { doc: 'Port of the admin listener (0: any free port).', format: 'sluice-port', default: 9465, env: 'SLUICE_HTTP_ADMIN_PORT' },
    adminToken: { doc: 'Bearer token for /v1/*: set, /v1/* also answers on http.port, and on a non-loopback http.adminHost, to clients that send Authorization: Bearer <token>; empty: /v1/* answers only on a loopback admin listener. Probes and /metrics stay open; never logged.', format: 'sluice-optional-string', default: '', env: 'SLUICE_HTTP_ADMIN_TOKEN', sensitive: true },
  },
  usage: {
    resolutions: { doc: 'Per-producer usage history in Redis: bucket:retention pairs (empty: none).', format: 'sluice-usage-resolutions', default: '1s:10m,1m:48h,1h:30d', env: 'SLUICE_USAGE_RESOLUTIONS' },
  },
  log: {
    level: { doc: 'Least severe level written to the log (JSON lines on stdout).', format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', env: 'SLUICE_LOG_LEVEL' },
  },
} as const satisfies SettingBranch;

export interface FlatSetting extends SettingLeaf {
  key: string;
}

/** Every leaf of the schema with its dotted key, in schema order. */
export const flattenSchema = (node: SettingBranch = schema, prefix = ''): FlatSetting[] =>
  Object.entries(node).flatMap(([name, child]) =>
    isLeaf(child) ? [{ ...child, key: prefix + name }] : flattenSchema(child, `${prefix}${name}.`),
  );
