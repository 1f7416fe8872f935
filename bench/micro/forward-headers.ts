/**
 * CPU per forwarded message of what `sluice-waited-ms` adds, in the bench's heavy shape (1 KiB
 * value, 10 headers as kafkajs's patched decoder hands them: names and values as Buffers):
 * the writer's `forwardAll` (the header list, the size estimate, the kafkajs Message) and
 * kafkajs's record encoder with the CRC of its bytes, with the header and without it (the
 * user's list passed on as it is), and with the header as strings or Buffers built beside
 * it. 200k messages a round, 9 rounds, the variants' order rotated, medians [ranges].
 *   npx tsx bench/micro/forward-headers.ts [path of batch-sender.ts (the writer) to measure]
 */
import { resolve } from 'node:path';
import type { Message } from 'kafkajs';
import type { HeaderList } from '../../src/headers/header-list';
import type { Sender } from '../../src/produce/batch-sender';
import type { MessageContent } from '../../src/park/park';
import { EXTRA_HEADERS } from '../pipeline/load';

// kafkajs's own record encoder (patched: a list of headers is written as it is) and CRC-32C.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: { offsetDelta: number; timestampDelta: number; key: unknown; value: unknown; headers: unknown }) => { buffer: Buffer };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

const MESSAGES = 200_000;
const BATCH = 100;
const ROUNDS = 9;

/** A message released at once, first seen i % 7 ms before the writer's `now` (0). */
const contentOf = (i: number, value: Buffer): { content: MessageContent; info: { timestamp: string; firstSeen: number }; size: number } => {
  const pairs: [string, string][] = [['producer-id', `p-${i % 100}`], ['bench-sent', '1764250000000'], ['bench-seq', String(i)], ...EXTRA_HEADERS.map(([k, v]) => [k, v] as [string, string])];
  const headers: HeaderList = pairs.map(([k, v]) => ({ key: Buffer.from(k), value: Buffer.from(v) }));
  const size = value.length + pairs.reduce((n, [k, v]) => n + k.length + v.length, 0);
  return { content: { key: null, value, headers }, info: { timestamp: '1764250000000', firstSeen: -(i % 7) }, size };
};

const main = async (): Promise<void> => {
  const path = resolve(process.argv[2] ?? 'src/produce/batch-sender.ts');
  const { createMessageWriter } = (await import(path)) as typeof import('../../src/produce/batch-sender');
  let captured: readonly Message[] = [];
  const sender: Sender = {
    send: async () => ({ appendedAt: undefined, slow: false }),
    sendAll: async (_topic, messages) => {
      captured = messages;
      return { errors: [], slow: false };
    },
    flush: async () => undefined,
    pending: () => 0,
    failing: () => [],
    close: () => undefined,
  };
  const writer = createMessageWriter({ sender, clock: { now: () => 0 }, topics: { downstream: 'down', deadLetter: 'dlq', tiers: [], partitions: new Map([['down', 8], ['dlq', 1]]) } });
  const value = Buffer.alloc(1024, 'x');
  const inputs = Array.from({ length: MESSAGES }, (_, i) => contentOf(i, value));
  let sink = 0;
  const encode = (messages: readonly Message[]): void => {
    for (let i = 0; i < messages.length; i += 1) {
      const m = messages[i];
      sink = (sink + crc32C(encodeRecord({ offsetDelta: i, timestampDelta: 0, key: m.key, value: m.value, headers: m.headers }).buffer)) % 0x100000000;
    }
  };
  const viaWriter = (): void => {
    for (let i = 0; i < MESSAGES; i += BATCH) {
      void writer.forwardAll(inputs.slice(i, i + BATCH), 0);
      encode(captured);
    }
  };
  // The same Message objects the writer builds, the list given by `headersOf`.
  const built = (headersOf: (user: HeaderList, waitedMs: number) => HeaderList) => (): void => {
    for (let i = 0; i < MESSAGES; i += BATCH) {
      const messages = inputs.slice(i, i + BATCH).map(({ content, info }, k): Message => ({ key: content.key, value: content.value, headers: headersOf(content.headers, -info.firstSeen) as unknown as Message['headers'], timestamp: info.timestamp, partition: k % 8 }));
      encode(messages);
    }
  };
  const KEY = Buffer.from('sluice-waited-ms');
  const variants: [string, () => void][] = [
    ['forwardAll of the writer measured, then encoded', viaWriter],
    ['the header as strings (as the writer adds it)', built((user, ms) => [...user, { key: 'sluice-waited-ms', value: String(Math.round(ms)) }])],
    ['the header as Buffers (name and value)', built((user, ms) => [...user, { key: KEY, value: Buffer.from(String(Math.round(ms))) }])],
    ['no header: the user\'s list as it is', built((user) => user)],
  ];
  const cpu = (f: () => void): number => {
    const start = process.cpuUsage();
    f();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / MESSAGES;
  };
  for (const [, f] of variants) f();
  const runs = variants.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round += 1) {
    // Each round in another order, so drift in the machine's load favours none.
    for (let k = 0; k < variants.length; k += 1) {
      const v = (k + round) % variants.length;
      runs[v].push(cpu(variants[v][1]));
    }
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const show = (xs: number[]): string => `${median(xs).toFixed(2)} µs [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
  console.log(`${path}: ${MESSAGES} messages × ${ROUNDS} rounds, 1 KiB value, 10 headers; CPU per message: the Message built, its record encoded and CRC'd (checksum ${sink})`);
  const none = median(runs[variants.length - 1]);
  variants.forEach(([name], v) => console.log(`  ${name.padEnd(50)} ${show(runs[v])}  (${(median(runs[v]) - none).toFixed(2)} µs more than no header)`));
};

void main();
