/**
 * The rate syntax of the quota file, parsed into plain numbers. Durations and sizes follow
 * the one quantity grammar of src/units (shared with the settings). Every parser takes the
 * field name it reads so its error says where the problem is, what was expected and why.
 *
 *   duration   "500ms" "10s" "1m" "1.5h" "1d"            → milliseconds (whole)
 *   rate       "20/s" "1000/h" "5/10s" (N per duration)   → { count, perMs, intervalMs }
 *   byte rate  "512KiB/s" "10MB/m" (B KB KiB MB MiB GB GiB) → { bytes, perMs, intervalMs per byte }
 *   queue      a duration ("1m") or a count of messages (30, "30")
 *   window     "1000/h", "1000/h fixed" or { max, per, window }
 *
 * A per-part without a number ("/h") is one unit; "N/<duration>" such as "5/10s" is N per
 * that duration. No spaces inside a value. Units are case-sensitive: m is minutes, ms milliseconds.
 */
import { SluiceError } from '../errors';
import { DURATION, readByteSize, readDuration, type Reading } from '../units';
import type { WindowKind } from './types';

const windowKinds: WindowKind[] = ['sliding', 'fixed', 'log'];
const COUNT = /^\d+(?:\.\d+)?$/;

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

const invalid = (field: string, expected: string, value: unknown, sub?: string, reason?: string): RateSyntaxError =>
  new RateSyntaxError(
    `${field}${sub === undefined ? '' : `.${sub}`}: expected ${expected}, got ${JSON.stringify(value)}${reason === undefined ? '' : ` (${reason})`}`,
    sub === undefined ? [] : [sub],
  );

const DURATION_HELP = 'a duration such as "500ms", "10s", "1m", "1h" or "1d"';
const RATE_HELP = 'a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s"';
const BYTE_HELP = 'a byte rate such as "512KiB/s" (units B, KB, KiB, MB, MiB, GB, GiB; per s, m, h, d)';

/** The per-part of a rate: a duration ("10s") or a bare unit ("s", one of it). */
const readPer = (text: string): Reading<number> =>
  Object.prototype.hasOwnProperty.call(DURATION.units, text) ? { ok: true, value: DURATION.units[text] } : readDuration(text);

/** "1m" → 60000. Zero is allowed ("0s"); negative values cannot be written. */
export const parseDuration = (value: unknown, field: string): number => {
  const read = readDuration(value);
  if (!read.ok) throw invalid(field, DURATION_HELP, value, undefined, read.reason);
  return read.value;
};

/** Splits "N/per" into its two parts, or says why it cannot. */
const splitRate = (value: unknown): { ok: true; value: [string, string] } | { ok: false; reason?: string } => {
  if (typeof value !== 'string') return { ok: false };
  const parts = value.trim().split('/');
  if (parts.length !== 2) return { ok: false };
  if (parts.some((part) => part !== part.trim())) return { ok: false, reason: 'no spaces inside a rate' };
  return { ok: true, value: [parts[0], parts[1]] };
};

/** "20/s" → { count: 20, perMs: 1000, intervalMs: 50 }. */
export const parseRate = (value: unknown, field: string): Rate => {
  const parts = splitRate(value);
  if (!parts.ok) throw invalid(field, RATE_HELP, value, undefined, parts.reason);
  const [amount, per] = parts.value;
  if (!COUNT.test(amount)) throw invalid(field, RATE_HELP, value);
  const perMs = readPer(per);
  if (!perMs.ok) throw invalid(field, RATE_HELP, value, undefined, perMs.reason);
  const count = Number(amount);
  if (!(count > 0) || !(perMs.value > 0)) throw invalid(field, `${RATE_HELP}, with N and the duration above zero`, value);
  return { count, perMs: perMs.value, intervalMs: perMs.value / count };
};

/** "512KiB/s" → { count: 524288, perMs: 1000, intervalMs: ms per byte }. */
export const parseByteRate = (value: unknown, field: string): Rate => {
  const parts = splitRate(value);
  if (!parts.ok) throw invalid(field, BYTE_HELP, value, undefined, parts.reason);
  const bytes = readByteSize(parts.value[0]);
  const perMs = readPer(parts.value[1]);
  const problem = !bytes.ok ? bytes.reason : !perMs.ok ? perMs.reason : undefined;
  if (!bytes.ok || !perMs.ok) throw invalid(field, BYTE_HELP, value, undefined, problem);
  if (!(bytes.value > 0) || !(perMs.value > 0)) throw invalid(field, `${BYTE_HELP}, above zero`, value);
  return { count: bytes.value, perMs: perMs.value, intervalMs: perMs.value / bytes.value };
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
  const read = readDuration(value);
  if (!read.ok) throw invalid(field, expected, value, undefined, read.reason);
  return { kind: 'duration', ms: read.value };
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
  const perHelp = `${DURATION_HELP}, or a unit s, m, h or d`;
  const read = typeof per === 'string' ? readPer(per.trim()) : readDuration(per);
  if (!read.ok) throw invalid(field, perHelp, per, 'per', read.reason);
  const windowMs = read.value;
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
