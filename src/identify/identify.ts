/**
 * Which producer sent a message: the value of a header (identity.source = header) or the
 * message key (identity.source = key). A missing or empty id becomes the fallback id; an id
 * longer than MAX_ID_LENGTH is cut and suffixed with a hash of the whole id, so ids stay
 * bounded and two long ids sharing a prefix stay distinct.
 */
import { createHash } from 'node:crypto';
import { findHeader, type HeaderList } from '../headers/header-list';

export const MAX_ID_LENGTH = 200;

export interface IdentityOptions {
  source: 'header' | 'key';
  header: string;
  fallback: string;
}

const asText = (value: Buffer | string | null | undefined): string | undefined => {
  if (value === null || value === undefined) return undefined;
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
};

/** The first value of a header as text, looked up case-sensitively first, then ignoring case. */
export const headerValue = (headers: HeaderList, name: string): string | undefined => asText(findHeader(headers, name));

export const boundId = (id: string): string => {
  if (id.length <= MAX_ID_LENGTH) return id;
  const digest = createHash('sha256').update(id).digest('hex').slice(0, 16);
  return `${id.slice(0, MAX_ID_LENGTH - 17)}~${digest}`;
};

export const identify = (
  message: { key: Buffer | string | null; headers: HeaderList },
  options: IdentityOptions,
): string => {
  const raw = options.source === 'key' ? asText(message.key) : headerValue(message.headers, options.header);
  return raw ? boundId(raw) : options.fallback;
};
