export { runCli, type CliIO } from './run-cli';
export { buildProgram, type ProgramOptions } from './program';
export { quotasCheck, type QuotasCheckOptions } from './quotas-check';
export type { CommandHandlers, DrainOptions, Output, RunOptions, StatusOptions } from './types';
