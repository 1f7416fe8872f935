/**
 * A three-node Redis Cluster (`.services/redis-cluster/`): three `--cluster-enabled yes` nodes,
 * no replicas, joined with `redis-cli --cluster create`; ready when every node reports
 * cluster_state:ok.
 */
import { execFile } from 'node:child_process';
import { ServicesError } from './errors';
import { progress } from './log';
import { HOST } from './ports';
import { redisCli, startRedisNodes } from './redis';
import { ServiceState } from './state';

const READY_TIMEOUT_MS = 60_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const createCluster = (ports: number[]): Promise<void> =>
  new Promise((resolve, reject) => {
    const args = ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', '0', '--cluster-yes'];
    execFile('redis-cli', args, { timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new ServicesError(`redis-cli --cluster create failed:\n${`${stdout}${stderr}`.trim()}`)) : resolve(),
    );
  });

/** Whether every node of the cluster says cluster_state:ok. */
export const clusterIsOk = async (ports: number[]): Promise<boolean> =>
  (await Promise.all(ports.map((port) => redisCli(port, ['cluster', 'info'])))).every((info) =>
    (info ?? '').includes('cluster_state:ok'),
  );

export const startRedisCluster = async (record: (state: ServiceState) => void): Promise<ServiceState> => {
  const state = await startRedisNodes('redis-cluster', 3, true, record);
  await createCluster(state.ports);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await clusterIsOk(state.ports))) {
    if (Date.now() > deadline) throw new ServicesError(`the Redis Cluster on ports ${state.ports.join(', ')} did not reach cluster_state:ok in time`);
    await sleep(200);
  }
  const nodes = state.ports.map((p) => `${HOST}:${p}`).join(',');
  progress(`Redis Cluster on ${nodes} (logs: ${state.logFiles.join(', ')})`);
  const withEnv = { ...state, env: { SLUICE_REDIS_CLUSTER_NODES: nodes } };
  record(withEnv);
  return withEnv;
};
