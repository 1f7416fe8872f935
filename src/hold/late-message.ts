/**
 * The messages of the late-releases channel (late-broadcast.ts): `{ from, late }`, `late` a list
 * of entries [producer, spacingMs, slot, sent], written in bounded messages and checked before
 * they are believed.
 *
 * The channel is shared: any client of the Redis can publish there, and so can a replica of
 * another version or with a broken clock. Believed as it stands, a `sent` far in the future
 * would hold the producer's lane until a second after it (the second rule), a huge interval
 * would pace the lane that far apart, a message of megabytes would stall the event loop in
 * JSON.parse. So each message and each entry is bounded, on the store's clock
 * (docs/design.md "One clock": every replica's `now()` is Redis's time as it sees it, within a
 * reply's latency of the others'):
 * - a message: at most MAX_MESSAGE_CHARS (measured before it is parsed) and MAX_ENTRIES entries;
 * - a producer id: at most MAX_ID_LENGTH characters, the bound every id is cut to (identify);
 * - an interval (`spacingMs`): above 0 and at most MAX_SPACING_MS (a rate of one a day);
 * - a send instant (`sent`): at most CLOCK_SKEW_MS ahead of now (it was counted before it was
 *   told), at most SENT_PAST_MS behind it (an older one binds nothing: its second is over);
 * - a slot: not after its `sent` (an entry is a message sent after its slot), and at most
 *   SLOT_PAST_MS or SLOT_PAST_SPACINGS intervals behind now, whichever is longer (a send
 *   retried through an outage of the downstream topic is counted minutes after its slot; an
 *   older slot would hold nothing back that its `sent` does not).
 * An entry outside its bounds is ignored and counted by reason; for it the lanes bound each
 * replica alone, as they do when Redis is away.
 */
import { MAX_ID_LENGTH } from '../headers/header-list';
import type { LateIgnoredReason } from '../metrics/types';

/** [producer, spacingMs, slot, sent] */
export type LateEntry = [producer: string, spacingMs: number, slot: number, sent: number];

/** The longest message read, in characters; what one tick counts late is written in messages within it. */
export const MAX_MESSAGE_CHARS = 64 * 1024;
/** The most entries in one message. */
export const MAX_ENTRIES = 1000;
/** The longest interval believed: a rate of one a day. */
export const MAX_SPACING_MS = 86_400_000;
/** How far ahead of this replica's `now()` another's may be (each one's offset to Redis is within a reply's latency). */
export const CLOCK_SKEW_MS = 1000;
/** How long after its `sent` an entry is still read (a second after it, it binds nothing). */
export const SENT_PAST_MS = 60_000;
/** How far behind now a slot may lie: at least this long, … */
export const SLOT_PAST_MS = 10 * 60_000;
/** … or this many of its producer's intervals. */
export const SLOT_PAST_SPACINGS = 4;

/** The entries counted late in one tick, as messages of at most MAX_ENTRIES entries and MAX_MESSAGE_CHARS. */
export const writeLateMessages = (from: string, entries: readonly LateEntry[]): string[] => {
  const head = `{"from":${JSON.stringify(from)},"late":[`;
  const messages: string[] = [];
  let parts: string[] = [];
  let length = head.length + 2;
  const flush = (): void => {
    messages.push(`${head}${parts.join(',')}]}`);
    parts = [];
    length = head.length + 2;
  };
  for (const entry of entries) {
    const part = JSON.stringify(entry);
    if (parts.length === MAX_ENTRIES || (parts.length > 0 && length + 1 + part.length > MAX_MESSAGE_CHARS)) flush();
    length += part.length + (parts.length > 0 ? 1 : 0);
    parts.push(part);
  }
  if (parts.length > 0) flush();
  return messages;
};

/** One raw message: its sender and entries (not checked yet), or why it is ignored whole. */
export const readLateMessage = (raw: string): { from: unknown; late: unknown[] } | LateIgnoredReason => {
  if (raw.length > MAX_MESSAGE_CHARS) return 'size';
  let told: unknown;
  try {
    told = JSON.parse(raw);
  } catch {
    return 'json';
  }
  if (typeof told !== 'object' || told === null) return 'json';
  const { from, late } = told as { from?: unknown; late?: unknown };
  if (!Array.isArray(late)) return 'json';
  return late.length > MAX_ENTRIES ? 'entries' : { from, late };
};

const isShaped = (e: unknown): e is LateEntry =>
  Array.isArray(e) && e.length === 4 && typeof e[0] === 'string' && e.slice(1).every((n) => typeof n === 'number' && Number.isFinite(n));

const reasonOf = ([producer, spacingMs, slot, sent]: LateEntry, now: number): LateIgnoredReason | undefined => {
  if (producer.length > MAX_ID_LENGTH) return 'producer';
  if (!(spacingMs > 0 && spacingMs <= MAX_SPACING_MS)) return 'spacing';
  if (sent > now + CLOCK_SKEW_MS || sent < now - SENT_PAST_MS) return 'sent';
  if (slot > sent || slot < now - Math.max(SLOT_PAST_MS, SLOT_PAST_SPACINGS * spacingMs)) return 'slot';
  return undefined;
};

/** One entry heard from another replica, read against the store's clock (`now`): believed, or why not. */
export const checkLateEntry = (entry: unknown, now: number): { ok: true; entry: LateEntry } | { ok: false; reason: LateIgnoredReason } => {
  if (!isShaped(entry)) return { ok: false, reason: 'shape' };
  const reason = reasonOf(entry, now);
  return reason ? { ok: false, reason } : { ok: true, entry };
};
