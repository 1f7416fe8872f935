/**
 * A transactional producer on the ingress topic (kafkajs's transactions): sluice reads
 * committed records only (kafkajs's `readUncommitted: false`, its default), so what a
 * transaction commits is forwarded once and what it aborts never is; the control records
 * (commit and abort markers) are offset gaps the commit covers. And an open transaction holds
 * back what follows it on its partition until it ends — Kafka's read_committed (the last stable
 * offset), not sluice's: a partition without one goes on meanwhile.
 */
import '../../helpers/processes';
import { randomUUID } from 'node:crypto';
import { createKafka, consumeAll, waitForMessages } from '../../helpers/kafka';
import { redisUrl } from '../../helpers/redis';
import { createScenario, duplicates, Sidecar, startSidecar } from './sidecar-fixture';

const kafka = createKafka();
let sidecar: Sidecar | undefined;

afterEach(async () => {
  await sidecar?.stop();
  sidecar = undefined;
});

const batch = (prefix: string, n: number, partition: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}-${i}`, value: `${prefix}:${i}`, partition, headers: { 'producer-id': prefix } }));

describe('when the ingress topic carries transactions', () => {
  it('forwards what a transaction commits, once, never what one aborts, and a partition behind an open transaction waits for its end while another goes on', async () => {
    const scenario = await createScenario(kafka, { partitions: 2, quotas: 'default:\n  rate: 1000/s\n', env: { SLUICE_REDIS_URL: redisUrl() } });
    sidecar = startSidecar(scenario);
    await sidecar.joined();

    const producer = kafka.producer({ transactionalId: `sluice-test-${randomUUID()}`, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    const plain = kafka.producer({ allowAutoTopicCreation: false });
    await plain.connect();
    try {
      const committed = await producer.transaction();
      await committed.send({ topic: scenario.ingress, messages: batch('committed', 20, 0) });
      await committed.commit();
      const aborted = await producer.transaction();
      await aborted.send({ topic: scenario.ingress, messages: batch('aborted', 20, 0) });
      await aborted.abort();

      // Open: partition 0 is held back from here; partition 1 is not.
      const open = await producer.transaction();
      await open.send({ topic: scenario.ingress, messages: batch('late', 10, 0) });
      await plain.send({ topic: scenario.ingress, acks: -1, messages: [...batch('behind', 5, 0), ...batch('beside', 5, 1)] });
      const beside = await waitForMessages(kafka, scenario.downstream, (all) => all.filter((m) => String(m.value).startsWith('beside:')).length >= 5, { timeoutMs: 30_000 });
      expect(beside.filter((m) => /^(late|behind):/.test(String(m.value)))).toEqual([]);
      await open.commit();

      const expected = [...batch('committed', 20, 0), ...batch('late', 10, 0), ...batch('behind', 5, 0), ...batch('beside', 5, 1)].map((m) => m.value);
      await waitForMessages(kafka, scenario.downstream, expected.length, { timeoutMs: 30_000 });
      const all = await consumeAll(kafka, scenario.downstream);
      const values = all.map((m) => String(m.value));
      expect(values.filter((v) => v.startsWith('aborted:'))).toEqual([]);
      expect([...values].sort()).toEqual([...expected].sort());
      expect(duplicates(all)).toEqual([]);
    } finally {
      await producer.disconnect();
      await plain.disconnect();
    }
  }, 120_000);
});
