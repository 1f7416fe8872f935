/**
 * `npm test`: brings Redis and the Redis Cluster up (reusing running ones), runs lint and the
 * type check, makes helm available for the chart tests (building it with `go install` when it
 * is missing), runs the unit tests, then — in CI (the CI variable set, as `.ci/run` does), or
 * with SLUICE_TEST_NODE_LTS=1 — again on Node 24 (the Docker image's runtime, fetched from the
 * npm registry), then the integration suite once per Kafka version against that broker,
 * started or reused: 3.9.2 by default, 3.9.2 and 4.3.1 in CI, SLUICE_TEST_KAFKA_VERSIONS to choose.
 * Every step runs even after a failure; the exit code is 1 when any failed. It stops only the
 * services it started itself (each broker right after its run). Last, it checks that no
 * process it started is still running (each inherits SLUICE_TEST_RUN_ID), and kills and names
 * any that is: that step fails then. Every temporary file of the run (the tests' quota files
 * and replica logs) goes to a folder of its own (TMPDIR), removed after a run that passed and
 * kept, with its path printed, after one that failed.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './services/paths';
import { down, up, UpResult } from './services/services';
import { CI_TEST_KAFKA_VERSIONS, DEFAULT_TEST_KAFKA_VERSIONS, isCi, resolveKafkaVersion } from './services/versions';
import { ensureHelm } from './test-steps/helm';
import { kill, leftovers, RUN_ID_VARIABLE } from './test-steps/leftover-processes';
import { ensureNodeLts, NODE_LTS_MAJOR } from './test-steps/node-lts';
import { ensurePrometheusTools } from './test-steps/promtool';

interface StepResult {
  name: string;
  ok: boolean;
  seconds: number;
}

const results: StepResult[] = [];
const startedHere = new Set<string>();
const runId = randomUUID();
process.env[RUN_ID_VARIABLE] = runId; // every process started from here on inherits it
const runTmp = path.join(tmpdir(), `sluice-test-${runId}`);
mkdirSync(runTmp, { recursive: true });
process.env.TMPDIR = runTmp; // os.tmpdir() of every process started from here on

/** One integration run may take this long; past it, Jest is stopped and the run fails. */
const INTEGRATION_LIMIT_MS = 30 * 60_000;

const say = (line: string): void => {
  process.stdout.write(`\n=== ${line}\n`);
};

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env, limitMs?: number): Promise<boolean> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const limit = limitMs === undefined ? undefined : setTimeout(() => {
      process.stderr.write(`${path.basename(command)} still running after ${limitMs / 60_000} min: stopping it (a test left a socket or timer open? find it with --detectOpenHandles)\n`);
      child.kill('SIGKILL');
    }, limitMs);
    child.once('error', () => resolve(false));
    child.once('close', (code) => {
      clearTimeout(limit);
      resolve(code === 0);
    });
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
const jestScript = path.join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');

const helm = (): Promise<boolean> =>
  step('helm for the chart tests', async () => {
    const binary = await ensureHelm(say);
    process.env.SLUICE_HELM = binary; // the chart tests take it from here
    process.stdout.write(`helm: ${binary}\n`);
    return true;
  });

const promtool = (): Promise<boolean> =>
  step('promtool and prometheus for the alert tests', async () => {
    const tools = ensurePrometheusTools(say);
    process.env.SLUICE_PROMTOOL = tools.promtool; // the alert tests take them from here
    process.env.SLUICE_PROMETHEUS = tools.prometheus;
    process.stdout.write(`promtool: ${tools.promtool}, prometheus: ${tools.prometheus}\n`);
    return true;
  });

const unitOnNodeLts = (): Promise<boolean> =>
  step(`unit tests on Node ${NODE_LTS_MAJOR}`, async () => {
    const { binary, version } = ensureNodeLts(say);
    process.stdout.write(`node: ${binary} (${version})\n`);
    // Its folder first on PATH: what the tests start with `node` (and npm) runs on it too.
    const env = { ...process.env, PATH: `${path.dirname(binary)}${path.delimiter}${process.env.PATH ?? ''}` };
    return run(binary, [jestScript, '--selectProjects', 'unit'], env);
  });

const integration = async (version: string): Promise<void> => {
  let services: UpResult | undefined;
  await step(`integration tests against Kafka ${version}`, async () => {
    services = await servicesUp(version);
    say(`Kafka ${version} broker at ${services.env.SLUICE_KAFKA_BROKERS}, Redis ${services.env.SLUICE_REDIS_URL}, Redis Cluster ${services.env.SLUICE_REDIS_CLUSTER_NODES}`);
    const args = ['--selectProjects', 'integration', '--runInBand', '--verbose'];
    return run(jest, args, { ...process.env, ...services.env, SLUICE_TEST_KAFKA_VERSION: version }, INTEGRATION_LIMIT_MS);
  });
  await stopStarted([`kafka-${version}`]);
};

const nothingLeftBehind = (): Promise<boolean> =>
  step('no process left behind', async () => {
    const found = leftovers(runId);
    if (found.length === 0) return true;
    process.stderr.write(`${found.length} process(es) started by this run are still running; killing them:\n`);
    for (const { pid, command } of found) process.stderr.write(`  pid ${pid}: ${command}\n`);
    kill(found);
    return false;
  });

const main = async (): Promise<number> => {
  const ci = isCi();
  const versions = (process.env.SLUICE_TEST_KAFKA_VERSIONS ?? (ci ? CI_TEST_KAFKA_VERSIONS : DEFAULT_TEST_KAFKA_VERSIONS).join(','))
    .split(',').map((v) => v.trim()).filter((v) => v.length > 0).map(resolveKafkaVersion);
  const redis = servicesUp(); // starts while the static checks run
  redis.catch(() => undefined);
  await step('lint', () => run('npm', ['run', '-s', 'lint']));
  await step('type check', () => run('npm', ['run', '-s', 'typecheck']));
  await helm();
  await promtool();
  await step(`unit tests on Node ${process.versions.node}`, () => run(jest, ['--selectProjects', 'unit']));
  if (ci || process.env.SLUICE_TEST_NODE_LTS === '1') await unitOnNodeLts();
  else say(`unit tests on Node ${NODE_LTS_MAJOR}: in CI only (SLUICE_TEST_NODE_LTS=1 runs them here)`);
  await step('Redis and Redis Cluster up', async () => Boolean(await redis));
  for (const version of versions) await integration(version);
  await stopStarted([...startedHere]);
  await nothingLeftBehind();
  say('summary');
  for (const r of results) process.stdout.write(`${r.ok ? 'ok    ' : 'FAILED'} ${r.name} (${r.seconds.toFixed(1)} s)\n`);
  const passed = results.every((r) => r.ok);
  if (passed) rmSync(runTmp, { recursive: true, force: true });
  else process.stdout.write(`the run's temporary files (replica logs, quota files) are kept in ${runTmp}\n`);
  return passed ? 0 : 1;
};

const interrupted = (): void => {
  void stopStarted([...startedHere]).finally(() => {
    kill(leftovers(runId));
    process.exit(130);
  });
};
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`npm test: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopStarted([...startedHere]);
    kill(leftovers(runId));
    process.exit(1);
  },
);
