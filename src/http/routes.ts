/**
 * The read-only answers of docs/contract.md "HTTP", by path: /healthz, /readyz, /metrics,
 * /v1/status, /v1/producers/{id}, /v1/producers/{id}/usage, /v1/quotas. Answers are redacted
 * (src/logger.ts) so no secret leaves through here; answers about one producer are kept for a
 * second. Who may ask for /v1/* is ./admin-access.ts's business, on which listener ./http-server.ts's.
 */
import type { Registry } from 'prom-client';
import { redactSecrets } from '../logger';
import { systemClock, type Clock } from '../clock';
import { createAnswerCache } from './answer-cache';
import type { StatusProvider } from './status-provider';
import type { UsageQuery } from '../usage/usage-query';
import { matchUsagePath, usageReply } from './usage-route';

export interface Answer {
  status: number;
  body: string;
  type?: string;
}

export type Handler = () => Promise<Answer>;
export type Route = (path: string, query: URLSearchParams) => Handler | undefined;

export interface RouteOptions {
  metricsRegistry: Registry;
  status: StatusProvider;
  /** GET /v1/producers/{id}/usage (./usage-route.ts); absent: that path is 404. */
  usage?: UsageQuery;
  /** literal secrets to mask in answers (the settings' passwords). */
  secrets?: readonly string[];
  /** how long answers are kept (default the system clock). */
  clock?: Clock;
}

export const json = (status: number, body: unknown, secrets: readonly string[]): Answer => ({
  status,
  body: `${JSON.stringify(redactSecrets(body, secrets))}\n`,
  type: 'application/json; charset=utf-8',
});

export const createRoutes = (options: RouteOptions, isShuttingDown: () => boolean): Route[] => {
  const { status, metricsRegistry, secrets = [] } = options;
  const answer = (code: number, body: unknown) => json(code, body, secrets);
  const producerReport = createAnswerCache(async (id) => status.producer(id), { ttlMs: 1000, maxEntries: 10_000, clock: options.clock ?? systemClock });
  const probe = (ok: boolean, reason: string) => answer(ok ? 200 : 503, { status: ok ? 'ok' : reason });
  const exact = (want: string, handler: Handler): Route => (path) => (path === want ? handler : undefined);
  return [
    exact('/healthz', async () => probe(status.alive(), status.illness?.() ?? 'consumer crashed')),
    exact('/readyz', async () => (isShuttingDown() ? probe(false, 'shutting down') : probe(status.ready(), 'not joined'))),
    exact('/metrics', async () => ({ status: 200, body: await metricsRegistry.metrics(), type: metricsRegistry.contentType })),
    exact('/v1/status', async () => answer(200, await status.status())),
    exact('/v1/quotas', async () => answer(200, await status.quotas())),
    (path, query) => {
      const id = matchUsagePath(path);
      const { usage } = options;
      if (id === undefined || !usage) return undefined;
      return async () => {
        const reply = await usageReply(usage, id, query);
        return answer(reply.status, reply.body);
      };
    },
    (path) => {
      const match = /^\/v1\/producers\/([^/]+)$/.exec(path);
      if (!match) return undefined;
      return async () => {
        let id: string;
        try {
          id = decodeURIComponent(match[1]);
        } catch {
          return answer(400, { error: 'producer id is not valid percent-encoding' });
        }
        const report = await producerReport(id);
        return report ? answer(200, report) : answer(404, { error: `no producer ${id}` });
      };
    },
  ];
};
