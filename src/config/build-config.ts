/**
 * From validated flat values (dotted key → parsed value) to the typed Config: derived
 * defaults resolved, tier topics named, and the checks that span several keys.
 */
import { formatDuration } from './units';
import type { Resolution } from './usage-resolutions';
import type { Config, HostPort, LogLevel, Mode, OnStoreError, SaslMechanism } from './types';

export type FlatValues = Readonly<Record<string, unknown>>;

const hostPort = (text: string): HostPort => {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(at + 1)) };
};

const topicsOf = (v: FlatValues) => {
  const ingress = v['topics.ingress'] as string;
  const group = (v['group'] as string) || `sluice.${ingress}`;
  return {
    ingress,
    downstream: v['topics.downstream'] as string,
    retry: (v['topics.retry'] as string) || `${ingress}.retry`,
    deadLetter: (v['topics.deadLetter'] as string) || `${ingress}.dlq`,
    create: v['topics.create'] as boolean,
    group,
    retryGroup: (v['retry.group'] as string) || `${group}.retry`,
  };
};

const saslOf = (v: FlatValues): Config['kafka']['sasl'] => {
  const mechanism = v['kafka.sasl.mechanism'] as SaslMechanism | '';
  if (mechanism === '') return undefined;
  return { mechanism, username: v['kafka.sasl.username'] as string, password: v['kafka.sasl.password'] as string };
};

/** The TLS file paths that are set (empty means unset). */
const tlsFilesOf = (v: FlatValues): { sslCa?: string; sslCert?: string; sslKey?: string } =>
  Object.fromEntries((['sslCa', 'sslCert', 'sslKey'] as const).map((key) => [key, v[`kafka.${key}`] as string]).filter(([, path]) => path !== ''));

const optional = (value: string): string | undefined => (value === '' ? undefined : value);

/** Assembles the Config; the caller checks it with crossCheck before handing it out. */
export const buildConfig = (v: FlatValues): Config => {
  const t = topicsOf(v);
  const tlsFiles = tlsFilesOf(v);
  const password = v['redis.password'] as string;
  const adminToken = optional(v['http.adminToken'] as string);
  return {
    kafka: {
      brokers: v['kafka.brokers'] as string[],
      clientId: v['kafka.clientId'] as string,
      ssl: (v['kafka.ssl'] as boolean) || Object.keys(tlsFiles).length > 0,
      ...tlsFiles,
      ...(saslOf(v) ? { sasl: saslOf(v) } : {}),
      connectionTimeoutMs: v['kafka.connectionTimeoutMs'] as number,
      stuckAfterMs: v['kafka.stuckAfterMs'] as number,
    },
    topics: { ingress: t.ingress, downstream: t.downstream, retry: t.retry, deadLetter: t.deadLetter, create: t.create },
    group: t.group,
    retry: {
      group: t.retryGroup,
      tiers: (v['retry.tiers'] as number[]).map((delayMs) => ({
        delayMs,
        label: formatDuration(delayMs),
        topic: `${t.retry}.${formatDuration(delayMs)}`,
      })),
      maxAttempts: v['retry.maxAttempts'] as number,
      maxAgeMs: v['retry.maxAge'] as number,
    },
    hold: {
      maxMs: v['hold.maxMs'] as number,
      maxMessages: v['hold.maxMessages'] as number,
      maxBytes: v['hold.maxBytes'] as number,
    },
    commit: { intervalMs: v['commit.intervalMs'] as number },
    identity: {
      source: v['identity.source'] as 'header' | 'key',
      header: v['identity.header'] as string,
      fallback: v['identity.fallback'] as string,
    },
    redis: {
      url: v['redis.url'] as string,
      clusterNodes: (v['redis.clusterNodes'] as string[]).map(hostPort),
      ...(password !== '' ? { password } : {}),
      tls: (v['redis.tls'] as boolean) || /^rediss:/i.test(v['redis.url'] as string),
      keyPrefix: v['redis.keyPrefix'] as string,
      timeoutMs: v['redis.timeoutMs'] as number,
    },
    quotas: { file: v['quotas.file'] as string },
    limiter: { onStoreError: v['limiter.onStoreError'] as OnStoreError },
    mode: v['mode'] as Mode,
    http: {
      host: v['http.host'] as string, port: v['http.port'] as number,
      adminHost: v['http.adminHost'] as string, adminPort: v['http.adminPort'] as number,
      ...(adminToken ? { adminToken } : {}),
    },
    usage: { resolutions: v['usage.resolutions'] as Resolution[] },
    log: { level: v['log.level'] as LogLevel },
  };
};

const topicChecks = (c: Config): string[] => {
  const errors: string[] = [];
  const { ingress, downstream, deadLetter } = c.topics;
  if (downstream === ingress) errors.push(`topics.downstream = "${downstream}": must differ from topics.ingress (sluice would read its own output)`);
  const named = [
    ...c.retry.tiers.map((tier) => ({ key: `retry tier ${tier.label}`, topic: tier.topic })),
    { key: 'topics.deadLetter', topic: deadLetter },
  ];
  for (const { key, topic } of named) {
    if (topic === ingress || topic === downstream) errors.push(`${key} = "${topic}": must differ from topics.ingress and topics.downstream`);
    if (topic.length > 249) errors.push(`${key} = "${topic}": a Kafka topic name has at most 249 characters (shorten topics.retry)`);
  }
  return errors;
};

/** The checks that span several keys; each error line names the keys involved. */
export const crossCheck = (c: Config, options: { requireTopics: boolean }): string[] => {
  const errors: string[] = [];
  const smallest = c.retry.tiers[0];
  if (c.hold.maxMs < smallest.delayMs) {
    errors.push(`hold.maxMs = ${c.hold.maxMs}: expected at least the smallest retry tier (${smallest.label} = ${smallest.delayMs} ms)`);
  }
  if (c.retry.group === c.group) errors.push(`retry.group = "${c.retry.group}": must differ from group (the drainer needs its own consumer group)`);
  if (c.kafka.sasl && (c.kafka.sasl.username === '' || c.kafka.sasl.password === '')) {
    errors.push(`kafka.sasl.mechanism = "${c.kafka.sasl.mechanism}": expected kafka.sasl.username and kafka.sasl.password to be set too`);
  }
  if ((c.kafka.sslCert === undefined) !== (c.kafka.sslKey === undefined)) {
    const [set, unset] = c.kafka.sslCert !== undefined ? ['kafka.sslCert', 'kafka.sslKey'] : ['kafka.sslKey', 'kafka.sslCert'];
    errors.push(`${set} = "${c.kafka.sslCert ?? c.kafka.sslKey}": expected ${unset} to be set too (a client certificate and its key go together)`);
  }
  if (options.requireTopics) errors.push(...topicChecks(c));
  return errors;
};
