/**
 * The one grammar of quantities in settings and the quota file (README "Rate syntax"): a
 * number (digits, an optional decimal part; no sign, no exponent) written directly before
 * its unit, units case-sensitive, surrounding whitespace ignored. The result must be a whole
 * number of the base unit. A plain number, without a unit, is read only where the caller says
 * what it counts (`plain`), e.g. a `…Ms` setting. Pure: refusals are values, not throws.
 */

export type Reading<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface UnitTable {
  /** The base unit's name in reasons: "milliseconds", "bytes". */
  base: string;
  /** Unit → size in base units, in the order they are listed to users. */
  units: Readonly<Record<string, number>>;
}

const PLAIN = /^\d+(?:\.\d+)?$/;
const SPACED = /^\d+(?:\.\d+)?\s+\S+$/;
const WITH_UNIT = /^(\d+(?:\.\d+)?)([A-Za-z]+)$/;

const refuse = (reason: string): Reading<never> => ({ ok: false, reason });

/** A whole number of base units, or why not (floating-point dust below 1e-6 is rounded away). */
const whole = (amount: number, table: UnitTable): Reading<number> => {
  const rounded = Math.round(amount);
  if (Math.abs(amount - rounded) > 1e-6) return refuse(`not a whole number of ${table.base}`);
  if (!Number.isSafeInteger(rounded)) return refuse('too large');
  return { ok: true, value: rounded };
};

/** Reads `input` against a unit table; `plain`: whether a number without a unit is taken as base units. */
export const readQuantity = (input: unknown, table: UnitTable, plain: boolean): Reading<number> => {
  if (typeof input === 'number') {
    if (!plain) return refuse('a number needs a unit here');
    return Number.isFinite(input) && input >= 0 ? whole(input, table) : refuse(`not a whole number of ${table.base}`);
  }
  if (typeof input !== 'string') return refuse('not a number followed by a unit');
  const text = input.trim();
  if (PLAIN.test(text)) return plain ? whole(Number(text), table) : refuse('a number needs a unit here');
  if (SPACED.test(text)) return refuse('no space between the number and its unit');
  const match = WITH_UNIT.exec(text);
  if (!match) return refuse('not a number followed by a unit');
  const size = Object.prototype.hasOwnProperty.call(table.units, match[2]) ? table.units[match[2]] : undefined;
  if (size === undefined) return refuse(`unknown unit "${match[2]}"; the units are ${Object.keys(table.units).join(', ')}, case-sensitive`);
  return whole(Number(match[1]) * size, table);
};
