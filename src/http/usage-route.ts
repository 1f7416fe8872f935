/**
 * GET /v1/producers/{id}/usage?resolution=1m&since=1h: the producer's usage history as JSON
 * (src/usage/usage-query.ts). Bad parameters: 400 with the reason; the store not answering: 503.
 */
import { SluiceError } from '../errors';
import type { UsageQuery } from '../usage/usage-query';

export interface UsageReply {
  status: number;
  body: unknown;
}

const PATH = /^\/v1\/producers\/([^/]+)\/usage$/;

/** The still-encoded producer id of a usage path, or undefined for any other path. */
export const matchUsagePath = (path: string): string | undefined => PATH.exec(path)?.[1];

const param = (query: URLSearchParams, name: string): string | undefined => query.get(name) ?? undefined;

export const usageReply = async (usage: UsageQuery, encodedId: string, query: URLSearchParams): Promise<UsageReply> => {
  let producer: string;
  try {
    producer = decodeURIComponent(encodedId);
  } catch {
    return { status: 400, body: { error: 'producer id is not valid percent-encoding' } };
  }
  try {
    return { status: 200, body: await usage(producer, param(query, 'resolution'), param(query, 'since')) };
  } catch (error) {
    if (error instanceof SluiceError && error.code === 'ARGUMENT_INVALID') return { status: 400, body: { error: error.message } };
    return { status: 503, body: { error: `the store did not answer: ${(error as Error).message}` } };
  }
};
