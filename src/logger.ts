/**
 * The program's logger: pino JSON lines, secrets redacted where they can be.
 * - Known secret fields go through pino's `redact` (paths compiled once, values replaced as the
 *   line is written, the logged object untouched): the settings' secrets (SASL and Redis
 *   passwords, the admin token, the password inside redis.url) wherever the settings are logged,
 *   a top-level field named for a secret, a request's authorization and cookie headers, and the
 *   arguments of a Redis command on an error (`command.args`: ioredis attaches them, AUTH's are
 *   the password). A `url` field keeps all but its password.
 * - Free text is masked where a secret can appear inside it: the message of a line and the
 *   message and stack of an error (a Redis URL in an error message): URL passwords
 *   (`scheme://user:password@host`) and the literal secret values handed in (`secrets`).
 * `redactSecrets` and `redactString` serve the other boundary that answers with arbitrary
 * objects (the HTTP answers).
 */
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const REDACTED = '[redacted]';

/**
 * The known secret fields, as pino redact paths (exact paths cost nothing on lines without
 * them; wildcard paths cost 3-10 times the whole line, measured by bench/micro/log-line.ts):
 * the settings' secrets wherever the settings (or a part) are logged, fields named for a
 * secret at the top level, the authorization and cookie headers of a request, and the
 * arguments of a Redis command attached to an error.
 */
const SETTINGS_SECRETS = ['kafka.sasl.password', 'redis.password', 'redis.url', 'http.adminToken'];
const TOP_SECRETS = ['password', 'redisPassword', 'saslPassword', 'adminToken', 'token', 'secret', 'authorization', 'cookie', 'url'];
export const REDACT_PATHS: readonly string[] = [...new Set([
  ...TOP_SECRETS,
  ...SETTINGS_SECRETS.flatMap((path) => [path, `config.${path}`, path.split('.').slice(1).join('.')]),
  ...['headers', 'req.headers', 'request.headers'].flatMap((at) => [`${at}.authorization`, `${at}.cookie`]),
  ...['err', 'error'].map((at) => `${at}.command.args`),
])];

const SECRET_KEY = /pass(word|wd)?$|secret|token|credential|api[-_]?key|authorization|cookie/i;
// the password runs to the last '@' before the path, as URL parsers read it (an '@' in it included)
const URL_PASSWORD = /(^|[a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s/]+)@/gi;
const MAX_DEPTH = 12;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The password of every URL in `text` replaced by `mask` ("redis://u:pw@h" → "redis://u:<mask>@h"). */
export const maskUrlPasswords = (text: string, mask: string = REDACTED): string => text.replace(URL_PASSWORD, `$1$2:${mask}@`);

/** One regular expression for the literal secrets (at least 3 characters each), or undefined. */
const literalPattern = (secrets: readonly string[]): RegExp | undefined => {
  const usable = secrets.filter((s) => s.length >= 3).map(escapeRegExp);
  return usable.length === 0 ? undefined : new RegExp(usable.join('|'), 'g');
};

const maskText = (text: string, literal: RegExp | undefined): string => {
  const out = maskUrlPasswords(text);
  return literal ? out.replace(literal, REDACTED) : out;
};

/** masks URL passwords and the given literal secrets inside one string. */
export const redactString = (text: string, secrets: readonly string[] = []): string => maskText(text, literalPattern(secrets));

/** ioredis attaches `command: { name, args }` to a reply error; AUTH's args hold the password. */
const isRedisCommand = (key: string, value: unknown): value is { args: unknown } =>
  key === 'command' && typeof value === 'object' && value !== null && 'args' in value;

const redactError = (error: Error, secrets: readonly string[], depth: number, seen: WeakSet<object>): Record<string, unknown> => {
  const plain: Record<string, unknown> = { type: error.name, message: error.message, stack: error.stack };
  for (const [key, value] of Object.entries(error)) plain[key] = value;
  if (error.cause !== undefined) plain.cause = error.cause;
  return redactValue(plain, secrets, depth, seen) as Record<string, unknown>;
};

/**
 * A deep copy of `value` with secrets masked by shape (any key named like a secret, at any
 * depth; URL passwords and literal secrets in every string). Cycles end as '[circular]'. For
 * the HTTP answers; log lines use pino's redact (createLogger).
 */
export const redactSecrets = (value: unknown, secrets: readonly string[] = []): unknown => redactValue(value, secrets, 0, new WeakSet());

function redactValue(value: unknown, secrets: readonly string[], depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (value instanceof Error) return redactError(value, secrets, depth + 1, seen);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, depth + 1, seen));
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const masked = SECRET_KEY.test(key) && item !== undefined && item !== null && item !== '' && typeof item !== 'boolean';
    const inner = isRedisCommand(key, item) ? { ...item, args: REDACTED } : item;
    out[key] = masked ? REDACTED : redactValue(inner, secrets, depth + 1, seen);
  }
  return out;
}

/** A URL field keeps everything but its password; any other known field is replaced. */
const censor = (value: unknown, path: readonly unknown[]): unknown =>
  path[path.length - 1] === 'url' ? (typeof value === 'string' || value instanceof URL ? maskUrlPasswords(String(value)) : value) : REDACTED;

export interface LoggerOptions {
  level: LevelWithSilent | string;
  /** where lines go; default stdout, written synchronously (few lines; none lost at exit). Tests pass a stream. */
  destination?: DestinationStream;
  /** literal secret values (passwords from the settings) to mask wherever they can appear in free text. */
  secrets?: readonly string[];
  /** fields on every line (default { name: 'sluice' }). */
  base?: Record<string, unknown>;
}

export const createLogger = ({ level, destination, secrets = [], base = { name: 'sluice' } }: LoggerOptions): Logger => {
  const literal = literalPattern(secrets.filter((s) => s.length > 0));
  const text = (value: unknown): unknown => (typeof value === 'string' ? maskText(value, literal) : value);
  const target = destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level,
      base: { pid: process.pid, ...base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACT_PATHS], censor },
      serializers: {
        err: (error: Error) => {
          const out = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
          return { ...out, message: text(out.message), stack: text(out.stack) };
        },
      },
      hooks: {
        // the message, and the one pino takes from an error when none is given (logger.error(err), { err })
        logMethod(args, method) {
          const [first] = args as unknown[];
          const error = first instanceof Error ? first : (first as { err?: unknown } | null)?.err;
          const masked = args.map(text) as typeof args;
          if (args.length === 1 && error instanceof Error && typeof first === 'object') masked.push(text(error.message) as never);
          method.apply(this, masked);
        },
      },
    },
    target,
  );
};
