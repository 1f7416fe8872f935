/**
 * The warm-up before joining (src/app/warm-up.ts) on real parts: a `sluice run` process warms
 * its hot path on synthetic messages, then joins; nothing of the warm-up reaches Kafka, Redis
 * or the metrics, and the first real messages go through as ever.
 */
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { createRedis } from '../../helpers/redis';
import { createScenario, runLoad, type Scenario, type Sidecar, startSidecar } from './sidecar-fixture';

const kafka = createKafka();
const redis = createRedis();
let scenario: Scenario;
let sidecar: Sidecar;

const logged = (msg: string): Record<string, unknown> | undefined => {
  const line = sidecar.lines.find((l) => l.includes(`"msg":"${msg}"`));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
};

beforeAll(async () => {
  scenario = await createScenario(kafka, { partitions: 2, quotas: 'default:\n  rate: 50/s\n  queue: 1m\n' });
  sidecar = startSidecar(scenario);
  await sidecar.joined();
}, 90_000);

afterAll(async () => {
  await sidecar?.stop();
  redis.disconnect();
});

describe('when sluice run starts', () => {
  it('warms up on synthetic messages that all go the whole way to the writer, before it joins', () => {
    const warmed = logged('warm-up done: the hot path compiled before joining');
    expect(warmed).toBeDefined();
    expect(warmed?.messages).toBeGreaterThan(0);
    expect(warmed?.written).toBe(warmed?.messages);
    const order = ['warm-up done', 'joined the group'].map((m) => sidecar.lines.findIndex((l) => l.includes(`"msg":"${m}`)));
    expect(order[0]).toBeGreaterThanOrEqual(0);
    expect(order[0]).toBeLessThan(order[1]);
  });

  it('leaves nothing of the warm-up downstream, in Redis or in the metrics', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const topic of [scenario.downstream, `${scenario.ingress}.dlq`]) {
        const offsets = await admin.fetchTopicOffsets(topic);
        expect(offsets.map((o) => Number(o.high))).toEqual(offsets.map(() => 0));
      }
    } finally {
      await admin.disconnect();
    }
    const keys = await redis.keys(`${scenario.env.SLUICE_REDIS_KEY_PREFIX}*`);
    expect(keys.filter((k) => k.includes('warm-up'))).toEqual([]);
    const port = Number(/"http":\{[^}]*"port":(\d+)/.exec(sidecar.lines.find((l) => l.includes('sluice run starting')) ?? '')?.[1]);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('sluice_messages_total');
    expect(metrics).not.toContain('warm-up');
  });

  it('then forwards real messages as ever, every one once', async () => {
    const sent = await runLoad(kafka, scenario.ingress, [{ id: 'first', perSecond: 20, seconds: 2 }]);
    const downstream = await waitForMessages(kafka, scenario.downstream, (all) => all.length >= sent.length, { timeoutMs: 30_000 });
    expect(downstream.map((m) => String(m.value)).sort()).toEqual([...sent].sort());
  }, 60_000);
});
