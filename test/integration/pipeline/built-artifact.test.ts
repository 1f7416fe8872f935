/**
 * The program as shipped: `npm run build` bundles sluice into one file (scripts/build.mjs), and
 * that file, not the source, is what the image and the bench run. Built here into a folder of
 * its own, it runs `sluice run` against the real broker and Redis: compressed batches are read,
 * a record whose headers are object internals and forged `sluice-*` names is forwarded with its
 * own headers in order (the patched kafkajs inside the bundle), and a producer over its quota
 * is parked in the 5 s tier and comes back (the Lua scripts beside the bundle, the tiers'
 * consumer). Every message exactly once downstream.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CompressionTypes } from 'kafkajs';
import { registerCodecs } from '../../../src/codecs/register-codecs';
import type { HeaderList } from '../../../src/headers/header-list';
import { createKafka } from '../../helpers/kafka';
import { randomGroupId } from '../../helpers/names';
import { waitFor } from '../../helpers/wait';
import { createScenario, Sidecar, startSidecar } from './sidecar-fixture';

const ROOT = resolve(__dirname, '../../..');
// Under node_modules, so the bundle finds the one package it leaves outside (@node-rs/crc32) as it would in the image.
const OUT = join(ROOT, 'node_modules', '.cache', `sluice-built-${randomUUID()}`);
const kafka = createKafka();
const running: Sidecar[] = [];

beforeAll(() => {
  registerCodecs();
  execFileSync(process.execPath, ['scripts/build.mjs', OUT], { cwd: ROOT, stdio: 'pipe' });
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGKILL')));
  rmSync(OUT, { recursive: true, force: true });
});

/** Downstream messages as the broker holds them: value, and the header list in order (the patched decoder's). */
const readDownstream = async (topic: string, count: number): Promise<Array<{ value: string; headers: Array<[string, string]> }>> => {
  const got: Array<{ value: string; headers: Array<[string, string]> }> = [];
  const consumer = kafka.consumer({ groupId: randomGroupId('built'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const list = (message as unknown as { headerList: HeaderList }).headerList;
        got.push({ value: String(message.value), headers: list.map((h) => [String(h.key), String(h.value)]) });
      },
    });
    await waitFor(() => got.length >= count, { timeoutMs: 90_000, message: () => `${count} messages downstream (got ${got.length})` });
    return got;
  } finally {
    await consumer.disconnect();
  }
};

describe('the built program (dist/main.js as npm run build makes it)', () => {
  it('is one file with the Lua scripts beside it', () => {
    expect(existsSync(join(OUT, 'main.js'))).toBe(true);
    expect(existsSync(join(OUT, 'lua', 'decide-1.lua'))).toBe(true);
  });

  it('forwards compressed batches, hostile headers and a parked producer, each message once', async () => {
    const scenario = await createScenario(kafka, { quotas: 'default:\n  rate: 1000/s\n  queue: 1m\nproducers:\n  slow:\n    rate: 2/s\n    queue: 1s\n' });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const sent: string[] = [];
    try {
      for (const [name, compression] of [['gzip', CompressionTypes.GZIP], ['snappy', CompressionTypes.Snappy]] as const) {
        const messages = Array.from({ length: 20 }, (_, i) => ({ value: `${name}:${i}`, headers: { 'producer-id': name } }));
        await producer.send({ topic: scenario.ingress, compression, messages, acks: -1 });
        sent.push(...messages.map((m) => m.value));
      }
      // The patched encoder writes a header list as it is: repeated names, internals, forged sluice-* names.
      const hostile = [
        { key: '__proto__', value: 'p' }, { key: 'constructor', value: 'c' }, { key: 'sluice-waited-ms', value: '-1' },
        { key: 'producer-id', value: 'hostile' }, { key: '__proto__', value: 'q' },
      ];
      await producer.send({ topic: scenario.ingress, messages: [{ value: 'hostile:0', headers: hostile as unknown as Record<string, string> }], acks: -1 });
      sent.push('hostile:0');
      // 8 at once at 2/s with 1 s of queue: a few wait in memory, the rest go through the 5 s tier.
      const slow = Array.from({ length: 8 }, (_, i) => ({ value: `slow:${i}`, headers: { 'producer-id': 'slow' } }));
      await producer.send({ topic: scenario.ingress, messages: slow, acks: -1 });
      sent.push(...slow.map((m) => m.value));
    } finally {
      await producer.disconnect();
    }
    const sidecar = startSidecar(scenario, {}, [join(OUT, 'main.js')]);
    running.push(sidecar);
    const downstream = await readDownstream(scenario.downstream, sent.length);
    const values = downstream.map((m) => m.value);
    expect(sent.filter((v) => !values.includes(v))).toEqual([]);
    expect(values).toHaveLength(sent.length);
    expect(new Set(values).size).toBe(sent.length);
    const hostile = downstream.find((m) => m.value === 'hostile:0')?.headers ?? [];
    expect(hostile.slice(0, -1)).toEqual([['__proto__', 'p'], ['constructor', 'c'], ['producer-id', 'hostile'], ['__proto__', 'q']]);
    expect(hostile[hostile.length - 1][0]).toBe('sluice-waited-ms');
    const admin = kafka.admin();
    await admin.connect();
    const tier = await admin.fetchTopicOffsets(`${scenario.ingress}.retry.5s`).finally(() => admin.disconnect());
    expect(tier.reduce((sum, p) => sum + Number(p.high), 0)).toBeGreaterThan(0);
    expect(sidecar.lines.filter((l) => l.includes('"level":"error"') || l.includes('"level":"fatal"'))).toEqual([]);
  }, 150_000);
});
