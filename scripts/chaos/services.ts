/**
 * The chaos suite's own Kafka broker and Redis: started by the suite in its run directory, on
 * free loopback ports, each in a process group of its own, and stopped at the end. They are
 * private on purpose: the suite pauses them (SIGSTOP) and flushes Redis, which must never hit
 * the services other work shares (`npm run services -- up`, a CI run's). The broker is built
 * exactly like the repository's (scripts/services: the same jars, server.properties and
 * logging config), plus `auto.create.topics.enable=false` so a deleted topic stays deleted until
 * the suite creates it again.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loggingConfig, serverProperties } from '../services/kafka-config';
import { describeClusterAnswers, KAFKA_MARKER } from '../services/kafka-broker';
import { ensureKafkaJars } from '../services/maven-fetch';
import { ensureRedisInstalled, requireJavaAndMaven } from '../services/prerequisites';
import { freePorts, HOST } from '../services/ports';
import { Detached, isAlive, startDetached, stopGroup, tailOf } from '../services/processes';
import { redisCli } from '../services/redis';
import { resolveKafkaVersion } from '../services/versions';
import { resumeGroup, sleep } from './faults';

export interface PrivateService {
  name: string;
  /** Leader of the service's process group (what the faults pause). */
  pid: number;
  log: string;
}

export interface Services {
  brokers: string;
  redisUrl: string;
  kafkaVersion: string;
  kafka: PrivateService;
  redis: PrivateService;
}

/** Every group this process started, so that an interrupted run still ends them. */
const started = new Set<number>();

/** Sync, for the process's `exit` event: SIGCONT (a paused group ignores SIGTERM until resumed) and SIGKILL. */
export const killServicesNow = (): void => {
  for (const pid of started) {
    for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(-pid, signal);
      } catch {
        // gone already
      }
    }
  }
  started.clear();
};

const detached = (command: string, args: string[], log: string, cwd: string): Detached => {
  const child = startDetached(command, args, log, cwd);
  started.add(child.pid);
  return child;
};

const startRedis = async (dir: string): Promise<{ service: PrivateService; url: string }> => {
  const [port] = await freePorts(1);
  const home = path.join(dir, 'redis');
  fs.mkdirSync(home, { recursive: true });
  const log = path.join(home, 'redis.log');
  const child = detached('redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', home, '--logfile', ''], log, home);
  const deadline = Date.now() + 30_000;
  while ((await redisCli(port, ['ping'])) !== 'PONG') {
    if (child.exited() || Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start; last lines of ${log}:\n${tailOf(log)}`);
    await sleep(100);
  }
  return { service: { name: 'redis', pid: child.pid, log }, url: `redis://${HOST}:${port}` };
};

const formatLogDir = (lib: string, properties: string): Promise<void> =>
  new Promise((done, fail) => {
    const id = crypto.randomBytes(16).toString('base64url').replace(/^-/, 'A');
    execFile('java', ['-cp', `${lib}/*`, 'kafka.tools.StorageTool', 'format', '-t', id, '-c', properties, '--ignore-formatted'], { timeout: 120_000 },
      (error, stdout, stderr) => (error ? fail(new Error(`formatting the Kafka log directory failed:\n${`${stdout}${stderr}`.trim()}`)) : done()));
  });

const launchKafka = async (home: string, lib: string, version: string): Promise<{ service: PrivateService; brokers: string }> => {
  const data = path.join(home, 'data');
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(data, { recursive: true });
  const [port, controllerPort] = await freePorts(2);
  const properties = path.join(home, 'server.properties');
  fs.writeFileSync(properties, `${serverProperties({ port, controllerPort }, data)}auto.create.topics.enable=false\n`);
  const logging = loggingConfig(version, (name) => path.join(home, name));
  fs.writeFileSync(logging.path, logging.content);
  await formatLogDir(lib, properties);
  const log = path.join(home, 'kafka.log');
  const jvm = ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true', logging.jvmOption];
  const child = detached('java', [...jvm, '-cp', `${lib}/*`, KAFKA_MARKER, properties], log, home);
  const deadline = Date.now() + 120_000;
  while (!fs.readFileSync(log, 'utf8').includes('Kafka Server started')) {
    if (child.exited() || Date.now() > deadline) {
      await stopGroup(child.pid, undefined, 10_000);
      started.delete(child.pid);
      throw new Error(`the chaos Kafka broker did not start; last lines of ${log}:\n${tailOf(log)}`);
    }
    await sleep(250);
  }
  const brokers = `${HOST}:${port}`;
  if (!(await describeClusterAnswers(brokers, Date.now() + 30_000))) throw new Error(`the chaos Kafka broker started but does not answer on ${brokers}`);
  return { service: { name: 'kafka', pid: child.pid, log }, brokers };
};

/** A port taken between choosing and binding it (another process was faster) gets one more try, as `npm run services` does. */
const startKafka = async (dir: string, version: string): Promise<{ service: PrivateService; brokers: string }> => {
  const lib = await ensureKafkaJars(version);
  const home = path.join(dir, 'kafka');
  try {
    return await launchKafka(home, lib, version);
  } catch (error) {
    if (!/Address already in use/i.test((error as Error).message)) throw error;
    return launchKafka(home, lib, version);
  }
};

/**
 * Starts both (in parallel) under `dir`; on failure whatever did start is stopped again. The
 * programs are checked first, as `npm run services` does: Redis is installed with apt-get when
 * missing and we are root, a missing Java or Maven is named.
 */
export const startServices = async (dir: string): Promise<Services> => {
  const kafkaVersion = resolveKafkaVersion(process.env.CHAOS_KAFKA_VERSION);
  requireJavaAndMaven();
  ensureRedisInstalled();
  const [redis, kafka] = await Promise.allSettled([startRedis(dir), startKafka(dir, kafkaVersion)]);
  if (redis.status === 'rejected' || kafka.status === 'rejected') {
    await stopServices();
    throw (redis.status === 'rejected' ? redis.reason : (kafka as PromiseRejectedResult).reason) as Error;
  }
  return { brokers: kafka.value.brokers, redisUrl: redis.value.url, kafkaVersion, kafka: kafka.value.service, redis: redis.value.service };
};

/** Resumes (in case one is paused) and stops every group started here: SIGTERM, SIGKILL after 10 s. */
export const stopServices = async (): Promise<void> => {
  const pids = [...started];
  for (const pid of pids) resumeGroup(pid);
  await Promise.all(pids.map((pid) => stopGroup(pid, undefined, 10_000)));
  for (const pid of pids) if (!isAlive(pid)) started.delete(pid);
};
