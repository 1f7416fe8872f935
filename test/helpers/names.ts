/**
 * Random names for tests, so runs never share state: topics, consumer groups, client ids,
 * Redis key prefixes. `randomName('orders')` → `orders-lx3k9a-1f2e3d4c5b6a`.
 */
import crypto from 'node:crypto';

/** `bytes` random bytes as hex (12 characters by default). */
export const randomId = (bytes = 6): string => crypto.randomBytes(bytes).toString('hex');

/** `<prefix>-<time base36>-<random hex>`: unique, sortable by creation, valid as a topic name. */
export const randomName = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${randomId()}`;

export const randomTopicName = (prefix = 'test'): string => randomName(`sluice-${prefix}`);

export const randomGroupId = (prefix = 'test'): string => randomName(`sluice-group-${prefix}`);

/** A Redis key prefix ending in ':'; wrap in `{…}` yourself when keys must share a cluster slot. */
export const randomKeyPrefix = (prefix = 'test'): string => `sluice-${prefix}:${randomId()}:`;
