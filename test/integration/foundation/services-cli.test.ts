/** `npm run services -- up` as callers use it: only KEY=value lines on stdout, running services reused. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_KAFKA_VERSION } from '../../../scripts/services/versions';

const root = path.resolve(__dirname, '..', '..', '..');
const version = process.env.SLUICE_TEST_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION;

const services = (args: string[]): Promise<{ stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
    execFile(tsx, [path.join(root, 'scripts', 'services', 'cli.ts'), ...args], { cwd: root, timeout: 110_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`services ${args.join(' ')} failed: ${stderr}`)) : resolve({ stdout, stderr }),
    );
  });

describe('when `services up --redis-cluster` runs while the services already run', () => {
  it('prints exactly the three SLUICE_* lines on stdout, the same ones twice, reusing what runs', async () => {
    const args = ['up', '--redis-cluster', '--kafka-version', version];
    const first = await services(args);
    const second = await services(args);
    const lines = first.stdout.trim().split('\n');
    expect(lines.map((line) => line.split('=')[0])).toEqual(['SLUICE_KAFKA_BROKERS', 'SLUICE_REDIS_CLUSTER_NODES', 'SLUICE_REDIS_URL']);
    expect(lines.every((line) => /^SLUICE_[A-Z_]+=[^\s'"]+$/.test(line))).toBe(true);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toMatch(/reusing/);
    expect(second.stderr).not.toMatch(/starting Kafka/);
  });
});

describe('when `services status` runs', () => {
  it('names the running broker of this version and where its log is', async () => {
    const { stdout } = await services(['status']);
    expect(stdout).toMatch(new RegExp(`^kafka-${version.replace(/\./g, '\\.')}: running`, 'm'));
    expect(stdout).toMatch(new RegExp(`log: .*kafka-${version.replace(/\./g, '\\.')}/kafka\\.log`));
  });
});
