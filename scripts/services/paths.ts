/**
 * Where the services live: state, data and logs under `.services/<service>/` in the repository;
 * Kafka jars under `~/.cache/sluice/kafka/<version>/lib` (SLUICE_CACHE_DIR overrides the root).
 */
import os from 'node:os';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');

export const servicesDir = (): string => path.join(repoRoot, '.services');

export const serviceDir = (name: string): string => path.join(servicesDir(), name);

export const kafkaCacheDir = (version: string): string =>
  path.join(process.env.SLUICE_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'sluice'), 'kafka', version);

export const kafkaPom = (): string => path.join(__dirname, 'kafka-pom.xml');
