/**
 * The settings' formats (formats.ts) as convict formats, so convict's own validate() is the
 * one check of every value. convict reports a failure as one string, value included (a
 * password inside redis.url too); so each format also records its refusal here, and convict
 * tags that same error with the key and the value (`fullName`, `value`), from which
 * load-config writes its lines: key, value with secrets masked, source, expectation, reason.
 */
import convict from 'convict';
import { enumFormat, formats, type ValueFormat } from './formats';
import { isLeaf, schema, type SettingBranch, type SettingNode } from './schema';

/** One value a format refused; convict sets `fullName` (the dotted key) and `value` on it. */
export class FormatRefusal extends Error {
  fullName?: string;
  value?: unknown;

  constructor(readonly format: ValueFormat, readonly reason?: string) {
    super(`expected ${format.expected}`);
  }
}

/** The refusals of the validate() call in progress (it is synchronous). */
let refusals: FormatRefusal[] | undefined;

const validatorOf = (format: ValueFormat) => (value: unknown): void => {
  const parsed = format.parse(value);
  if (parsed && 'value' in parsed) return;
  const refusal = new FormatRefusal(format, parsed?.reason);
  refusals?.push(refusal);
  throw refusal;
};

let registered = false;
const registerFormats = (): void => {
  if (registered) return;
  for (const format of formats) convict.addFormat({ name: format.name, validate: validatorOf(format) });
  registered = true;
};

/** The schema as convict takes it: an enumeration becomes a validator that speaks like the others. */
const convictSchemaOf = (node: SettingBranch): convict.Schema<unknown> =>
  Object.fromEntries(
    Object.entries(node).map(([name, child]: [string, SettingNode]) => {
      if (!isLeaf(child)) return [name, convictSchemaOf(child)];
      return [name, typeof child.format === 'string' ? { ...child } : { ...child, format: validatorOf(enumFormat(child.format)) }];
    }),
  ) as convict.Schema<unknown>;

/** A convict config of the schema, environment read, nothing loaded yet. */
export const convictSettings = (env: NodeJS.ProcessEnv): convict.Config<unknown> => {
  registerFormats();
  return convict(convictSchemaOf(schema), { env, args: [] });
};

/**
 * Runs convict's validate({ allowed: 'strict' }). Returns the refused values and convict's
 * other complaints (a key not in the schema, a group overridden by a scalar), which name no value.
 */
export const validateSettings = (settings: convict.Config<unknown>): { refused: FormatRefusal[]; other: string[] } => {
  const collected: FormatRefusal[] = [];
  refusals = collected;
  try {
    settings.validate({ allowed: 'strict' });
    return { refused: [], other: [] };
  } catch (error) {
    const other = (error as Error).message.split('\n').filter((line) => line.startsWith('configuration param '));
    if (collected.length === 0 && other.length === 0) throw error;
    return { refused: collected, other };
  } finally {
    refusals = undefined;
  }
};
