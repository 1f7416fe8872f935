/**
 * One Kafka broker per version (`.services/kafka-<version>/`): KRaft, a single combined node on
 * free loopback ports, detached. Ready when its log says "Kafka Server started" and a kafkajs
 * admin answers describeCluster(); a crash or a timeout stops it and reports the log's tail.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ServicesError } from './errors';
import { loggingConfig, serverProperties } from './kafka-config';
import { progress } from './log';
import { ensureKafkaJars } from './maven-fetch';
import { serviceDir } from './paths';
import { freePorts, HOST } from './ports';
import { Detached, startDetached, tailOf } from './processes';
import { ServiceState } from './state';

export const KAFKA_MARKER = 'kafka.Kafka';
const READY_TIMEOUT_MS = 90_000;
const PORT_IN_USE = 'a port is already in use';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const kafkaServiceName = (version: string): string => `kafka-${version}`;

/** 16 random bytes, base64url: the form StorageTool expects (never starting with '-'). */
const clusterId = (): string => {
  const id = crypto.randomBytes(16).toString('base64url');
  return id.startsWith('-') ? clusterId() : id;
};

/** Formats the KRaft log directory (asynchronously: health checks of other services run meanwhile). */
const format = (lib: string, properties: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const args = ['-cp', `${lib}/*`, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', properties, '--ignore-formatted'];
    execFile('java', args, { timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new ServicesError(`formatting the Kafka log directory failed:\n${`${stdout}${stderr}`.trim()}`)) : resolve(),
    );
  });

/** Resolves once kafkajs gets an answer from describeCluster(), retrying until `deadline`. */
export const describeClusterAnswers = async (brokers: string, deadline: number): Promise<boolean> => {
  const kafka = new Kafka({ clientId: 'sluice-services', brokers: [brokers], logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 0 } });
  while (Date.now() < deadline) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      await admin.describeCluster();
      return true;
    } catch {
      await sleep(500);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
  return false;
};

const failure = (what: string, logFile: string): ServicesError => {
  const tail = tailOf(logFile);
  const inUse = /Address already in use/i.test(tail) ? ` (${PORT_IN_USE})` : '';
  return new ServicesError(`${what}${inUse}; last lines of ${logFile}:\n${tail}`);
};

const waitUntilStarted = async (broker: Detached, logFile: string, version: string): Promise<void> => {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (broker.exited()) throw failure(`the Kafka ${version} broker exited while starting`, logFile);
    if (fs.readFileSync(logFile, 'utf8').includes('Kafka Server started')) break;
    if (Date.now() > deadline) throw failure(`the Kafka ${version} broker did not start within ${READY_TIMEOUT_MS / 1000} s`, logFile);
    await sleep(250);
  }
};

const prepare = (dir: string, version: string, ports: { port: number; controllerPort: number }) => {
  const data = path.join(dir, 'data');
  fs.rmSync(data, { recursive: true, force: true });
  fs.mkdirSync(data, { recursive: true });
  const properties = path.join(dir, 'server.properties');
  fs.writeFileSync(properties, serverProperties(ports, data));
  const logging = loggingConfig(version, (name) => path.join(dir, name));
  fs.writeFileSync(logging.path, logging.content);
  const logFile = path.join(dir, 'kafka.log');
  fs.writeFileSync(logFile, '');
  return { properties, logFile, jvmOption: logging.jvmOption };
};

const launch = async (version: string, lib: string, record: (state: ServiceState) => void): Promise<ServiceState> => {
  const dir = serviceDir(kafkaServiceName(version));
  const [port, controllerPort] = await freePorts(2);
  const { properties, logFile, jvmOption } = prepare(dir, version, { port, controllerPort });
  await format(lib, properties);
  progress(`starting Kafka ${version} on ${HOST}:${port} (log: ${logFile})`);
  const jvm = ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true', jvmOption];
  const broker = startDetached('java', [...jvm, '-cp', `${lib}/*`, KAFKA_MARKER, properties], logFile, dir);
  const brokers = `${HOST}:${port}`;
  const state: ServiceState = {
    name: kafkaServiceName(version), pids: [broker.pid], ports: [port, controllerPort], marker: KAFKA_MARKER,
    logFiles: [logFile], env: { SLUICE_KAFKA_BROKERS: brokers }, startedAt: new Date().toISOString(),
  };
  record(state);
  await waitUntilStarted(broker, logFile, version);
  if (!(await describeClusterAnswers(brokers, Date.now() + 30_000))) {
    throw failure(`the Kafka ${version} broker started but kafkajs got no answer from ${brokers}`, logFile);
  }
  return state;
};

/**
 * Starts a fresh broker of `version`; `record` saves its state before waiting for it. A port
 * taken between choosing and binding it (another process was faster) gets one more try.
 */
export const startKafka = async (version: string, record: (state: ServiceState) => void): Promise<ServiceState> => {
  const lib = await ensureKafkaJars(version);
  try {
    return await launch(version, lib, record);
  } catch (error) {
    if (!(error instanceof ServicesError && error.message.includes(PORT_IN_USE))) throw error;
    progress(`Kafka ${version}: a port was taken meanwhile, trying other ports`);
    return launch(version, lib, record);
  }
};
