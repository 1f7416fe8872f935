/**
 * The kafkajs client from the settings, its log lines bridged into pino (warn and above),
 * and the first contact with the broker bounded: a broker that does not answer in time is
 * KAFKA_UNREACHABLE (exit 2). TLS takes the CA and a client certificate (mTLS) from PEM
 * files read here (a file that cannot be read is CONFIG_INVALID naming its key); SASL PLAIN
 * without TLS is allowed but warned about at creation.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Admin, Kafka, KafkaConfig, logLevel, SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/types';
import { SluiceError } from '../errors';
import { checkKafkajsPatch } from './kafkajs-patch';

const pinoLevel: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * A ListOffsets answered "not the leader" / "does not host this topic-partition": a topic just
 * created whose leader does not serve it yet. kafkajs logs every error answer at error level,
 * but this one is expected and retried (topics/create-topics.ts waits for it to pass): debug.
 */
const LEADER_NOT_READY = /not the leader for that topic-partition|does not host this topic-partition/;

/** The pino level of one kafkajs log entry. */
export const pinoLevelOf = (level: number, entry: { message?: string; error?: unknown }): 'error' | 'warn' | 'info' | 'debug' => {
  if (level === logLevel.ERROR && entry.message?.startsWith('Response ListOffsets') && typeof entry.error === 'string' && LEADER_NOT_READY.test(entry.error)) return 'debug';
  return pinoLevel[level] ?? 'info';
};

const tlsFiles = [
  { key: 'kafka.sslCa', env: 'SLUICE_KAFKA_SSL_CA', field: 'sslCa' },
  { key: 'kafka.sslCert', env: 'SLUICE_KAFKA_SSL_CERT', field: 'sslCert' },
  { key: 'kafka.sslKey', env: 'SLUICE_KAFKA_SSL_KEY', field: 'sslKey' },
] as const;

const readPem = (key: string, env: string, file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new SluiceError('CONFIG_INVALID', `${key} = ${JSON.stringify(file)} (${env}): cannot read it (${why}); expected a readable PEM file`, { cause: error });
  }
};

/** kafkajs's `ssl`: true (system CAs, no client certificate) or the PEM contents of the files set. */
const sslOf = (kafka: Config['kafka']): KafkaConfig['ssl'] => {
  if (!kafka.ssl) return undefined;
  const read = Object.fromEntries(
    tlsFiles.filter(({ field }) => kafka[field] !== undefined).map(({ key, env, field }) => [field, readPem(key, env, kafka[field] as string)]),
  ) as Partial<Record<(typeof tlsFiles)[number]['field'], string>>;
  if (Object.keys(read).length === 0) return true;
  const ssl: ConnectionOptions = {};
  if (read.sslCa !== undefined) ssl.ca = [read.sslCa];
  if (read.sslCert !== undefined) ssl.cert = read.sslCert;
  if (read.sslKey !== undefined) ssl.key = read.sslKey;
  return ssl;
};

/** The kafkajs options of the settings, less the logger. Throws CONFIG_INVALID for a TLS file it cannot read. */
export const kafkaOptionsOf = (config: Config): KafkaConfig => {
  const { kafka } = config;
  const ssl = sslOf(kafka);
  return {
    clientId: kafka.clientId,
    brokers: [...kafka.brokers],
    connectionTimeout: kafka.connectionTimeoutMs,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    ...(ssl !== undefined ? { ssl } : {}),
    ...(kafka.sasl ? { sasl: { ...kafka.sasl } as SASLOptions } : {}),
  };
};

/** SASL PLAIN sends the password as it is: over plaintext anyone on the path can read it. */
export const warnAboutCleartextSasl = (config: Config, logger: Logger): void => {
  if (config.kafka.sasl?.mechanism !== 'plain' || config.kafka.ssl) return;
  logger.warn(
    { brokers: config.kafka.brokers },
    'kafka.sasl.mechanism = plain without TLS: the SASL password crosses the network in clear text; set kafka.ssl=true (SLUICE_KAFKA_SSL) unless the network itself is encrypted',
  );
};

export const createKafka = (config: Config, logger: Logger): Kafka => {
  checkKafkajsPatch();
  const log = logger.child({ component: 'kafkajs' });
  const options = kafkaOptionsOf(config);
  warnAboutCleartextSasl(config, logger);
  return new Kafka({
    ...options,
    logLevel: logLevel.WARN,
    logCreator: () => ({ level, log: entry }) => {
      const { message, ...rest } = entry;
      log[pinoLevelOf(level, entry)]({ namespace: entry.namespace, ...rest }, message);
    },
  });
};

/** Connects an admin client; a broker that cannot be reached is KAFKA_UNREACHABLE. */
export const connectAdmin = async (kafka: Kafka, brokers: readonly string[]): Promise<Admin> => {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return admin;
  } catch (error) {
    throw new SluiceError('KAFKA_UNREACHABLE', `cannot reach the Kafka brokers ${brokers.join(',')}: ${(error as Error).message}`, { cause: error, retriable: true });
  }
};
