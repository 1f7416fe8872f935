/**
 * One Redis key per producer: `<keyPrefix>{<id>}`, where <id> is encodeURIComponent of the
 * producer id (never contains braces, so the hash tag is exactly the id and every script
 * touches one Redis Cluster slot), or `#` + the SHA-256 of the id (base64url) when the
 * encoding is longer than MAX_ENCODED_ID. `#` never appears in an encoding, so two ids never
 * share a key.
 */
import { createHash } from 'node:crypto';

export const MAX_ENCODED_ID = 96;

const hashed = (producer: string): string => `#${createHash('sha256').update(producer).digest('base64url')}`;

export const encodeProducerId = (producer: string): string => {
  let encoded: string;
  try {
    encoded = encodeURIComponent(producer);
  } catch {
    return hashed(producer); // a lone surrogate cannot be encoded
  }
  return encoded.length > MAX_ENCODED_ID ? hashed(producer) : encoded;
};

export const producerKey = (keyPrefix: string, producer: string): string => `${keyPrefix}{${encodeProducerId(producer)}}`;

/** The rule's fingerprint as the 5 decimal digits the Lua state keeps (see decide-1.lua). */
export const fingerprintDigits = (fingerprint: string): string =>
  String(createHash('sha1').update(fingerprint).digest().readUInt32BE(0) % 100_000).padStart(5, '0');
