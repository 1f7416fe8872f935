/**
 * The rate syntax of the quota file, parsed into plain numbers. Every parser takes the
 * field name it reads so its error says where the problem is and what was expected.
 *
 *   duration   "500ms" "10s" "1m" "1.5h" "1d"            → milliseconds
 *   rate       "20/s" "1000/h" "5/10s" (N per duration)   → { count, perMs, intervalMs }
 *   byte rate  "512KiB/s" "10MB/m" (B KB KiB MB MiB GB GiB) → { bytes, perMs, intervalMs per byte }
 *   queue      a duration ("1m") or a count of messages (30, "30")
 *   window     "1000/h", "1000/h fixed" or { max, per, window }
 *
 * A per-part without a number ("/h") is one unit; "N/<duration>" such as "5/10s" is N per
 * that duration. Units are case-sensitive: m is minutes, ms milliseconds.
 */
import { SluiceError } from '../errors';
import type { WindowKind } from './types';

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const byteUnits: Record<string, number> = {
  B: 1,
  KB: 1000,
  KiB: 1024,
  MB: 1000 ** 2,
  MiB: 1024 ** 2,
  GB: 1000 ** 3,
  GiB: 1024 ** 3,
};
const windowKinds: WindowKind[] = ['sliding', 'fixed', 'log'];

const NUMBER = '(\\d+(?:\\.\\d+)?)';
const DURATION = new RegExp(`^${NUMBER}(ms|s|m|h|d)$`);
const PER = '(\\d+(?:\\.\\d+)?)?(ms|s|m|h|d)';
const RATE = new RegExp(`^${NUMBER}\\s*/\\s*${PER}$`);
const BYTE_RATE = new RegExp(`^${NUMBER}\\s*(B|KB|KiB|MB|MiB|GB|GiB)\\s*/\\s*${PER}$`);

export interface Rate {
  count: number;
  perMs: number;
  /** ms per message (or per byte for a byte rate); may be fractional. */
  intervalMs: number;
}

export interface ParsedWindow {
  max: number;
  windowMs: number;
  kind: WindowKind;
  label: string;
}

/** A RATE_INVALID error; `subPath` names the key inside the field (e.g. ['per']) for callers that report paths. */
export class RateSyntaxError extends SluiceError {
  readonly subPath: string[];

  constructor(message: string, subPath: string[]) {
    super('RATE_INVALID', message);
    this.subPath = subPath;
  }
}

const invalid = (field: string, expected: string, value: unknown, sub?: string): RateSyntaxError =>
  new RateSyntaxError(
    `${field}${sub === undefined ? '' : `.${sub}`}: expected ${expected}, got ${JSON.stringify(value)}`,
    sub === undefined ? [] : [sub],
  );

const DURATION_HELP = 'a duration such as "500ms", "10s", "1m", "1h" or "1d"';
const RATE_HELP = 'a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s"';
const BYTE_HELP = 'a byte rate such as "512KiB/s" (units B, KB, KiB, MB, MiB, GB, GiB; per s, m, h, d)';

const perToMs = (amount: string | undefined, unit: string): number =>
  (amount === undefined ? 1 : Number(amount)) * unitMs[unit];

/** "1m" → 60000. Zero is allowed ("0s"); negative values cannot be written. */
export const parseDuration = (value: unknown, field: string): number => {
  const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
  if (!match) throw invalid(field, DURATION_HELP, value);
  return Number(match[1]) * unitMs[match[2]];
};

/** "20/s" → { count: 20, perMs: 1000, intervalMs: 50 }. */
export const parseRate = (value: unknown, field: string): Rate => {
  const match = typeof value === 'string' ? RATE.exec(value.trim()) : null;
  if (!match) throw invalid(field, RATE_HELP, value);
  const count = Number(match[1]);
  const perMs = perToMs(match[2], match[3]);
  if (!(count > 0) || !(perMs > 0)) throw invalid(field, `${RATE_HELP}, with N and the duration above zero`, value);
  return { count, perMs, intervalMs: perMs / count };
};

/** "512KiB/s" → { count: 524288, perMs: 1000, intervalMs: ms per byte }. */
export const parseByteRate = (value: unknown, field: string): Rate => {
  const match = typeof value === 'string' ? BYTE_RATE.exec(value.trim()) : null;
  if (!match) throw invalid(field, BYTE_HELP, value);
  const count = Number(match[1]) * byteUnits[match[2]];
  const perMs = perToMs(match[3], match[4]);
  if (!(count > 0) || !(perMs > 0)) throw invalid(field, `${BYTE_HELP}, above zero`, value);
  return { count, perMs, intervalMs: perMs / count };
};

export type Queue = { kind: 'duration'; ms: number } | { kind: 'count'; messages: number };

/** A queue is a duration ("1m") or a whole number of messages (30 or "30"). */
export const parseQueue = (value: unknown, field: string): Queue => {
  const expected = `${DURATION_HELP}, or a whole number of messages (0 or more)`;
  const asCount = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof asCount === 'number') {
    if (!Number.isInteger(asCount) || asCount < 0) throw invalid(field, expected, value);
    return { kind: 'count', messages: asCount };
  }
  if (typeof value !== 'string' || !DURATION.test(value.trim())) throw invalid(field, expected, value);
  return { kind: 'duration', ms: parseDuration(value, field) };
};

const parseWindowString = (value: string, field: string): ParsedWindow => {
  const [ratePart, kindPart, extra] = value.trim().split(/\s+/);
  const kind = (kindPart ?? 'sliding') as WindowKind;
  const expected = `a window "N/<unit>" optionally followed by sliding, fixed or log (e.g. "1000/h", "20000/1d fixed")`;
  if (extra !== undefined || !windowKinds.includes(kind)) throw invalid(field, expected, value);
  const rate = parseRate(ratePart, field);
  return checkWindow({ max: rate.count, windowMs: rate.perMs, kind, label: value.trim() }, field, value);
};

const checkWindow = (window: ParsedWindow, field: string, value: unknown): ParsedWindow => {
  if (!Number.isInteger(window.max) || window.max < 1) {
    throw invalid(field, 'a window whose maximum is a whole number of at least 1', value);
  }
  return window;
};

const parseWindowObject = (value: Record<string, unknown>, field: string): ParsedWindow => {
  const unknownKeys = Object.keys(value).filter((key) => !['max', 'per', 'window'].includes(key));
  if (unknownKeys.length > 0) throw invalid(field, 'no such key (only max, per, window)', value[unknownKeys[0]], unknownKeys[0]);
  const max = value.max;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
    throw invalid(field, 'a whole number of at least 1', max, 'max');
  }
  const per = value.per;
  const unitOnly = typeof per === 'string' && per.trim() in unitMs ? `1${per.trim()}` : per;
  const perHelp = `${DURATION_HELP}, or a unit s, m, h or d`;
  const match = typeof unitOnly === 'string' ? DURATION.exec(unitOnly.trim()) : null;
  if (!match) throw invalid(field, perHelp, per, 'per');
  const windowMs = Number(match[1]) * unitMs[match[2]];
  if (!(windowMs > 0)) throw invalid(field, 'a duration above zero', per, 'per');
  const kind = value.window ?? 'sliding';
  if (!windowKinds.includes(kind as WindowKind)) throw invalid(field, 'sliding, fixed or log', kind, 'window');
  const label = `${max}/${String(per).trim()}${value.window === undefined ? '' : ` ${String(kind)}`}`;
  return { max, windowMs, kind: kind as WindowKind, label };
};

/** "1000/h" (sliding), "1000/h fixed", or { max: 1000, per: "1h" | "h", window: "log" }. */
export const parseWindow = (value: unknown, field: string): ParsedWindow => {
  if (typeof value === 'string') return parseWindowString(value, field);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return parseWindowObject(value as Record<string, unknown>, field);
  }
  throw invalid(field, 'a window such as "1000/h" or { max: 1000, per: 1h, window: sliding }', value);
};
