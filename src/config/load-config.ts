/**
 * loadConfig: defaults < config file < environment < overrides, validated against the
 * schema, derived defaults resolved, deeply frozen. Every problem is reported at once in one
 * CONFIG_INVALID error, one line each, naming the key, the value (secrets masked), where the
 * value came from and what was expected.
 */
import convict from 'convict';
import { SluiceError } from '../errors';
import { buildConfig, crossCheck } from './build-config';
import { readConfigFile, unknownKeys } from './config-file';
import { deepFreeze } from './deep-freeze';
import { enumFormat, formatByName, formats, type ValueFormat } from './formats';
import { displayValue } from './redact';
import { flattenSchema, schema, type FlatSetting } from './schema';
import type { Config } from './types';

export interface LoadConfigOptions {
  /** A JSON or YAML file (--config); when absent, $SLUICE_CONFIG if set. */
  file?: string;
  env: NodeJS.ProcessEnv;
  /** Highest precedence, by dotted key (e.g. { 'http.port': 0 }). */
  args?: Readonly<Record<string, unknown>>;
  /** false: topics.ingress and topics.downstream may be empty (commands that use no topic, e.g. quotas check). */
  requireTopics?: boolean;
}

let formatsRegistered = false;
/** convict refuses unknown format names: register ours once (validation itself is ours, below). */
const registerFormats = (): void => {
  if (formatsRegistered) return;
  for (const format of formats) {
    convict.addFormat({
      name: format.name,
      validate: (value: unknown) => {
        if (!format.parse(value)) throw new Error(`expected ${format.expected}`);
      },
    });
  }
  formatsRegistered = true;
};

const formatOf = (setting: FlatSetting): ValueFormat =>
  typeof setting.format === 'string' ? (formatByName(setting.format) as ValueFormat) : enumFormat(setting.format);

const hasPath = (content: Record<string, unknown>, key: string): boolean => {
  let node: unknown = content;
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || node === null || !(part in node)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return true;
};

interface Sources {
  env: NodeJS.ProcessEnv;
  file?: string;
  content: Record<string, unknown>;
  args: Readonly<Record<string, unknown>>;
}

const sourceOf = (setting: FlatSetting, sources: Sources): string => {
  if (setting.key in sources.args) return 'from the command line';
  if (sources.env[setting.env] !== undefined) return `from ${setting.env}`;
  if (sources.file && hasPath(sources.content, setting.key)) return `from ${sources.file}`;
  return 'the default';
};

const validateValues = (settings: convict.Config<unknown>, sources: Sources, requireTopics: boolean) => {
  const values: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const setting of flattenSchema()) {
    const raw: unknown = settings.get(setting.key as never);
    const format = formatOf(setting);
    const parsed = format.parse(raw);
    if (!parsed) {
      errors.push(`${setting.key} = ${displayValue(setting, raw)} (${sourceOf(setting, sources)}): expected ${format.expected}`);
    } else if (setting.required && requireTopics && parsed.value === '') {
      errors.push(`${setting.key} is required: set ${setting.env} (or ${setting.key} in the config file)`);
    } else {
      values[setting.key] = parsed.value;
    }
  }
  if (values['kafka.sasl.mechanism'] === '' && (values['kafka.sasl.username'] || values['kafka.sasl.password'])) {
    errors.push('kafka.sasl.mechanism is empty but a SASL user name or password is set: set SLUICE_KAFKA_SASL_MECHANISM');
  }
  return { values, errors };
};

const fail = (errors: string[]): never => {
  throw new SluiceError('CONFIG_INVALID', errors.join('\n'));
};

/** Loads, validates and freezes the settings; throws SluiceError CONFIG_INVALID on any problem. */
export const loadConfig = (options: LoadConfigOptions): Config => {
  registerFormats();
  const file = options.file ?? (options.env.SLUICE_CONFIG || undefined);
  const content = file ? readConfigFile(file) : {};
  const args = options.args ?? {};
  const known = new Set(flattenSchema().map((s) => s.key));
  const keyErrors = [
    ...(file ? unknownKeys(content, file) : []),
    ...Object.keys(args).filter((key) => !known.has(key)).map((key) => `unknown setting ${key} on the command line`),
  ];
  if (keyErrors.length > 0) fail(keyErrors);

  const settings = convict(schema as unknown as convict.Schema<unknown>, { env: options.env, args: [] });
  settings.load(content);
  for (const [key, value] of Object.entries(args)) settings.set(key as never, value as never);

  const requireTopics = options.requireTopics ?? true;
  const { values, errors } = validateValues(settings, { env: options.env, file, content, args }, requireTopics);
  if (errors.length > 0) fail(errors);
  const config = buildConfig(values);
  const crossErrors = crossCheck(config, { requireTopics });
  if (crossErrors.length > 0) fail(crossErrors);
  return deepFreeze(config);
};
