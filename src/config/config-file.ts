/** The --config file: JSON or YAML (a superset of JSON), checked against the schema's keys. */
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { SluiceError } from '../errors';
import { flattenSchema, isLeaf, schema, type SettingBranch } from './schema';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads and parses a config file; throws CONFIG_INVALID naming the file (and line) on failure. */
export const readConfigFile = (path: string): Record<string, unknown> => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new SluiceError('CONFIG_INVALID', `cannot read config file ${path}: ${reason}`, { cause: error });
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const error = doc.errors[0];
    const { line } = lineCounter.linePos(error.pos[0]);
    throw new SluiceError('CONFIG_INVALID', `${path}:${line}: ${error.message}`);
  }
  const content: unknown = doc.toJS();
  if (content === null || content === undefined) return {};
  if (!isPlainObject(content)) {
    throw new SluiceError('CONFIG_INVALID', `${path}: expected a mapping of settings (e.g. "kafka: { brokers: … }")`);
  }
  return content;
};

const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
};

const suggestion = (key: string): string => {
  const settings = flattenSchema();
  const byEnv = settings.find((s) => s.env === key);
  if (byEnv) return `; did you mean ${byEnv.key}? (${key} is its environment variable)`;
  const best = settings
    .map((s) => ({ key: s.key, d: distance(key.toLowerCase(), s.key.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  if (best.d === 0) return `; write it nested (${best.key.split('.').join(': { ')}: … })`;
  return best.d <= 3 ? `; did you mean ${best.key}?` : '; see the configuration table in the README';
};

/** Every key of the file that the schema does not declare, as error lines naming the key. */
export const unknownKeys = (content: Record<string, unknown>, file: string, node: SettingBranch = schema, prefix = ''): string[] =>
  Object.entries(content).flatMap(([name, value]) => {
    const key = prefix + name;
    const child = Object.prototype.hasOwnProperty.call(node, name) ? node[name] : undefined;
    if (child === undefined) return [`unknown setting ${key} in ${file}${suggestion(key)}`];
    if (isLeaf(child)) return [];
    if (!isPlainObject(value)) {
      return [`${key} in ${file} must be a mapping of settings (${Object.keys(child).map((k) => `${key}.${k}`).join(', ')})`];
    }
    return unknownKeys(value, file, child, `${key}.`);
  });
