/**
 * The command handlers `sluice` runs (passed to the CLI by main.ts): each loads the settings,
 * builds what it needs and returns the exit code of docs/contract.md; an error ends the command
 * with exitCodeOf(error), reported once, here.
 */
import pino, { type Logger } from 'pino';
import { loadConfig } from '../config';
import { secretsOf } from '../config/redact';
import type { Config } from '../config/types';
import { exitCodeOf } from '../errors';
import { createLogger } from '../logger';
import { runSidecar } from './run-sidecar';

export interface HandlerContext {
  env: NodeJS.ProcessEnv;
  /** Resolves on SIGTERM / SIGINT. */
  stopSignal: Promise<unknown>;
  /** Where error reports go when no logger exists yet (bad settings). */
  stderr: { write(text: string): unknown };
}

/** Runs a command body with loaded settings and a logger; maps any error to its exit code. */
export const withConfig = async (
  context: HandlerContext,
  file: string | undefined,
  body: (config: Config, logger: Logger) => Promise<number>,
): Promise<number> => {
  let logger: Logger | undefined;
  try {
    const config = loadConfig({ file, env: context.env });
    // Synchronous lines: few of them, and none lost when the process exits.
    logger = createLogger({ level: config.log.level, secrets: secretsOf(config), destination: pino.destination({ dest: 1, sync: true }) });
    return await body(config, logger);
  } catch (error) {
    const code = exitCodeOf(error);
    if (logger) logger.fatal({ err: error, exitCode: code }, (error as Error).message);
    else context.stderr.write(`sluice: ${(error as Error).message}\n`);
    return code;
  }
};

export const runHandler = (context: HandlerContext) => (options: { config?: string }): Promise<number> =>
  withConfig(context, options.config, (config, logger) =>
    runSidecar({ config, logger, stopSignal: context.stopSignal, secrets: secretsOf(config) }));
