/**
 * The environment of each side: the sidecar is configured only through its SLUICE_*
 * variables (as a user would), with a quota file written for the run; the pipe reads BENCH_*.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomName } from '../../test/helpers/names';
import type { ServicesEnv } from './services-env';

export interface SideTopics {
  ingress: string;
  downstream: string;
  group: string;
}

export interface SluiceSetup {
  /** Base name of the retry tiers and dead-letter topic (created by the sidecar). */
  parking: string;
  quotasFile: string;
  keyPrefix: string;
  /** More SLUICE_* settings for this phase (e.g. SLUICE_REDIS_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** 'default': leave retry.tiers to sluice (the tier topics are then found by name); otherwise TIERS. */
  tiers?: 'default';
}

export const TIERS = ['5s', '1m'];

export const parkingTopics = (parking: string): string[] => [...TIERS.map((t) => `${parking}.retry.${t}`), `${parking}.dlq`];

/** A quota file with one default rule, e.g. { rate: '1000000/s', queue: '1m' }, written in `dir` (the run's log folder). */
export const writeQuotas = (dir: string, rule: Record<string, string>): string => {
  const file = path.join(dir, `${randomName('quotas')}.yaml`);
  writeFileSync(file, `default:\n${Object.entries(rule).map(([k, v]) => `  ${k}: "${v}"`).join('\n')}\n`);
  return file;
};

export const sluiceEnv = (services: ServicesEnv, topics: SideTopics, setup: SluiceSetup, port: number): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  SLUICE_KAFKA_BROKERS: services.brokers,
  SLUICE_REDIS_URL: services.redisUrl,
  SLUICE_INGRESS_TOPIC: topics.ingress,
  SLUICE_DOWNSTREAM_TOPIC: topics.downstream,
  SLUICE_GROUP_ID: topics.group,
  SLUICE_RETRY_TOPIC: `${setup.parking}.retry`,
  SLUICE_DEAD_LETTER_TOPIC: `${setup.parking}.dlq`,
  ...(setup.tiers === 'default' ? {} : { SLUICE_RETRY_TIERS: TIERS.join(',') }),
  SLUICE_TOPICS_CREATE: 'true',
  SLUICE_QUOTAS_FILE: setup.quotasFile,
  SLUICE_REDIS_KEY_PREFIX: setup.keyPrefix,
  SLUICE_HTTP_HOST: '127.0.0.1',
  SLUICE_HTTP_PORT: String(port),
  SLUICE_HTTP_ADMIN_PORT: '0', // two replicas on one machine: each its own admin listener
  SLUICE_LOG_LEVEL: process.env.BENCH_SLUICE_LOG_LEVEL ?? 'warn', // debug: the ingress flow's pauses, among others
  ...setup.env,
  ...benchSluiceEnv(process.env.BENCH_SLUICE_ENV),
});

/** BENCH_SLUICE_ENV: more SLUICE_* settings for every sidecar of the run, `NAME=value` separated by spaces (they win over the phase's); `variable` names where they came from in an error. */
export const benchSluiceEnv = (text: string | undefined, variable = 'BENCH_SLUICE_ENV'): Record<string, string> => {
  const settings: Record<string, string> = {};
  for (const pair of (text ?? '').split(' ').filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0 || !pair.startsWith('SLUICE_')) throw new Error(`${variable}: "${pair}" is not SLUICE_NAME=value`);
    settings[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return settings;
};

export const pipeEnv = (services: ServicesEnv, topics: SideTopics): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  BENCH_BROKERS: services.brokers,
  BENCH_INGRESS: topics.ingress,
  BENCH_DOWNSTREAM: topics.downstream,
  BENCH_GROUP: topics.group,
});
