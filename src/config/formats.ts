/**
 * The value formats of the settings schema. Each one parses what a user may write (an
 * environment variable is always a string; a config file may give numbers, booleans or
 * lists) into the typed value, or refuses it, with the reason when it can say;
 * `expected` says what was wanted. convict runs them (convict-formats.ts). Durations and sizes
 * follow the one quantity grammar of src/units.
 */
import { formatDuration, readByteSize, readDuration, type Reading } from '../units';
import { resolutionsFormat } from './usage-resolutions';

/** What a format makes of a value: the typed value, or a refusal with why, when it can say. */
export type Parsed = { value: unknown } | { reason?: string } | undefined;

export interface ValueFormat {
  name: string;
  expected: string;
  parse(value: unknown): Parsed;
}

const ok = (value: unknown) => ({ value });

/** A quantity of the shared grammar (src/units) that must be above zero. */
const positive = (read: Reading<number>): Parsed => {
  if (!read.ok) return { reason: read.reason };
  return read.value > 0 ? ok(read.value) : { reason: 'zero is not allowed here' };
};

const DURATION_EXAMPLES = 'such as 500ms, 5s, 1m, 1h or 1d';

const parseInteger = (value: unknown, min: number, max: number): { value: unknown } | undefined => {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max ? ok(n) : undefined;
};

const parseList = (value: unknown): string[] | undefined => {
  if (typeof value === 'string') return value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' || typeof item === 'number')) {
    return value.map((item) => String(item).trim());
  }
  return undefined;
};

const hostPortPattern = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;
const isHostPort = (text: string): boolean => {
  const match = hostPortPattern.exec(text);
  return match !== null && Number(match[2]) >= 1 && Number(match[2]) <= 65535;
};

const topicPattern = /^[A-Za-z0-9._-]{1,249}$/;

export const formats: readonly ValueFormat[] = [
  {
    name: 'sluice-string',
    expected: 'a non-empty string',
    parse: (v) => (typeof v === 'string' && v.trim() !== '' ? ok(v.trim()) : undefined),
  },
  {
    name: 'sluice-optional-string',
    expected: 'a string',
    parse: (v) => (typeof v === 'string' ? ok(v.trim()) : undefined),
  },
  {
    name: 'sluice-topic',
    expected: "a Kafka topic name (letters, digits, '.', '_' and '-', at most 249 characters)",
    parse: (v) =>
      typeof v === 'string' && (v === '' || (topicPattern.test(v) && v !== '.' && v !== '..')) ? ok(v) : undefined,
  },
  {
    name: 'sluice-boolean',
    expected: 'true or false',
    parse: (v) => {
      if (typeof v === 'boolean') return ok(v);
      const text = typeof v === 'string' ? v.trim().toLowerCase() : undefined;
      if (text === 'true' || text === '1' || text === 'yes' || text === 'on') return ok(true);
      if (text === 'false' || text === '0' || text === 'no' || text === 'off' || text === '') return ok(false);
      return undefined;
    },
  },
  {
    name: 'sluice-brokers',
    expected: 'a comma-separated list of host:port, e.g. 127.0.0.1:9092',
    parse: (v) => {
      const list = parseList(v);
      return list && list.length > 0 && list.every(isHostPort) ? ok(list) : undefined;
    },
  },
  {
    name: 'sluice-host-ports',
    expected: 'empty, or a comma-separated list of host:port, e.g. redis-0:6379,redis-1:6379',
    parse: (v) => {
      const list = parseList(v);
      return list && list.every(isHostPort) ? ok(list) : undefined;
    },
  },
  { name: 'sluice-positive-int', expected: 'a whole number ≥ 1', parse: (v) => parseInteger(v, 1, Number.MAX_SAFE_INTEGER) },
  { name: 'sluice-port', expected: 'a port number from 0 to 65535', parse: (v) => parseInteger(v, 0, 65535) },
  {
    name: 'sluice-duration',
    expected: `a duration > 0 ${DURATION_EXAMPLES}`,
    parse: (v) => positive(readDuration(v)),
  },
  {
    name: 'sluice-duration-ms',
    expected: `a duration > 0 ${DURATION_EXAMPLES}, or a whole number of milliseconds`,
    parse: (v) => positive(readDuration(v, { plain: 'ms' })),
  },
  {
    name: 'sluice-durations',
    expected: 'a comma-separated list of distinct durations > 0, e.g. 5s,1m,10m,1h',
    parse: (v) => {
      const list = parseList(v);
      if (!list || list.length === 0) return undefined;
      const ms: number[] = [];
      for (const item of list) {
        const read = positive(readDuration(item));
        if (!read || !('value' in read)) return { reason: `${JSON.stringify(item)}: ${read?.reason ?? 'not a duration'}` };
        ms.push(read.value as number);
      }
      const sorted = ms.sort((a, b) => a - b);
      const repeated = sorted.find((d, i) => sorted[i + 1] === d);
      return repeated === undefined ? ok(sorted) : { reason: `${formatDuration(repeated)} twice` };
    },
  },
  {
    name: 'sluice-byte-size',
    expected: 'a size > 0 in bytes, or with a unit such as 512KiB, 64MiB or 1GB',
    parse: (v) => positive(readByteSize(v, { plain: 'bytes' })),
  },
  {
    name: 'sluice-redis-url',
    expected: 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379',
    parse: (v) => {
      if (typeof v !== 'string') return undefined;
      try {
        const url = new URL(v.trim());
        return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '' ? ok(v.trim()) : undefined;
      } catch {
        return undefined;
      }
    },
  },
  {
    name: 'sluice-key-prefix',
    expected: 'a string without braces (Redis Cluster hash tags are added by sluice)',
    parse: (v) => (typeof v === 'string' && !/[{}]/.test(v) ? ok(v) : undefined),
  },
  resolutionsFormat,
];

/** An enumeration (convict's array format), e.g. ['header', 'key']. */
export const enumFormat = (options: readonly string[]): ValueFormat => ({
  name: 'enum',
  expected: `one of ${options.map((o) => (o === '' ? '"" (off)' : o)).join(', ')}`,
  parse: (v) => (typeof v === 'string' && options.includes(v.trim()) ? ok(v.trim()) : undefined),
});

export const formatByName = (name: string): ValueFormat | undefined => formats.find((f) => f.name === name);
