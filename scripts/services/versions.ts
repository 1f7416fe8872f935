/**
 * Kafka broker versions: the ones kafka-pom.xml has a profile for, the default for `up`
 * (SLUICE_KAFKA_VERSION overrides it) and the ones `npm test` runs the integration suite against.
 */
import { ServicesError } from './errors';

export const KAFKA_VERSIONS = [
  '3.9.0', '3.9.1', '3.9.2',
  '4.0.0', '4.0.1', '4.0.2', '4.1.0', '4.1.1', '4.1.2', '4.2.0', '4.2.1', '4.3.0', '4.3.1',
] as const;

export const DEFAULT_KAFKA_VERSION = '3.9.2';

/**
 * `npm test` runs the integration suite against one broker (the services' default), and in CI
 * (the CI variable set, as `.ci/run` does) against one 3.9.x and the newest 4.x too (4.4.0 is on
 * Maven Central without its kafka-tools-api jar, so it cannot be fetched).
 * SLUICE_TEST_KAFKA_VERSIONS overrides both, comma-separated.
 */
export const DEFAULT_TEST_KAFKA_VERSIONS = [DEFAULT_KAFKA_VERSION];
export const CI_TEST_KAFKA_VERSIONS = ['3.9.2', '4.3.1'];

/** Whether this run is CI's (CI set to anything but "" or "false"). */
export const isCi = (env: NodeJS.ProcessEnv = process.env): boolean => env.CI !== undefined && env.CI !== '' && env.CI !== 'false';

const compare = (a: string, b: string): number => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/** An exact version, or a prefix such as `4`, `4.x` or `3.9` meaning the newest that matches. */
export const resolveKafkaVersion = (spec: string | undefined): string => {
  const wanted = (spec ?? process.env.SLUICE_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION).trim().replace(/\.x$/, '');
  const matches = KAFKA_VERSIONS.filter((v) => v === wanted || v.startsWith(`${wanted}.`)).sort(compare);
  const newest = matches[matches.length - 1];
  if (newest === undefined) {
    throw new ServicesError(`unknown Kafka version "${spec}": choose one of ${KAFKA_VERSIONS.join(', ')}`);
  }
  return newest;
};

/** Kafka 4 logs through log4j2, 3.x through reload4j. */
export const usesLog4j2 = (version: string): boolean => Number(version.split('.')[0]) >= 4;
