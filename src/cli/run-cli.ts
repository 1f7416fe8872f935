/**
 * Runs the command line to an exit code (docs/contract.md "Commands"): 0 success, 1 bad input (settings,
 * quota file, arguments), 2 Kafka unreachable or a topic missing, 3 internal error.
 * Errors that end a command are printed once here, as `sluice: <message>`.
 */
import { CommanderError } from 'commander';
import { exitCodeOf, SluiceError } from '../errors';
import { packageVersion } from './package-version';
import { buildProgram } from './program';
import type { CommandHandlers, Output } from './types';

export interface CliIO {
  env: NodeJS.ProcessEnv;
  out: Output;
  err: Output;
  version?: string;
}

/** argv as process.argv gives it (node, script, ...arguments). */
export const runCli = async (argv: readonly string[], handlers: CommandHandlers, io: CliIO): Promise<number> => {
  let code = 0;
  const program = buildProgram(handlers, {
    version: io.version ?? packageVersion(),
    env: io.env,
    out: io.out,
    err: io.err,
    onExit: (exitCode) => {
      code = exitCode;
    },
  });
  try {
    await program.parseAsync([...argv], { from: 'node' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    const message = error instanceof SluiceError ? error.message : `internal error: ${(error as Error)?.stack ?? String(error)}`;
    io.err.write(`sluice: ${message}\n`);
    return exitCodeOf(error);
  }
};
