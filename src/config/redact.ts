/** Secrets never leave the process: SASL and Redis passwords and passwords inside URLs become ***. */
import type { FlatSetting } from './schema';
import type { Config } from './types';

export const MASK = '***';

const urlPassword = /^([a-z][a-z0-9+.-]*:\/\/)?([^:@/]*):([^@/]*)@/i;

/** "redis://user:secret@host:6379" → "redis://user:***@host:6379"; works on malformed URLs too. */
export const maskUrl = (url: string): string => url.replace(urlPassword, `$1$2:${MASK}@`);

/** How a setting's value is shown in an error message: JSON, with secrets masked. */
export const displayValue = (setting: Pick<FlatSetting, 'sensitive' | 'format'>, value: unknown): string => {
  if (setting.sensitive) return value === '' || value === undefined ? '""' : JSON.stringify(MASK);
  if (setting.format === 'sluice-redis-url' && typeof value === 'string') return JSON.stringify(maskUrl(value));
  if (value === undefined) return 'nothing';
  return JSON.stringify(value);
};

/** A copy of the config that is safe to log (the start-up line, /v1/status). */
export const redactConfig = (config: Config): Config => ({
  ...config,
  kafka: {
    ...config.kafka,
    ...(config.kafka.sasl ? { sasl: { ...config.kafka.sasl, password: MASK } } : {}),
  },
  redis: {
    ...config.redis,
    url: maskUrl(config.redis.url),
    ...(config.redis.password !== undefined ? { password: MASK } : {}),
  },
  http: { ...config.http, ...(config.http.adminToken !== undefined ? { adminToken: MASK } : {}) },
});

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
