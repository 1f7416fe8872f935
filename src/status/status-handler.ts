/** The `sluice status` handler main.ts passes to the CLI: settings → what status reads (quota rules, the store, the budget's reports; built by the wiring) → runStatus. */
import { withConfig, type HandlerContext } from '../app/handlers';
import { openStatus } from '../app/wiring-commands';
import type { Output, StatusOptions } from '../cli/types';
import { runStatus } from './status-command';

export const statusHandler = (context: HandlerContext, out: Output) => (opts: StatusOptions): Promise<number> =>
  withConfig(context, opts.config, async (config) => {
    const status = openStatus(config);
    try {
      await status.ready();
      return await runStatus({ ...status.parts, out }, opts.producer);
    } finally {
      status.close();
    }
  });
