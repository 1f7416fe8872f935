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
});
