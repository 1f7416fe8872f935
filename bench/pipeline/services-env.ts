/**
 * The broker and Redis to measure against: SLUICE_KAFKA_BROKERS and SLUICE_REDIS_URL when
 * set, otherwise what `npm run services -- up` prints (it starts or reuses the shared ones).
 */
import { execFileSync } from 'node:child_process';

export interface ServicesEnv {
  brokers: string;
  redisUrl: string;
}

export const servicesEnv = (env: NodeJS.ProcessEnv): ServicesEnv => {
  if (env.SLUICE_KAFKA_BROKERS && env.SLUICE_REDIS_URL) return { brokers: env.SLUICE_KAFKA_BROKERS, redisUrl: env.SLUICE_REDIS_URL };
  const out = execFileSync('npm', ['run', '-s', 'services', '--', 'up'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const values = new Map(out.split('\n').map((line) => line.trim().split('=', 2) as [string, string]).filter(([k, v]) => k && v));
  const brokers = values.get('SLUICE_KAFKA_BROKERS');
  const redisUrl = values.get('SLUICE_REDIS_URL');
  if (!brokers || !redisUrl) throw new Error(`services up printed no SLUICE_KAFKA_BROKERS/SLUICE_REDIS_URL: ${out}`);
  return { brokers, redisUrl };
};
