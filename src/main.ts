#!/usr/bin/env node
/**
 * The composition root: the only file with side effects at import. It sets the process's V8
 * flags, turns SIGTERM/SIGINT into a stop signal, hands the command handlers to the CLI and
 * exits with their code.
 */
import { setFlagsFromString } from 'node:v8';
import { runHandler } from './app/handlers';
import { runCli } from './cli';
import { drainHandler } from './drain/drain-handler';
import { statusHandler } from './status/status-handler';
import { usageHandler } from './status/usage-handler';
import { ownV8Flags } from './v8-flags';

// Before any hot code is compiled (src/v8-flags.ts).
for (const flag of ownV8Flags(process.execArgv)) setFlagsFromString(flag);

/** The graceful stop gets 10 s (docs/design.md "Kafka mechanics"); past this a stuck disconnect must not keep the pod alive. */
const STOP_WATCHDOG_MS = 12_000;

const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
  const stop = (signal: NodeJS.Signals): void => {
    resolve(signal);
    // Whatever was not committed by now is delivered again after a restart (at-least-once): nothing is lost.
    setTimeout(() => {
      process.stderr.write(`sluice: the graceful stop did not finish within ${STOP_WATCHDOG_MS} ms; exiting\n`);
      process.exit(3);
    }, STOP_WATCHDOG_MS).unref();
  };
  // `on`, not `once`: a repeated signal (tsx relays it twice when busy) must not kill the graceful stop.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
});
// A throw outside any promise (a library's callback) is an internal error: exit 3, not Node's 1.
// Nothing unacknowledged was committed, so a restart delivers it again.
const internalError = (error: unknown): never => {
  process.stderr.write(`sluice: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(3);
};
process.on('uncaughtException', internalError);
process.on('unhandledRejection', internalError);
const context = { env: process.env, stopSignal, stderr: process.stderr };
const handlers = {
  run: runHandler(context),
  drain: drainHandler(context, { stdout: process.stdout, stderr: process.stderr }),
  status: statusHandler(context, process.stdout),
  usage: usageHandler(context, process.stdout),
};

runCli(process.argv, handlers, { env: process.env, out: process.stdout, err: process.stderr }).then(
  (code) => {
    process.exitCode = code;
    // Lingering sockets must not keep a finished command alive.
    setTimeout(() => process.exit(code), 200).unref();
  },
  internalError,
);
