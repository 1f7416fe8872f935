/**
 * Durations ("5s", "1m", "1d", "250ms") and byte sizes ("64MiB") as users write them in
 * settings. Pure: each parser returns undefined when the text does not parse.
 */

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const durationPattern = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** Milliseconds of a duration such as "5s", "1.5m" or "1d"; a plain number is milliseconds. */
export const parseDuration = (input: unknown): number | undefined => {
  if (typeof input === 'number') return Number.isSafeInteger(input) && input >= 0 ? input : undefined;
  if (typeof input !== 'string') return undefined;
  const text = input.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const match = durationPattern.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * durationUnits[match[2]];
  return Number.isSafeInteger(ms) ? ms : undefined;
};

/** The shortest exact spelling of a duration: 5000 → "5s", 600000 → "10m", 1500 → "1500ms". */
export const formatDuration = (ms: number): string => {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = durationUnits[unit];
    if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
};

const byteUnits: Record<string, number> = {
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};
const bytePattern = /^(\d+(?:\.\d+)?)\s*([kmg]i?b|b)$/i;

/** Bytes of a size such as "64MiB", "500kB" or a plain number of bytes. */
export const parseByteSize = (input: unknown): number | undefined => {
  if (typeof input === 'number') return Number.isSafeInteger(input) && input >= 0 ? input : undefined;
  if (typeof input !== 'string') return undefined;
  const text = input.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const match = bytePattern.exec(text);
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * byteUnits[match[2].toLowerCase()]);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
};
