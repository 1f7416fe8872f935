/**
 * Secrets never leave the process. For error messages: a setting's value with secrets masked
 * (sensitive keys wholly, the password inside redis.url). For the logger and the HTTP answers:
 * the literal secret values to mask in free text. Logged objects are masked by the logger's
 * pino redact paths (src/logger.ts), which know the settings' secret fields.
 */
import { maskUrlPasswords } from '../logger';
import type { FlatSetting } from './schema';
import type { Config } from './types';

export const MASK = '***';

/** "redis://user:secret@host:6379" → "redis://user:***@host:6379"; works on malformed URLs too. */
export const maskUrl = (url: string): string => maskUrlPasswords(url, MASK);

/** How a setting's value is shown in an error message: JSON, with secrets masked. */
export const displayValue = (setting: Pick<FlatSetting, 'sensitive' | 'format'>, value: unknown): string => {
  if (setting.sensitive) return value === '' || value === undefined ? '""' : JSON.stringify(MASK);
  if (setting.format === 'sluice-redis-url' && typeof value === 'string') return JSON.stringify(maskUrl(value));
  if (value === undefined) return 'nothing';
  return JSON.stringify(value);
};

/** The password inside a URL, as written and decoded; none: []. */
const urlPasswords = (url: string): string[] => {
  try {
    const { password } = new URL(url);
    return password === '' ? [] : [password, decodeURIComponent(password)];
  } catch {
    return [];
  }
};

/**
 * Every secret value of the settings, for the logger and the HTTP answers to mask wherever it
 * appears: the SASL and Redis passwords, the password inside redis.url, the admin token.
 */
export const secretsOf = (config: Config): string[] => [
  ...new Set(
    [config.kafka.sasl?.password, config.redis.password, ...urlPasswords(config.redis.url), config.http.adminToken].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    ),
  ),
];
