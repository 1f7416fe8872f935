/** `sluice usage PRODUCER [--resolution] [--since] [--json]`: asks the usage query and prints the answer. */
import type { Output } from '../cli/types';
import type { UsageQuery } from './usage-query';
import { usageText } from './usage-table';

export interface UsageCommandOptions {
  producer: string;
  resolution?: string;
  since?: string;
  json?: boolean;
}

/** Exit code 0; bad parameters and an unreachable store throw (SluiceError, mapped to 1 and 3). */
export const runUsage = async (query: UsageQuery, out: Output, opts: UsageCommandOptions): Promise<number> => {
  const answer = await query(opts.producer, opts.resolution, opts.since);
  out.write(opts.json ? `${JSON.stringify(answer, null, 2)}\n` : usageText(answer, out.isTTY === true));
  return 0;
};
