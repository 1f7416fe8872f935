/**
 * The program's logger: pino JSON lines, secrets redacted. Redaction is by shape, not by a
 * list of paths, so it holds for any object logged anywhere:
 * - a value whose key names a secret (password, passwd, secret, token, credential, api key,
 *   authorization, cookie) at any depth is replaced;
 * - a password inside a URL (`scheme://user:password@host`) in any string is replaced;
 * - the arguments of a Redis command attached to an error (`command: { name, args }`, as
 *   ioredis does; AUTH's are the password) are replaced, the command name kept;
 * - literal secret values handed in (`secrets`) are replaced wherever they appear.
 * `redactSecrets` is exported for other boundaries (HTTP answers, error messages).
 */
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const REDACTED = '[redacted]';

const SECRET_KEY = /pass(word|wd)?$|secret|token|credential|api[-_]?key|authorization|cookie|sasl[-_.]?password/i;
// the password runs to the last '@' before the path, as URL parsers read it (an '@' in it included)
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s/]+)@/gi;
const MAX_DEPTH = 12;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export const isSecretKey = (key: string): boolean => SECRET_KEY.test(key);

/** ioredis attaches `command: { name, args }` to a reply error; AUTH's args hold the password. */
const isRedisCommand = (key: string, value: unknown): value is { args: unknown } =>
  key === 'command' && typeof value === 'object' && value !== null && 'args' in value;

/** masks URL passwords and the given literal secrets inside one string. */
export const redactString = (text: string, secrets: readonly string[] = []): string => {
  let out = text.replace(URL_PASSWORD, `$1$2:${REDACTED}@`);
  for (const secret of secrets) if (secret.length >= 3) out = out.replace(new RegExp(escapeRegExp(secret), 'g'), REDACTED);
  return out;
};

const redactError = (error: Error, secrets: readonly string[], depth: number): Record<string, unknown> => {
  const plain: Record<string, unknown> = { type: error.name, message: error.message, stack: error.stack };
  for (const [key, value] of Object.entries(error)) plain[key] = value;
  if (error.cause !== undefined) plain.cause = error.cause;
  return redactValue(plain, secrets, depth) as Record<string, unknown>;
};

/** a deep copy of `value` with secrets masked (see the file comment). Cycles end as '[circular]'. */
export const redactSecrets = (value: unknown, secrets: readonly string[] = []): unknown => redactValue(value, secrets, 0, new WeakSet());

function redactValue(value: unknown, secrets: readonly string[], depth: number, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (value instanceof Error) return redactError(value, secrets, depth + 1);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, depth + 1, seen));
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const masked = isSecretKey(key) && item !== undefined && item !== null && item !== '' && typeof item !== 'boolean';
    const value = isRedisCommand(key, item) ? { ...item, args: REDACTED } : item;
    out[key] = masked ? REDACTED : redactValue(value, secrets, depth + 1, seen);
  }
  return out;
}

export interface LoggerOptions {
  level: LevelWithSilent | string;
  /** where lines go; default stdout, written synchronously (few lines; none lost at exit). Tests pass a stream. */
  destination?: DestinationStream;
  /** literal secret values (passwords from the settings) to mask wherever they appear. */
  secrets?: readonly string[];
  /** fields on every line (default { name: 'sluice' }). */
  base?: Record<string, unknown>;
}

/**
 * Every line passes through here before it is written: parsed, redacted, written again. One
 * choke point catches secrets wherever they come from (fields, messages, errors, child
 * bindings). Log lines are few (nothing per message at info), so the cost does not matter.
 */
export const redactingStream = (target: DestinationStream, secrets: readonly string[]): DestinationStream & { flushSync?: () => void } => ({
  write(line: string) {
    let out: string;
    try {
      out = `${JSON.stringify(redactSecrets(JSON.parse(line), secrets))}\n`;
    } catch {
      out = redactString(line, secrets);
    }
    target.write(out);
  },
  flushSync: () => (target as { flushSync?: () => void }).flushSync?.(),
});

export const createLogger = ({ level, destination, secrets = [], base = { name: 'sluice' } }: LoggerOptions): Logger => {
  const known = secrets.filter((s) => s.length > 0);
  const target = destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level,
      base: { pid: process.pid, ...base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    redactingStream(target, known),
  );
};
