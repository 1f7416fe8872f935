#!/usr/bin/env node
/**
 * The composition root: the only file with side effects at import. It turns SIGTERM/SIGINT
 * into a stop signal, hands the command handlers to the CLI and exits with their code.
 */
import { Command } from 'commander';
import { runHandler } from './app/handlers';

const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
  // `on`, not `once`: a repeated signal (tsx relays it twice when busy) must not kill the graceful stop.
  process.on('SIGTERM', () => resolve('SIGTERM'));
  process.on('SIGINT', () => resolve('SIGINT'));
});
const context = { env: process.env, stopSignal, stderr: process.stderr };

const program = new Command('sluice').exitOverride();
program
  .command('run')
  .description('the sidecar: ingress → limiter → downstream / retry tiers, plus the drainer of the retry tiers')
  .option('--config <file>', 'settings file (JSON or YAML)')
  .action(async (options: { config?: string }) => {
    process.exitCode = await runHandler(context)(options);
  });

program.parseAsync(process.argv).then(
  () => setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref(),
  (error: { exitCode?: number }) => process.exit(error.exitCode === 0 ? 0 : 1),
);
