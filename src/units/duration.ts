/** Durations: "500ms", "5s", "1.5m", "1h", "1d" → milliseconds (the grammar: quantity.ts). */
import { readQuantity, type Reading, type UnitTable } from './quantity';

export const DURATION: UnitTable = {
  base: 'milliseconds',
  units: { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 },
};

/** Milliseconds of a duration; `plain: 'ms'` also takes a plain number as milliseconds. */
export const readDuration = (input: unknown, options: { plain?: 'ms' } = {}): Reading<number> =>
  readQuantity(input, DURATION, options.plain === 'ms');

/** The shortest exact spelling of a duration: 5000 → "5s", 600000 → "10m", 1500 → "1500ms". */
export const formatDuration = (ms: number): string => {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = DURATION.units[unit];
    if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
};
