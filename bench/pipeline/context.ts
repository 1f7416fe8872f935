/**
 * What every phase of the benchmark shares: the services, a kafkajs client and a Redis client
 * for the harness, the run's topic book, where side logs go, and `launch`, which starts a side
 * on given topics and waits until it has joined its group.
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import type { Kafka } from 'kafkajs';
import { freePort } from '../../scripts/services/ports';
import { createKafka } from '../../test/helpers/kafka';
import { randomGroupId, randomId } from '../../test/helpers/names';
import type { ServicesEnv } from './services-env';
import { startSide, type Side, type SideKind } from './side';
import { benchSluiceEnv, parkingTopics, pipeEnv, type SideTopics, sluiceEnv, type SluiceSetup, writeQuotas } from './side-env';
import { topicBook, type TopicBook } from './topics';

export interface BenchContext {
  services: ServicesEnv;
  kafka: Kafka;
  redis: Redis;
  book: TopicBook;
  logDir: string;
  /** A parking base, quota file and key prefix for sluice runs with one default rule. */
  sluiceSetup(rule: Record<string, string>): SluiceSetup;
  launch(kind: SideKind, topics: Omit<SideTopics, 'group'> & { group?: string }, setup: SluiceSetup): Promise<Side>;
  close(): Promise<void>;
}

export const createContext = async (services: ServicesEnv): Promise<BenchContext> => {
  process.env.SLUICE_KAFKA_BROKERS = services.brokers;
  const kafka = createKafka();
  const redis = new Redis(services.redisUrl);
  const book = await topicBook(kafka);
  const logDir = path.join(os.tmpdir(), `sluice-bench-${Date.now()}`);
  mkdirSync(logDir, { recursive: true });
  let runs = 0;
  return {
    services, kafka, redis, book, logDir,
    sluiceSetup(rule) {
      const setup = { parking: `sluice-bench-park-${randomId()}`, quotasFile: writeQuotas(logDir, rule), keyPrefix: `sb${randomId(2)}:` };
      book.remember(...parkingTopics(setup.parking));
      return setup;
    },
    async launch(kind, topics, setup) {
      runs += 1;
      const all = { group: randomGroupId('bench'), ...topics };
      const log = path.join(logDir, `${String(runs).padStart(3, '0')}-${kind}.log`);
      const port = await freePort();
      const env = kind === 'pipe' ? pipeEnv(services, all) : { ...sluiceEnv(services, all, setup, port), ...(kind === 'sluice' ? benchSluiceEnv(process.env.BENCH_SLUICE_ONLY_ENV, 'BENCH_SLUICE_ONLY_ENV') : {}) };
      const side = startSide(kind, env, log, port);
      try {
        await side.ready();
      } catch (error) {
        await side.stop();
        throw error;
      }
      return side;
    },
    async close() {
      await book.deleteAll();
      redis.disconnect();
    },
  };
};
