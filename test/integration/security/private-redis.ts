/**
 * A redis-server of the test's own (never the shared one): on a free loopback port, no
 * persistence, with the extra arguments the test needs (`--requirepass`, a one-node cluster).
 * It is owned (test/helpers/processes.ts): a child in a process group of its own, which
 * `stop()` SIGKILLs and waits for; one its test file leaves running is killed after the test
 * that started it (after the file, when started in a beforeAll), also on failure or timeout.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { freePorts } from '../../../scripts/services/ports';
import { spawnOwned, stopOwned } from '../../helpers/processes';
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

export const startPrivateRedis = async ({ password, cluster = false, extraArgs = [] }: PrivateRedisOptions = {}): Promise<PrivateRedis> => {
  const [port] = await freePorts(1, cluster ? 10000 : 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-private-redis-'));
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
    ...(password !== undefined ? ['--requirepass', password, '--masterauth', password] : []),
    ...(cluster ? ['--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1', '--cluster-config-file', path.join(dir, 'nodes.conf')] : []),
    ...extraArgs,
  ];
  const owned = spawnOwned('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = owned.process;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const admin = (): Redis => new Redis({ host: '127.0.0.1', port, password, maxRetriesPerRequest: 1 });
  const stop = async (): Promise<void> => {
    await stopOwned(owned, 'SIGKILL');
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
