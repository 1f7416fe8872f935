/**
 * The command line (commander): sluice run | drain | quotas check | status | usage, --help,
 * --version. Argument errors exit 1. The pipeline's commands are handlers passed in;
 * `quotas check` is complete here.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { quotasCheck } from './quotas-check';
import type { CommandHandlers, Output } from './types';

export interface ProgramOptions {
  version: string;
  env: NodeJS.ProcessEnv;
  out: Output;
  err: Output;
  /** Receives the exit code of the command that ran. */
  onExit(code: number): void;
}

const positiveInteger = (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number ≥ 1.');
  return Number(value);
};

const configOption = () => new Option('-c, --config <file>', 'settings file (JSON or YAML); environment variables override it');

const addQuotas = (program: Command, options: ProgramOptions): void => {
  const quotas = program.command('quotas').description('work with quota files');
  quotas
    .command('check')
    .description('validate a quota file and print the effective rule table')
    .argument('<file>', 'the quota file (YAML)')
    .addOption(configOption())
    .action((file: string, opts: { config?: string }) => {
      options.onExit(quotasCheck({ file, configFile: opts.config, env: options.env, out: options.out, err: options.err }));
    });
};

/** The program; parse it with parseAsync (see runCli for exit codes and error output). */
export const buildProgram = (handlers: CommandHandlers, options: ProgramOptions): Command => {
  const program = new Command('sluice')
    .description('Kafka throttling sidecar: per-producer quotas shared through Redis')
    .version(options.version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => options.out.write(s), writeErr: (s) => options.err.write(s) })
    .showHelpAfterError('(run sluice --help for usage)')
    .allowExcessArguments(false);

  program
    .command('run')
    .description('run the sidecar: ingress → limiter → downstream and retry tiers, with the drainer')
    .addOption(configOption())
    .action(async (opts: { config?: string }) => options.onExit(await handlers.run({ config: opts.config })));

  program
    .command('drain')
    .description('drain the retry tiers (or --topic) once, up to the end offsets seen at start')
    .addOption(configOption())
    .option('--topic <topic>', 'drain this topic (e.g. the dead-letter topic) instead of the retry tiers')
    .option('--ignore-delay', 'forward delayed messages now instead of at their not-before', false)
    .option('--dry-run', 'read and report, but write and commit nothing', false)
    .option('--max <n>', 'stop after n messages', positiveInteger)
    .option('--force', 'drain even while the retry group has other members', false)
    .action(async (opts: { config?: string; topic?: string; ignoreDelay: boolean; dryRun: boolean; max?: number; force: boolean }) =>
      options.onExit(await handlers.drain({ ...opts })),
    );

  addQuotas(program, options);

  program
    .command('status')
    .description('show per-producer state from the store: rule, rate, backlog, next free slot')
    .argument('[producer]', 'one producer id (all tracked producers when absent)')
    .addOption(configOption())
    .action(async (producer: string | undefined, opts: { config?: string }) =>
      options.onExit(await handlers.status({ config: opts.config, ...(producer !== undefined ? { producer } : {}) })),
    );

  program
    .command('usage')
    .description("show a producer's usage history from the store: offered, forwarded, delayed, overflowed, dead-lettered per bucket")
    .argument('<producer>', 'the producer id')
    .addOption(configOption())
    .option('--resolution <size>', 'bucket size, one of usage.resolutions (default 1m)')
    .option('--since <duration>', 'how far back, e.g. 10m, 6h, 2d (default 60 buckets)')
    .option('--json', 'print JSON rows instead of a table', false)
    .action(async (producer: string, opts: { config?: string; resolution?: string; since?: string; json: boolean }) =>
      options.onExit(handlers.usage ? await handlers.usage({ ...opts, producer }) : 3),
    );

  return program;
};
