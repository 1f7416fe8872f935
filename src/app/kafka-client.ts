/**
 * The kafkajs client from the settings, its log lines bridged into pino (warn and above),
 * and the first contact with the broker bounded: a broker that does not answer in time is
 * KAFKA_UNREACHABLE (exit 2).
 */
import { readFileSync } from 'node:fs';
import { Admin, Kafka, KafkaConfig, logLevel, SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/types';
import { SluiceError } from '../errors';

const pinoLevel: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

export const createKafka = (config: Config, logger: Logger): Kafka => {
  const { kafka } = config;
  const log = logger.child({ component: 'kafkajs' });
  const options: KafkaConfig = {
    clientId: kafka.clientId,
    brokers: [...kafka.brokers],
    connectionTimeout: kafka.connectionTimeoutMs,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ level, log: entry }) => {
      const { message, ...rest } = entry;
      log[pinoLevel[level] ?? 'info']({ namespace: entry.namespace, ...rest }, message);
    },
  };
  if (kafka.ssl) options.ssl = kafka.sslCa ? { ca: [readFileSync(kafka.sslCa, 'utf8')] } : true;
  if (kafka.sasl) options.sasl = { ...kafka.sasl } as SASLOptions;
  return new Kafka(options);
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
