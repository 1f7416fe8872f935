/**
 * `sluice run`: gets every piece from the wiring (./wiring-sidecar.ts builds them), then only
 * orchestrates: starts the HTTP server (its main and admin listeners), the downstream budget,
 * the ingress flow and the drainer of the retry tiers (a second flow of the same engine, in its
 * own group) and the lag collector, waits for a stop signal or a crashed consumer, and stops.
 * Graceful stop within 10 s. Returns the exit code.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/types';
import { SluiceError } from '../errors';
import { adminListenerProblem } from '../http/admin-access';
import { startKafka, stopPipeline } from './wiring';
import { buildSidecar, createCleanups, createRunLag } from './wiring-sidecar';

export interface RunSidecarOptions {
  config: Config;
  logger: Logger;
  /** Resolves when the process is asked to stop (SIGTERM, SIGINT). */
  stopSignal: Promise<unknown>;
  /** Literal secrets the HTTP answers must mask. */
  secrets?: readonly string[];
  stopBudgetMs?: number;
}

export const runSidecar = async ({ config, logger, stopSignal, secrets = [], stopBudgetMs = 9000 }: RunSidecarOptions): Promise<number> => {
  // Before anything connects: an admin listener that would answer anyone is a settings error (exit 1).
  const adminProblem = adminListenerProblem(config.http);
  if (adminProblem) throw new SluiceError('CONFIG_INVALID', adminProblem);
  const { kafka, admin } = await startKafka(config, logger);
  const cleanups = createCleanups();
  cleanups.last(() => admin.disconnect());
  try {
    const { prom, members, budget, pipeline, ingress, drainer, http } = await buildSidecar(config, { kafka, admin, logger, secrets, cleanups });
    const bound = await http.listen();
    cleanups.last(() => http.close());
    logger.info({ http: bound, ingress: config.topics.ingress, downstream: config.topics.downstream, mode: config.mode }, 'sluice run starting');
    budget.start();
    await ingress.start();
    await drainer.start();
    void members.refresh();
    const lag = createRunLag(config, { admin, prom, logger });
    lag.start();
    cleanups.first(() => lag.stop());

    const crashed = new Promise<'crash'>((resolve) => {
      const timer = setInterval(() => (ingress.consumer.crashed() || drainer.consumer.crashed()) && resolve('crash'), 500);
      timer.unref();
      cleanups.last(() => clearInterval(timer));
    });
    const why = await Promise.race([stopSignal.then(() => 'signal' as const), crashed]);
    logger.info({ why }, 'sluice run stopping');
    http.shuttingDown();
    const stopAt = Date.now();
    await stopPipeline(pipeline, stopBudgetMs);
    logger.info({ ms: Date.now() - stopAt, inFlight: ingress.tracker.inFlight() + drainer.tracker.inFlight() }, 'sluice run stopped: held messages finished or parked, offsets committed');
    return why === 'crash' ? 3 : 0;
  } finally {
    await cleanups.run(logger);
  }
};
