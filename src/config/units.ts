/**
 * The settings' side of the one quantity grammar (src/units): kept for the callers that read
 * a duration where a plain number is milliseconds (usage resolutions, `--since`), and the
 * tier labels. New code imports src/units directly.
 */
import { formatDuration, readByteSize, readDuration } from '../units';

export { formatDuration };

/** Milliseconds of a duration such as "5s", "1.5m" or "1d"; a plain number is milliseconds; undefined when it does not parse. */
export const parseDuration = (input: unknown): number | undefined => {
  const read = readDuration(input, { plain: 'ms' });
  return read.ok ? read.value : undefined;
};

/** Bytes of a size such as "64MiB", "500KB" or a plain number of bytes; undefined when it does not parse. */
export const parseByteSize = (input: unknown): number | undefined => {
  const read = readByteSize(input, { plain: 'bytes' });
  return read.ok ? read.value : undefined;
};
