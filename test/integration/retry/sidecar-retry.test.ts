/**
 * The retry tiers end to end through `sluice run` (ingress parks, the built-in drainer
 * releases): delayed messages leave at the quota without being charged twice; sustained
 * overflow ends in the dead-letter topic; every id comes out exactly once.
 */
import { createRedisClient } from '../../../src/limit/redis-client';
import { createRedisStore } from '../../../src/limit/redis-store';
import { parseQuotas, resolveRule } from '../../../src/rules';
import { consumeAll, createKafka, headerValues, type ConsumedMessage } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { appendTimes, createScenario, maxInWindow, runLoad, startSidecar, type Scenario, type Sidecar } from '../pipeline/sidecar-fixture';

const quotas = 'default:\n  rate: 20/s\n  queue: 10s\nproducers:\n  flood:\n    rate: 20/s\n    queue: 1s\n';

describe('when sluice run parks and its drainer releases', () => {
  const kafka = createKafka();
  let scenario: Scenario;
  let sidecar: Sidecar;

  beforeAll(async () => {
    scenario = await createScenario(kafka, {
      quotas,
      env: { SLUICE_RETRY_TIERS: '1s,3s', SLUICE_HOLD_MAX_MS: '1000', SLUICE_RETRY_MAX_ATTEMPTS: '2', SLUICE_LOG_LEVEL: 'info' },
    });
    sidecar = startSidecar(scenario);
    await sidecar.joined();
  });

  afterAll(async () => {
    await sidecar?.stop();
  });

  const downstreamOf = async (producer: string, count: number): Promise<ConsumedMessage[]> =>
    waitFor(async () => {
      const all = (await consumeAll(kafka, scenario.downstream)).filter((m) => String(m.value).startsWith(`${producer}:`));
      return all.length >= count ? all : undefined;
    }, { timeoutMs: 40_000, message: `${count} messages of ${producer} downstream` });

  it('releases a burst parked `delayed` at the quota, once each, charging each message once', async () => {
    const sent = await runLoad(kafka, scenario.ingress, [{ id: 'burst', perSecond: 1000, seconds: 0.1 }]);
    const out = await downstreamOf('burst', sent.length);
    expect(out.map((m) => String(m.value)).sort()).toEqual([...sent].sort());
    const times = appendTimes(out, 'burst');
    // 20/s: at most 40 in any 2 s of broker append time (+10% for send batching on a busy machine).
    expect(maxInWindow(times, 2000)).toBeLessThanOrEqual(44);
    expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(4000);
    const parked = out.filter((m) => headerValues(m.headers, 'sluice-attempt').length > 0);
    expect(parked.length).toBeGreaterThanOrEqual(50);
    const rule = resolveRule(parseQuotas(quotas, 'quotas.yaml'), 'burst').limit;
    const redis = createRedisClient({ url: process.env.SLUICE_REDIS_URL, timeoutMs: 1000 });
    try {
      await waitFor(() => redis.status === 'ready');
      const store = createRedisStore({ redis, keyPrefix: scenario.env.SLUICE_REDIS_KEY_PREFIX, timeoutMs: 1000 });
      // Charged twice, the bucket would still be about 5 s (100 × 50 ms) ahead of now.
      expect((await store.inspect('burst', rule as never)).backlogMs).toBeLessThan(1000);
    } finally {
      redis.disconnect();
    }
  });

  it('dead-letters sustained overflow after retry.maxAttempts and loses nothing', async () => {
    // 12 s at 3× the quota: the first refusals come back (1 s tier) while the flood still fills
    // the bucket, however the sidecar's fetches happen to group it (6 s once let every retry fit
    // behind a flood that was taken in late, leaving nothing to dead-letter).
    const sent = await runLoad(kafka, scenario.ingress, [{ id: 'flood', perSecond: 60, seconds: 12 }]);
    const dlq = `${scenario.ingress}.dlq`;
    const [down, dead] = await waitFor(async () => {
      const d = (await consumeAll(kafka, scenario.downstream)).filter((m) => String(m.value).startsWith('flood:'));
      const x = await consumeAll(kafka, dlq);
      return d.length + x.length >= sent.length ? [d, x] : undefined;
    }, { timeoutMs: 90_000, message: 'every flood message downstream or dead-lettered' });
    const ids = [...down, ...dead].map((m) => String(m.value));
    expect(ids.sort()).toEqual([...sent].sort());
    expect(dead.length).toBeGreaterThan(0);
    expect(new Set(dead.map((m) => headerValues(m.headers, 'sluice-dead-letter-reason')[0]))).toEqual(new Set(['max-attempts']));
    expect(dead.every((m) => headerValues(m.headers, 'sluice-attempt')[0] === '2')).toBe(true);
    // Loosened from 44 (quota × 2 s + 10 %) to issue 9's bound, 1.15 × the rate + 1 in any second,
    // over these 2 s: a lane behind its slots (a retry read late) now catches up at up to 1.1 × for
    // as long as it takes (src/hold/release-lanes.ts, the second rule), no longer at 1.04 ×, so two
    // seconds of catch-up carry up to 2 × 23 = 46 (seen once in a CI rehearsal).
    expect(maxInWindow(appendTimes(down, 'flood'), 2000)).toBeLessThanOrEqual(Math.floor(1.15 * 40) + 1);
  });
});
