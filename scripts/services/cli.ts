/**
 * `npm run services -- up [--redis-cluster] [--kafka-version V]` prints KEY=value lines on
 * stdout (progress on stderr); `down [name...]` stops what `up` started; `status` lists it.
 */
import { Command } from 'commander';
import { ServicesError } from './errors';
import { down, envLines, status, up } from './services';

const print = (lines: string[]): void => {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
};

const describeStatus = async (): Promise<string[]> => {
  const services = await status();
  if (services.length === 0) return ['nothing started by `services up` is running'];
  return services.flatMap(({ state, running }) => [
    `${state.name}: ${running ? 'running' : 'NOT running'} (pids ${state.pids.join(', ')}, ports ${state.ports.join(', ')}, since ${state.startedAt})`,
    ...envLines(state.env).map((line) => `  ${line}`),
    ...state.logFiles.map((file) => `  log: ${file}`),
  ]);
};

const program = new Command('services')
  .description('real Kafka and Redis for sluice tests, on loopback, no Docker')
  .showHelpAfterError();

program
  .command('up')
  .description('start (or reuse) Kafka and Redis; print SLUICE_* lines')
  .option('--redis-cluster', 'also start a three-node Redis Cluster')
  .option('--kafka-version <version>', 'Kafka broker version (exact, or a prefix such as 4 or 3.9)')
  .action(async (options: { redisCluster?: boolean; kafkaVersion?: string }) => {
    const result = await up({ redisCluster: options.redisCluster === true, kafkaVersion: options.kafkaVersion });
    print(envLines(result.env));
  });

program
  .command('down')
  .description('stop what `up` started (every service, or the ones named, e.g. kafka-3.9.2 redis)')
  .argument('[names...]', 'services to stop')
  .action(async (names: string[]) => {
    const stopped = await down(names);
    process.stderr.write(`services: stopped ${stopped.length > 0 ? stopped.join(', ') : 'nothing (nothing was running)'}\n`);
  });

program
  .command('status')
  .description('what runs, where, and where its logs are')
  .action(async () => print(await describeStatus()));

program.parseAsync(process.argv).then(
  () => process.exit(0),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`services: ${message}\n`);
    process.exit(error instanceof ServicesError ? error.exitCode : 1);
  },
);
