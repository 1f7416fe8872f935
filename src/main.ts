#!/usr/bin/env node
/**
 * The composition root: the only file with side effects at import. It turns SIGTERM/SIGINT
 * into a stop signal, hands the command handlers to the CLI and exits with their code.
 */
import { runHandler } from './app/handlers';
import { runCli } from './cli';
import { drainHandler } from './drain/drain-handler';
import { statusHandler } from './status/status-handler';

const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
  // `on`, not `once`: a repeated signal (tsx relays it twice when busy) must not kill the graceful stop.
  process.on('SIGTERM', () => resolve('SIGTERM'));
  process.on('SIGINT', () => resolve('SIGINT'));
});
const context = { env: process.env, stopSignal, stderr: process.stderr };
const handlers = {
  run: runHandler(context),
  drain: drainHandler(context, { stdout: process.stdout, stderr: process.stderr }),
  status: statusHandler(context, process.stdout),
};

runCli(process.argv, handlers, { env: process.env, out: process.stdout, err: process.stderr }).then(
  (code) => {
    process.exitCode = code;
    // Lingering sockets must not keep a finished command alive.
    setTimeout(() => process.exit(code), 200).unref();
  },
  (error: unknown) => {
    process.stderr.write(`sluice: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(3);
  },
);
