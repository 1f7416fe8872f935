/** Sizes: "512KiB", "64MiB", "1GB", "100B" → bytes (the grammar: quantity.ts). */
import { readQuantity, type Reading, type UnitTable } from './quantity';

export const BYTE_SIZE: UnitTable = {
  base: 'bytes',
  units: { B: 1, KB: 1000, KiB: 1024, MB: 1000 ** 2, MiB: 1024 ** 2, GB: 1000 ** 3, GiB: 1024 ** 3 },
};

/** Bytes of a size; `plain: 'bytes'` also takes a plain number as bytes. */
export const readByteSize = (input: unknown, options: { plain?: 'bytes' } = {}): Reading<number> =>
  readQuantity(input, BYTE_SIZE, options.plain === 'bytes');
