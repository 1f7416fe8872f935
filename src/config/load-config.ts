/**
 * loadConfig: defaults < config file < environment < overrides, validated by convict against
 * the schema (convict-formats.ts), derived defaults resolved, deeply frozen. Every problem is reported at once in one
 * CONFIG_INVALID error, one line each, naming the key, the value (secrets masked), where the
 * value came from and what was expected.
 */
import type convict from 'convict';
import { SluiceError } from '../errors';
import { buildConfig, crossCheck } from './build-config';
import { readConfigFile, unknownKeys } from './config-file';
import { convictSettings, validateSettings, type FormatRefusal } from './convict-formats';
import { deepFreeze } from './deep-freeze';
import { enumFormat, formatByName, type ValueFormat } from './formats';
import { displayValue } from './redact';
import { flattenSchema, type FlatSetting } from './schema';
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

const refusalLine = (setting: FlatSetting, refusal: FormatRefusal, sources: Sources): string =>
  `${setting.key} = ${displayValue(setting, refusal.value)} (${sourceOf(setting, sources)}): expected ${refusal.format.expected}${refusal.reason === undefined ? '' : ` (${refusal.reason})`}`;

/**
 * convict validates every value; the values are then typed by the same formats, and two checks
 * convict has no words for are added: required topics (per command) and SASL credentials
 * without a mechanism. Problems come in schema order.
 */
const checkValues = (settings: convict.Config<unknown>, sources: Sources, requireTopics: boolean) => {
  const { refused, other } = validateSettings(settings);
  const refusedKeys = new Map(refused.map((refusal) => [refusal.fullName, refusal]));
  const values: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const setting of flattenSchema()) {
    const refusal = refusedKeys.get(setting.key);
    if (refusal) {
      errors.push(refusalLine(setting, refusal, sources));
      continue;
    }
    const parsed = formatOf(setting).parse(settings.get(setting.key as never)) as { value: unknown };
    if (setting.required && requireTopics && parsed.value === '') {
      errors.push(`${setting.key} is required: set ${setting.env} (or ${setting.key} in the config file)`);
    } else {
      values[setting.key] = parsed.value;
    }
  }
  errors.push(...other);
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
  const file = options.file ?? (options.env.SLUICE_CONFIG || undefined);
  const content = file ? readConfigFile(file) : {};
  const args = options.args ?? {};
  const known = new Set(flattenSchema().map((s) => s.key));
  const keyErrors = [
    ...(file ? unknownKeys(content, file) : []),
    ...Object.keys(args).filter((key) => !known.has(key)).map((key) => `unknown setting ${key} on the command line`),
  ];
  if (keyErrors.length > 0) fail(keyErrors);

  const settings = convictSettings(options.env);
  settings.load(content);
  for (const [key, value] of Object.entries(args)) settings.set(key as never, value as never);

  const requireTopics = options.requireTopics ?? true;
  const { values, errors } = checkValues(settings, { env: options.env, file, content, args }, requireTopics);
  if (errors.length > 0) fail(errors);
  const config = buildConfig(values);
  const crossErrors = crossCheck(config, { requireTopics });
  if (crossErrors.length > 0) fail(crossErrors);
  return deepFreeze(config);
};
