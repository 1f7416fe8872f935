/**
 * Any record ends downstream or dead-lettered, never in a crash (docs/design.md "Any record,
 * any id"). fast-check draws records of random shape — header names that are object internals
 * (`__proto__`, `constructor`), forged `sluice-*` headers in any case, empty and non-UTF-8
 * names, null and binary values, repeated and interleaved names, records with thousands of
 * headers, empty and large keys and values — and a kafkajs producer (the patched encoder
 * writes a header list as it is) puts them on the ingress topic of two running `sluice run`
 * replicas. Judged from the broker: every record exactly once downstream or in the
 * dead-letter topic, byte for byte (key, value, every header but the dropped `sluice-*` ones,
 * in order, then `sluice-waited-ms`), and both replicas still alive with /healthz 200. On the
 * code before the header list, the first record with `__proto__` and a `sluice-*` header made
 * both replicas exit 3.
 */
import '../../helpers/processes';
import fc from 'fast-check';
import type { Kafka, Message } from 'kafkajs';
import { createKafka, kafkaBrokers } from '../../helpers/kafka';
import { randomGroupId } from '../../helpers/names';
import { redisUrl } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { createBacklogScenario, deleteScenarioTopics, endAllReplicas, lastLines, type BacklogScenario, type Replica, startReplica } from '../retry/backlog-fixture';
import { isSluiceName, type HeaderList } from '../../../src/headers/header-list';

const kafka = createKafka();
const RECORDS = 1500;
const SEED = Number(process.env.SLUICE_FUZZ_SEED ?? Date.now() % 1_000_000);

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const name = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '', 'sluice-attempt', 'SLUICE-Not-Before', 'Sluice-Producer', 'sluice-', 'sluice', 'producer-id', 'a', 'b').map((n) => Buffer.from(n)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 16 }).map((n) => Buffer.from(n)) },
  { weight: 1, arbitrary: bytes(8) }, // not UTF-8, most of the time
);
const header = fc.record({ key: name, value: fc.option(bytes(24), { freq: 4 }) });
const headers = fc.oneof(
  { weight: 20, arbitrary: fc.array(header, { maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 4000 }).map((n) => Array.from({ length: n }, (_, i) => ({ key: Buffer.from(i % 3 === 0 ? '__proto__' : `h${i % 7}`), value: i % 5 === 0 ? null : Buffer.from([i & 0xff]) }))) },
);
const record = fc.record({
  key: fc.option(fc.oneof(bytes(32), fc.constant(Buffer.alloc(0))), { freq: 3 }),
  body: fc.oneof({ weight: 20, arbitrary: bytes(64) }, { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 100_000 }).map((n) => Buffer.alloc(n, 7)) }),
  headers,
  producer: fc.constantFrom('p1', 'p2', 'p3', undefined),
});

interface Sent { id: string; key: Buffer | null; value: Buffer; headers: HeaderList }
interface Got { topic: string; key: Buffer | null; value: Buffer | null; headers: HeaderList }

const hex = (b: Buffer | string | null): string | null => (b === null ? null : Buffer.from(b).toString('hex'));
const show = (list: HeaderList) => list.map((h) => [hex(h.key), hex(h.value)]);

let scenario: BacklogScenario | undefined;

afterAll(async () => {
  await endAllReplicas();
  if (scenario) await deleteScenarioTopics(kafka, scenario);
});

const readAll = async (k: Kafka, s: BacklogScenario, ids: readonly string[]): Promise<Map<string, Got[]>> => {
  const got = new Map<string, Got[]>();
  const consumer = k.consumer({ groupId: randomGroupId('hostile-read'), maxWaitTimeInMs: 100, maxBytes: 50 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topics: [s.downstream, s.deadLetter], fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const value = m.value;
        const id = value === null ? '' : value.subarray(0, 12).toString('latin1');
        const list = (m as unknown as { headerList: HeaderList }).headerList;
        got.set(id, [...(got.get(id) ?? []), { topic: batch.topic, key: m.key, value, headers: list }]);
      }
    },
  });
  try {
    await waitFor(() => ids.every((id) => got.has(id)), { timeoutMs: 120_000, intervalMs: 250, message: 'every hostile record downstream or dead-lettered' });
  } finally {
    await consumer.disconnect();
  }
  return got;
};

describe('when records of random, hostile shape reach two running replicas', () => {
  it(`forwards or dead-letters each exactly once, byte for byte, and both replicas stay up and healthy (seed ${SEED})`, async () => {
    scenario = await createBacklogScenario(kafka, {
      brokers: kafkaBrokers().join(','), redisUrl: redisUrl(), partitions: 4,
      quotas: 'default:\n  rate: 2000/s\n  queue: 1m\n',
      settings: { SLUICE_HTTP_ADMIN_PORT: '0' },
    });
    const s = scenario;
    const replicas: Replica[] = [];
    for (let i = 0; i < 2; i += 1) {
      const r = await startReplica(s);
      await r.ready();
      replicas.push(r);
    }

    const drawn = fc.sample(record, { numRuns: RECORDS, seed: SEED });
    const sent: Sent[] = drawn.map((r, i) => {
      const id = `rec-${String(i).padStart(8, '0')}`;
      const own = r.producer === undefined ? [] : [{ key: Buffer.from('producer-id'), value: Buffer.from(r.producer) }];
      return { id, key: r.key, value: Buffer.concat([Buffer.from(id, 'latin1'), r.body]), headers: [...r.headers, ...own] };
    });
    // One with exactly the shape that stopped the fleet, first in its partition.
    sent.unshift({ id: 'rec-poison-0', key: Buffer.from('k'), value: Buffer.from('rec-poison-0'), headers: [{ key: Buffer.from('__proto__'), value: Buffer.from('x') }, { key: Buffer.from('sluice-attempt'), value: Buffer.from('1') }] });

    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      // Small requests: the records with thousands of headers or 100 KB values stay under the broker's limits.
      for (let i = 0; i < sent.length; i += 50) {
        const messages: Message[] = sent.slice(i, i + 50).map((r) => ({ key: r.key, value: r.value, headers: r.headers as never }));
        await producer.send({ topic: s.ingress, messages, acks: -1 });
      }
    } finally {
      await producer.disconnect();
    }

    const got = await readAll(kafka, s, sent.map((r) => r.id));
    const problems: string[] = [];
    for (const r of sent) {
      const outs = got.get(r.id) ?? [];
      if (outs.length !== 1) {
        problems.push(`${r.id}: ${outs.length} copies (${outs.map((o) => o.topic).join(', ')})`);
        continue;
      }
      const [out] = outs;
      const user = r.headers.filter((h) => !isSluiceName(h.key));
      if (hex(out.key) !== hex(r.key) || hex(out.value) !== hex(r.value)) problems.push(`${r.id}: key or value changed`);
      if (out.topic === s.downstream) {
        const expected = [...show(user), [hex('sluice-waited-ms')]];
        const actual = show(out.headers).map((pair, i) => (i === user.length ? [pair[0]] : pair));
        if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`${r.id}: headers differ downstream: sent ${JSON.stringify(show(r.headers)).slice(0, 300)}, got ${JSON.stringify(show(out.headers)).slice(0, 300)}`);
      } else {
        const kept = out.headers.filter((h) => !isSluiceName(h.key));
        if (JSON.stringify(show(kept)) !== JSON.stringify(show(user))) problems.push(`${r.id}: headers differ in the dead-letter topic`);
      }
    }
    for (const r of replicas) {
      const health = await fetch(`http://127.0.0.1:${r.port}/healthz`).then((res) => res.status, () => 0);
      if (health !== 200) problems.push(`replica ${r.pid}: /healthz ${health}; last lines:\n${lastLines(r).join('\n')}`);
    }
    const exits = await Promise.all(replicas.map((r) => r.stop('SIGTERM')));
    exits.forEach((e, i) => e.code !== 0 && problems.push(`replica ${i + 1} exited ${e.code} on SIGTERM`));
    process.stderr.write(`[hostile-records] seed ${SEED}: ${sent.length} records, ${[...got.values()].flat().filter((g) => g.topic === s.deadLetter).length} dead-lettered; ${problems.length} problems\n`);
    expect(problems.slice(0, 20)).toEqual([]);
  }, 300_000);
});
