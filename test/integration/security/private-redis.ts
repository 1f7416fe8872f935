/**
 * A redis-server of the test's own (never the shared one): on a free loopback port, no
 * persistence, with the extra arguments the test needs (`--requirepass`, a one-node cluster).
 * It is a child of the test process; `stop()` ends it by its pid and waits for the exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { freePorts } from '../../../scripts/services/ports';
import { waitFor } from '../../helpers/wait';

export interface PrivateRedis {
  port: number;
  /** `redis://127.0.0.1:<port>` (no password in it). */
  url: string;
  /** A client that authenticates with `password` (if any), for set-up and checks. */
  admin(): Redis;
  stop(): Promise<void>;
}

export interface PrivateRedisOptions {
  password?: string;
  /** a one-node Redis Cluster holding every slot. */
  cluster?: boolean;
  /** more redis-server arguments, e.g. ['--rename-command', 'CONFIG', '']. */
  extraArgs?: string[];
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));

export const startPrivateRedis = async ({ password, cluster = false, extraArgs = [] }: PrivateRedisOptions = {}): Promise<PrivateRedis> => {
  const [port] = await freePorts(1, cluster ? 10000 : 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-private-redis-'));
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
    ...(password !== undefined ? ['--requirepass', password, '--masterauth', password] : []),
    ...(cluster ? ['--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1', '--cluster-config-file', path.join(dir, 'nodes.conf')] : []),
    ...extraArgs,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const admin = (): Redis => new Redis({ host: '127.0.0.1', port, password, maxRetriesPerRequest: 1 });
  const stop = async (): Promise<void> => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
    await exited(child);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const probe = admin();
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
      return (await probe.ping()) === 'PONG';
    }, { timeoutMs: 20_000, message: `redis-server on port ${port} to answer PING` });
    if (cluster) {
      await probe.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      await waitFor(async () => /cluster_state:ok/.test(String(await probe.call('CLUSTER', 'INFO'))), { timeoutMs: 20_000, message: 'cluster_state:ok' });
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    probe.disconnect();
  }
  return { port, url: `redis://127.0.0.1:${port}`, admin, stop };
};
