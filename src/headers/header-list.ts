/**
 * A record's headers as the wire has them: a list of `{ key, value }` in order, from decode to
 * encode. Any name is a header like any other — `__proto__`, `constructor`, empty, not UTF-8,
 * repeated or interleaved — because no name is ever a property of an object here: the patched
 * kafkajs decoder (patches/kafkajs+2.2.4.patch) hands each record's list as `headerList`, keys
 * as the raw bytes of the name, and its encoder writes such a list back as it is.
 * docs/design.md "Any record, any id".
 *
 * Which producer sent a message (identify): the value of a header (identity.source = header)
 * or the message key (identity.source = key). A missing or empty id becomes the fallback id;
 * an id longer than MAX_ID_LENGTH is cut and suffixed with a hash of the whole id, so ids stay
 * bounded and two long ids sharing a prefix stay distinct.
 */
import { createHash } from 'node:crypto';
import type { IHeaders, KafkaMessage } from 'kafkajs';

export interface Header {
  /** The name's bytes as received (a Buffer), or a name sluice writes (a string; the headers of a forward as bytes, src/park/park.ts). */
  readonly key: Buffer | string;
  readonly value: Buffer | string | null;
}

export type HeaderList = readonly Header[];

const NONE: HeaderList = Object.freeze([]);

/**
 * The headers of a fetched record: the decoder's list, or — for a message built by hand (tests,
 * an unpatched client, which `sluice run` refuses at start) — kafkajs's object read through
 * its own properties only, a repeated name's values one after the other.
 */
export const headerListOf = (message: Pick<KafkaMessage, 'headers'> & { headerList?: HeaderList }): HeaderList => {
  if (Array.isArray(message.headerList)) return message.headerList;
  const headers = message.headers;
  if (headers === undefined || headers === null) return NONE;
  const list: Header[] = [];
  for (const key of Object.keys(headers)) {
    const value = Object.getOwnPropertyDescriptor(headers, key)?.value as IHeaders[string];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) list.push({ key, value: v ?? null });
    else list.push({ key, value });
  }
  return list;
};

/** A list as kafkajs's Message type names it (the patched encoder writes a list as it is). */
export const asKafkaHeaders = (list: HeaderList): IHeaders => list as unknown as IHeaders;

const byteLength = (b: Buffer | string | null): number => (b === null ? 0 : typeof b === 'string' ? Buffer.byteLength(b) : b.length);

/** Bytes of every name and value (what the byte bucket and the hold caps count of headers). */
export const headerBytes = (list: HeaderList): number => {
  let n = 0;
  for (let i = 0; i < list.length; i += 1) n += byteLength(list[i].key) + byteLength(list[i].value);
  return n;
};

const ASCII_CASE = 0x20;

/** Whether `key` begins with `lower` (lower case), ASCII letters in any case; nothing allocated. */
const startsIgnoringCase = (key: Header['key'], lower: string): boolean => {
  if (key.length < lower.length) return false;
  const text = typeof key === 'string';
  for (let i = 0; i < lower.length; i += 1) {
    const c = text ? key.charCodeAt(i) : key[i];
    const l = lower.charCodeAt(i);
    if (c !== l && !((c | ASCII_CASE) === l && l >= 0x61 && l <= 0x7a)) return false;
  }
  return true;
};

/** Whether `key` is `lower` (a name in lower case) with ASCII letters in any case. */
const sameIgnoringCase = (key: Header['key'], lower: string): boolean => key.length === lower.length && startsIgnoringCase(key, lower);

/** The UTF-8 bytes of the names looked up (a few: the identity header, sluice's own). */
const nameBytes = new Map<string, Buffer>();
const bytesOf = (name: string): Buffer => {
  let bytes = nameBytes.get(name);
  if (bytes === undefined) {
    bytes = Buffer.from(name, 'utf8');
    if (nameBytes.size < 64) nameBytes.set(name, bytes);
  }
  return bytes;
};

/** Whether `key` is `name`: a name's bytes compared in place (a string of each name that has its length cost ~30 bytes a message). */
const sameName = (key: Header['key'], name: string): boolean => {
  if (typeof key === 'string') return key === name;
  const bytes = bytesOf(name);
  if (key.length !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i += 1) if (key[i] !== bytes[i]) return false;
  return true;
};

/**
 * The first value of header `name`, matched exactly first, then with ASCII letters in any
 * case; undefined when absent.
 */
export const findHeader = (list: HeaderList, name: string): Header['value'] | undefined => {
  for (let i = 0; i < list.length; i += 1) if (sameName(list[i].key, name)) return list[i].value;
  const lower = name.toLowerCase();
  for (let i = 0; i < list.length; i += 1) if (sameIgnoringCase(list[i].key, lower)) return list[i].value;
  return undefined;
};

/** Every value of header `name`, matched exactly, in order. */
export const headerValues = (list: HeaderList, name: string): Header['value'][] => {
  const values: Header['value'][] = [];
  for (let i = 0; i < list.length; i += 1) if (sameName(list[i].key, name)) values.push(list[i].value);
  return values;
};

export const SLUICE_PREFIX = 'sluice-';

/**
 * Whether a name starts with `sluice-`, ASCII letters in any case. This runs for every header
 * (twice a forward): its first byte is checked first, and the prefix is compared in place
 * (a `subarray` per name that starts with an s — `schema-id`, `source`, `span-id` — cost a
 * Buffer object each: 1 % of the sidecar's main thread with the bench's heavy case).
 */
export const isSluiceName = (key: Header['key']): boolean => {
  const first = typeof key === 'string' ? key.charCodeAt(0) : key[0];
  return (first | ASCII_CASE) === 0x73 && startsIgnoringCase(key, SLUICE_PREFIX);
};

/**
 * The list without its `sluice-*` headers (any case), and how many were dropped. A list with
 * nothing to drop is returned as it is (no copy: this runs for every message).
 */
export const withoutSluiceHeaders = (list: HeaderList): { kept: HeaderList; dropped: number } => {
  let i = 0;
  while (i < list.length && !isSluiceName(list[i].key)) i += 1;
  if (i === list.length) return { kept: list, dropped: 0 };
  const kept = list.slice(0, i);
  let dropped = 0;
  for (; i < list.length; i += 1) {
    if (isSluiceName(list[i].key)) dropped += 1;
    else kept.push(list[i]);
  }
  return { kept, dropped };
};

/** The user's headers (any `sluice-*` among them dropped), then `added` in its order. */
export const appendHeaders = (user: HeaderList, added: HeaderList): HeaderList => {
  const out = withoutSluiceHeaders(user).kept.slice();
  for (const header of added) out.push(header);
  return out;
};

/** The longest producer id kept whole (identify, see the file comment). */
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
