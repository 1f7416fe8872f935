/**
 * CPU per log line of the program's logger (src/logger.ts): 100k lines to /dev/null, half a
 * line with a few fields, half an error with a cause (the two shapes sluice logs most).
 *   npx tsx bench/micro/log-line.ts [path of logger.ts to measure]
 */
import { resolve } from 'node:path';
import pino from 'pino';

const LINES = 100_000;
const secrets = ['sasl-Pa55-word-1', 'redis-Pa55-word-2', 'tok-abcdef-3'];

const main = async (): Promise<void> => {
  const path = resolve(process.argv[2] ?? 'src/logger.ts');
  const { createLogger } = (await import(path)) as typeof import('../../src/logger');
  const destination = pino.destination({ dest: '/dev/null', sync: true });
  const logger = createLogger({ level: 'info', destination, secrets }).child({ component: 'ingress', group: 'sluice.orders' });
  const cause = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6379'), { code: 'ECONNREFUSED' });
  const error = new Error('Redis at redis://10.0.0.1:6379 did not answer', { cause });
  const line = (i: number): void => {
    if (i % 2 === 0) logger.info({ destination: 'orders.out', partition: i % 12, failures: 0, failingMs: 0 }, 'destination sends again');
    else logger.warn({ err: error, policy: 'local' }, 'limiter store call failed; applying limiter.onStoreError');
  };
  for (let i = 0; i < 10_000; i += 1) line(i);
  const start = process.cpuUsage();
  for (let i = 0; i < LINES; i += 1) line(i);
  const used = process.cpuUsage(start);
  const us = used.user + used.system;
  console.log(`${path}: ${LINES} lines, ${(us / 1000).toFixed(0)} ms CPU, ${(us / LINES).toFixed(2)} µs per line`);
};

void main();
