/**
 * A destination that cannot be written (docs/contract.md "HTTP"): the dead-letter topic is deleted
 * under a running sidecar, then a message that must be dead-lettered arrives among others.
 * Only that message waits (retried, never skipped); the others are forwarded; the failure shows
 * in sluice_send_errors_total, /v1/status, and /healthz after kafka.stuckAfterMs; once the topic
 * is back the message is dead-lettered and /healthz recovers. Real sluice, broker and Redis.
 */
import '../../helpers/processes';
import { createTopicsWithLeaders } from '../../../src/topics/create-topics';
import { createKafka, createTopic, produce, waitForMessages } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { freePort } from '../../../scripts/services/ports';
import { createScenario, Sidecar, startSidecar } from '../pipeline/sidecar-fixture';

const kafka = createKafka();
const running: Sidecar[] = [];

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGKILL')));
});

const get = async (port: number, path: string): Promise<{ status: number; text: string }> => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, text: await response.text() };
};

describe('when the dead-letter topic is deleted under a running sidecar', () => {
  it('forwards the other messages, retries the dead letter until the topic is back, and shows the trouble in metrics, status and /healthz', async () => {
    const downstream = await createTopic(kafka, { prefix: 'small-out', configEntries: [{ name: 'max.message.bytes', value: '2000' }] });
    const scenario = await createScenario(kafka, { quotas: 'default:\n  rate: 1000/s\n  queue: 1m\n', env: { SLUICE_DOWNSTREAM_TOPIC: downstream } });
    const [port, adminPort] = [await freePort(), await freePort()];
    const sidecar = startSidecar(scenario, { SLUICE_HTTP_PORT: String(port), SLUICE_HTTP_ADMIN_PORT: String(adminPort), SLUICE_KAFKA_STUCK_AFTER_MS: '3000' });
    running.push(sidecar);
    await sidecar.joined();
    const deadLetter = `${scenario.ingress}.dlq`;
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [deadLetter] });
      await waitFor(async () => !(await admin.listTopics()).includes(deadLetter), { timeoutMs: 30_000, message: 'the dead-letter topic to be gone' });

      const big = { 'producer-id': 'big' };
      await produce(kafka, scenario.ingress, [
        { value: 'before', headers: big },
        { value: `huge:${'x'.repeat(10_000)}`, headers: big },
        { value: 'after', headers: big },
      ]);
      const forwarded = await waitForMessages(kafka, downstream, 2, { timeoutMs: 30_000 });
      expect(forwarded.map((m) => String(m.value)).sort()).toEqual(['after', 'before']);

      await waitFor(async () => (await get(port, '/healthz')).status === 503, { timeoutMs: 30_000, message: '/healthz to fail' });
      expect((await get(port, '/healthz')).text).toContain(`sends to ${deadLetter} have failed for`);
      const status = JSON.parse((await get(adminPort, '/v1/status')).text) as { sendErrors: { destination: string; failures: number }[] };
      expect(status.sendErrors.map((e) => e.destination)).toEqual([deadLetter]);
      expect((await get(port, '/metrics')).text).toMatch(new RegExp(`sluice_send_errors_total\\{destination="${deadLetter.replace(/\./g, '\\.')}",code="[A-Za-z_]+"\\} [1-9]`));
      // more traffic still flows while the dead letter waits
      await produce(kafka, scenario.ingress, [{ value: 'later', headers: big }]);
      await waitForMessages(kafka, downstream, 3, { timeoutMs: 30_000 });

      await createTopicsWithLeaders(admin, [{ topic: deadLetter, configEntries: [{ name: 'max.message.bytes', value: String(2 * 1024 * 1024) }] }]);
      const dead = await waitForMessages(kafka, deadLetter, 1, { timeoutMs: 60_000 });
      expect(String(dead[0].value).startsWith('huge:')).toBe(true);
      await waitFor(async () => (await get(port, '/healthz')).status === 200, { timeoutMs: 30_000, message: '/healthz to recover' });
      expect(JSON.parse((await get(adminPort, '/v1/status')).text).sendErrors).toEqual([]);
    } finally {
      await admin.disconnect();
    }
    expect(await sidecar.stop()).toBe(0);
  }, 180_000);
});
