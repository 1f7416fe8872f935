/**
 * Redis from Debian's redis-server, detached on a free loopback port, no persistence.
 * `startRedisNodes` is shared with the Redis Cluster; `startRedis` is the single server.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ServicesError } from './errors';
import { progress } from './log';
import { serviceDir } from './paths';
import { freePorts, HOST } from './ports';
import { Detached, startDetached, tailOf } from './processes';
import { ServiceState } from './state';

export const REDIS_MARKER = 'redis-server';
const READY_TIMEOUT_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs redis-cli against `port`; resolves with its output, or undefined when it failed. */
export const redisCli = (port: number, args: string[], timeoutMs = 3000): Promise<string | undefined> =>
  new Promise((resolve) => {
    execFile('redis-cli', ['-h', HOST, '-p', String(port), ...args], { timeout: timeoutMs }, (error, stdout) =>
      resolve(error ? undefined : stdout.trim()),
    );
  });

interface Node {
  port: number;
  logFile: string;
  process: Detached;
}

const nodeArgs = (port: number, dir: string, cluster: boolean): string[] => [
  '--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', '',
  ...(cluster ? ['--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, 'nodes.conf')] : []),
];

const waitForPong = async (node: Node): Promise<void> => {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while ((await redisCli(node.port, ['ping'])) !== 'PONG') {
    const why = node.process.exited() ? 'exited while starting' : Date.now() > deadline ? 'did not answer PING in time' : '';
    if (why !== '') {
      const inUse = /Address already in use/i.test(tailOf(node.logFile)) ? ' (port in use)' : '';
      throw new ServicesError(`redis-server on port ${node.port} ${why}${inUse}; last lines of ${node.logFile}:\n${tailOf(node.logFile)}`);
    }
    await sleep(100);
  }
};

/** Starts `count` redis-server processes in `serviceDir(name)/<port>/`; `record` saves them first. */
export const startRedisNodes = async (
  name: string, count: number, cluster: boolean, record: (state: ServiceState) => void,
): Promise<ServiceState> => {
  const ports = await freePorts(count, cluster ? 10000 : 0);
  const nodes = ports.map((port): Node => {
    const dir = path.join(serviceDir(name), String(port));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const logFile = path.join(dir, 'redis.log');
    return { port, logFile, process: startDetached('redis-server', nodeArgs(port, dir, cluster), logFile, dir) };
  });
  const state: ServiceState = {
    name, pids: nodes.map((n) => n.process.pid), ports, marker: REDIS_MARKER,
    logFiles: nodes.map((n) => n.logFile), env: {}, startedAt: new Date().toISOString(),
  };
  record(state);
  await Promise.all(nodes.map(waitForPong));
  return state;
};

export const startRedis = async (record: (state: ServiceState) => void): Promise<ServiceState> => {
  const state = await startRedisNodes('redis', 1, false, record);
  progress(`Redis on ${HOST}:${state.ports[0]} (log: ${state.logFiles[0]})`);
  const withEnv = { ...state, env: { SLUICE_REDIS_URL: `redis://${HOST}:${state.ports[0]}` } };
  record(withEnv);
  return withEnv;
};

/** Whether every node answers PING. */
export const redisAnswers = async (state: ServiceState): Promise<boolean> =>
  (await Promise.all(state.ports.map((port) => redisCli(port, ['ping'])))).every((reply) => reply === 'PONG');
