/**
 * The programmatic interface of `npm run services`: `up` starts or reuses the Kafka broker,
 * Redis and (optionally) the Redis Cluster; `down` stops what `up` started; `status` lists it.
 * Used by cli.ts, scripts/test.ts and test/helpers/global-setup.ts.
 */
import { ServicesError } from './errors';
import { describeClusterAnswers, kafkaServiceName, startKafka } from './kafka-broker';
import { withLock } from './lock';
import { progress } from './log';
import { portAnswers } from './ports';
import { requireJavaAndMaven, ensureRedisInstalled } from './prerequisites';
import { isAlive, stopGroup } from './processes';
import { redisAnswers, startRedis } from './redis';
import { clusterIsOk, startRedisCluster } from './redis-cluster';
import { listStates, readState, removeState, ServiceState, writeState } from './state';
import { resolveKafkaVersion } from './versions';

export interface UpOptions {
  kafkaVersion?: string; // exact or prefix (`4`, `3.9.x`); default SLUICE_KAFKA_VERSION or 3.9.2
  redisCluster?: boolean;
  kafka?: boolean; // default true
  redis?: boolean; // default true
}

export interface UpResult {
  env: Record<string, string>; // SLUICE_KAFKA_BROKERS, SLUICE_REDIS_URL[, SLUICE_REDIS_CLUSTER_NODES]
  started: string[]; // names of the services this call started (the others were reused)
  kafkaVersion?: string;
}

/**
 * Whether the processes of `state` are alive and their ports (and health checks) answer. A busy
 * broker gets 20 s to answer kafkajs before it counts as broken (and is replaced).
 */
export const isRunning = async (state: ServiceState): Promise<boolean> => {
  if (!state.pids.every((pid) => isAlive(pid, state.marker))) return false;
  if (!(await Promise.all(state.ports.map((port) => portAnswers(port)))).every(Boolean)) return false;
  if (state.name === 'redis-cluster') return clusterIsOk(state.ports);
  if (state.name === 'redis') return redisAnswers(state);
  return describeClusterAnswers(state.env.SLUICE_KAFKA_BROKERS ?? '', Date.now() + 20_000);
};

/** Stops the process groups of `state`; `checkMarker` false for processes this call started. */
const stopState = async (state: ServiceState, checkMarker = true): Promise<void> => {
  await Promise.all(state.pids.map((pid) => stopGroup(pid, checkMarker ? state.marker : undefined)));
  removeState(state.name);
};

/** Reuses the service `name` when it still runs, otherwise starts it afresh. */
const ensure = (name: string, start: (record: (s: ServiceState) => void) => Promise<ServiceState>) =>
  withLock(name, async (): Promise<{ state: ServiceState; started: boolean }> => {
    const existing = readState(name);
    if (existing !== undefined && Object.keys(existing.env).length > 0 && (await isRunning(existing))) {
      progress(`${name}: reusing the one already running (pids ${existing.pids.join(', ')})`);
      return { state: existing, started: false };
    }
    if (existing !== undefined) await stopState(existing);
    let recorded: ServiceState | undefined;
    try {
      const state = await start((s) => {
        recorded = s;
        writeState(s);
      });
      return { state, started: true };
    } catch (error) {
      if (recorded !== undefined) await stopState(recorded, false);
      throw error;
    }
  });

export const up = async (options: UpOptions = {}): Promise<UpResult> => {
  const kafkaVersion = options.kafka === false ? undefined : resolveKafkaVersion(options.kafkaVersion);
  if (kafkaVersion !== undefined) requireJavaAndMaven();
  if (options.redis !== false || options.redisCluster) ensureRedisInstalled();
  const wanted: Array<[string, (record: (s: ServiceState) => void) => Promise<ServiceState>]> = [];
  if (kafkaVersion !== undefined) wanted.push([kafkaServiceName(kafkaVersion), (r) => startKafka(kafkaVersion, r)]);
  if (options.redis !== false) wanted.push(['redis', startRedis]);
  if (options.redisCluster) wanted.push(['redis-cluster', startRedisCluster]);
  const results = await Promise.allSettled(wanted.map(([name, start]) => ensure(name, start)));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failed.length > 0) throw failed[0];
  const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  return {
    env: Object.assign({}, ...done.map((d) => d.state.env)) as Record<string, string>,
    started: done.filter((d) => d.started).map((d) => d.state.name),
    kafkaVersion,
  };
};

/** Stops the named services (all of them when `names` is empty); returns the names stopped. */
export const down = async (names: string[] = []): Promise<string[]> => {
  const states = listStates().filter((s) => names.length === 0 || names.includes(s.name));
  const unknown = names.filter((name) => !states.some((s) => s.name === name));
  if (unknown.length > 0) throw new ServicesError(`not started by \`services up\`: ${unknown.join(', ')}`);
  await Promise.all(states.map((state) => withLock(state.name, () => stopState(state))));
  return states.map((s) => s.name);
};

export interface ServiceStatus {
  state: ServiceState;
  running: boolean;
}

export const status = async (): Promise<ServiceStatus[]> =>
  Promise.all(listStates().map(async (state) => ({ state, running: await isRunning(state) })));

/** `KEY=value` lines, in a stable order. */
export const envLines = (env: Record<string, string>): string[] =>
  Object.keys(env).sort().map((key) => `${key}=${env[key]}`);
