/** SLUICE_* environment variables that no setting reads: most often a typo worth a warning at start. */
import { flattenSchema } from './schema';

/** Read by loadConfig itself (the settings file), not a setting. */
const OTHER_VARIABLES = ['SLUICE_CONFIG'];

export const unknownEnvironment = (env: NodeJS.ProcessEnv, known: readonly string[] = []): string[] => {
  const names = new Set([...flattenSchema().map((s) => s.env), ...OTHER_VARIABLES, ...known]);
  return Object.keys(env)
    .filter((name) => name.startsWith('SLUICE_') && !names.has(name))
    .sort();
};
