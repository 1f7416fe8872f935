/**
 * `npm test`: brings Redis and the Redis Cluster up (reusing running ones), runs lint, the type
 * check and the unit tests, then the integration suite once per Kafka version in
 * SLUICE_TEST_KAFKA_VERSIONS (default 3.9.2,4.3.1) against that broker, started or reused.
 * Every step runs even after a failure; the exit code is 1 when any failed. It stops only
 * the services it started itself (each broker right after its run).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './services/paths';
import { down, up, UpResult } from './services/services';
import { DEFAULT_TEST_KAFKA_VERSIONS, resolveKafkaVersion } from './services/versions';

interface StepResult {
  name: string;
  ok: boolean;
  seconds: number;
}

const results: StepResult[] = [];
const startedHere = new Set<string>();

const say = (line: string): void => {
  process.stdout.write(`\n=== ${line}\n`);
};

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });

const step = async (name: string, work: () => Promise<boolean>): Promise<boolean> => {
  say(name);
  const started = Date.now();
  let ok = false;
  try {
    ok = await work();
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  results.push({ name, ok, seconds: (Date.now() - started) / 1000 });
  return ok;
};

const servicesUp = async (kafkaVersion?: string): Promise<UpResult> => {
  const result = await up({ redisCluster: true, kafka: kafkaVersion !== undefined, kafkaVersion });
  result.started.forEach((name) => startedHere.add(name));
  return result;
};

const stopStarted = async (names: string[]): Promise<void> => {
  const mine = names.filter((name) => startedHere.has(name));
  if (mine.length === 0) return;
  await down(mine).catch((error: unknown) => process.stderr.write(`stopping ${mine.join(', ')}: ${String(error)}\n`));
  mine.forEach((name) => startedHere.delete(name));
};

const jest = path.join(repoRoot, 'node_modules', '.bin', 'jest');

const integration = async (version: string): Promise<void> => {
  let services: UpResult | undefined;
  await step(`integration tests against Kafka ${version}`, async () => {
    services = await servicesUp(version);
    say(`Kafka ${version} broker at ${services.env.SLUICE_KAFKA_BROKERS}, Redis ${services.env.SLUICE_REDIS_URL}, Redis Cluster ${services.env.SLUICE_REDIS_CLUSTER_NODES}`);
    // --forceExit: a test that leaves a socket or timer open must not hold CI until its time
    // limit once every test has finished (the results are already final then).
    const args = ['--selectProjects', 'integration', '--runInBand', '--verbose', '--forceExit'];
    return run(jest, args, { ...process.env, ...services.env, SLUICE_TEST_KAFKA_VERSION: version });
  });
  await stopStarted([`kafka-${version}`]);
};

const main = async (): Promise<number> => {
  const versions = (process.env.SLUICE_TEST_KAFKA_VERSIONS ?? DEFAULT_TEST_KAFKA_VERSIONS.join(','))
    .split(',').map((v) => v.trim()).filter((v) => v.length > 0).map(resolveKafkaVersion);
  const redis = servicesUp(); // starts while the static checks run
  redis.catch(() => undefined);
  await step('lint', () => run('npm', ['run', '-s', 'lint']));
  await step('type check', () => run('npm', ['run', '-s', 'typecheck']));
  await step('unit tests', () => run(jest, ['--selectProjects', 'unit']));
  await step('Redis and Redis Cluster up', async () => Boolean(await redis));
  for (const version of versions) await integration(version);
  await stopStarted([...startedHere]);
  say('summary');
  for (const r of results) process.stdout.write(`${r.ok ? 'ok    ' : 'FAILED'} ${r.name} (${r.seconds.toFixed(1)} s)\n`);
  return results.every((r) => r.ok) ? 0 : 1;
};

const interrupted = (): void => {
  void stopStarted([...startedHere]).finally(() => process.exit(130));
};
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`npm test: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopStarted([...startedHere]);
    process.exit(1);
  },
);
