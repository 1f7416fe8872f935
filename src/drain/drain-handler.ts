/**
 * The `sluice drain` handler main.ts passes to the CLI: gets what a drain needs from the
 * wiring module (the same pieces as `sluice run`), runs the drain, prints the summary and
 * returns the exit code.
 */
import type { Logger } from 'pino';
import { withConfig, type HandlerContext } from '../app/handlers';
import { openDrain } from '../app/wiring-commands';
import type { DrainOptions as CliDrainOptions, Output } from '../cli/types';
import type { Config } from '../config/types';
import { runDrain } from './drain-command';

export interface DrainIO {
  stdout: Output;
  stderr: Output;
}

export const drainWithConfig = async (config: Config, logger: Logger, opts: CliDrainOptions, io: DrainIO): Promise<number> => {
  const drain = await openDrain(config, logger, opts.topic);
  try {
    const options = { ignoreDelay: opts.ignoreDelay, dryRun: opts.dryRun, force: opts.force, max: opts.max, topic: opts.topic };
    await runDrain({ ...drain.parts, stdout: io.stdout, stderr: io.stderr }, options);
    return 0;
  } finally {
    await drain.close();
  }
};

export const drainHandler = (context: HandlerContext, io: DrainIO) => (opts: CliDrainOptions): Promise<number> =>
  withConfig(context, opts.config, (config, logger) => drainWithConfig(config, logger, opts, io));
