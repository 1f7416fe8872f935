/**
 * Redis stopped for 10 s under load, once per limiter.onStoreError policy (the three side by side), each with a dedicated
 * redis-server on a free port (killed, then started again on the same port). Nothing is lost
 * under any policy; each keeps its own bound on a producer offered 1.5x its quota:
 *   local   — one replica enforces the whole quota in memory: never above the quota;
 *   park    — messages wait parked `store-unavailable`: nothing new leaves while Redis is down;
 *   forward — fail open: messages leave as they come, above the quota, and are counted.
 */
import { freePort } from '../../../scripts/services/ports';
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { Owned, spawnOwned, stopOwned } from '../../helpers/processes';
import { waitFor } from '../../helpers/wait';
import { appendTimes, countIn, createScenario, maxInWindow, missing, runLoad, Sidecar, startSidecar, windowBound } from './sidecar-fixture';

const kafka = createKafka();
const QUOTA = 20;
const POLICIES = ['local', 'park', 'forward'] as const;
type Policy = (typeof POLICIES)[number];

const startRedis = async (port: number): Promise<Owned> => {
  const owned = spawnOwned('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'pipe' });
  let out = '';
  owned.process.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  try {
    await waitFor(() => out.includes('Ready to accept connections'), { timeoutMs: 10_000, message: `redis-server on ${port}` });
  } catch (error) {
    await stopOwned(owned, 'SIGKILL');
    throw error;
  }
  return owned;
};

const stopRedis = async (owned: Owned): Promise<void> => {
  await stopOwned(owned, 'SIGKILL');
};

interface Outage {
  sent: string[];
  downstream: Awaited<ReturnType<typeof waitForMessages>>;
  down: number;
  up: number;
  steady: number[];
}

/**
 * One policy's run: its own redis-server (stopped for 10 s under load, then started again on
 * the same port), its own topics and sidecar; both processes are stopped before it returns.
 */
const outage = async (policy: Policy): Promise<Outage> => {
  let redis: Owned | undefined;
  let sidecar: Sidecar | undefined;
  try {
    const port = await freePort();
    redis = await startRedis(port);
    const scenario = await createScenario(kafka, {
      quotas: `default:\n  rate: ${QUOTA}/s\n  queue: 1m\n`,
      env: { SLUICE_REDIS_URL: `redis://127.0.0.1:${port}`, SLUICE_REDIS_CLUSTER_NODES: '', SLUICE_ON_STORE_ERROR: policy },
    });
    sidecar = startSidecar(scenario);
    await sidecar.joined();
    const loading = runLoad(kafka, scenario.ingress, [
      { id: 'steady', perSecond: QUOTA * 1.5, seconds: 16 },
      { id: 'calm', perSecond: QUOTA / 2, seconds: 16 },
    ]);
    loading.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 3000));
    await stopRedis(redis);
    const down = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    redis = await startRedis(port);
    const up = Date.now();
    const sent = await loading;
    const downstream = await waitForMessages(kafka, scenario.downstream, (all) => missing(sent, all).length === 0, { timeoutMs: 120_000 });
    return { sent, downstream, down, up, steady: appendTimes(downstream, 'steady') };
  } finally {
    await sidecar?.stop('SIGKILL');
    if (redis) await stopRedis(redis);
  }
};

// The three policies share nothing (each its own redis-server, topics, sidecar and Redis key
// prefix): they run side by side, each judged by its own test below. A policy's run that
// failed fails its own test with its error.
const outcomes = new Map<Policy, Outage | Error>();
beforeAll(async () => {
  const settled = await Promise.allSettled(POLICIES.map(outage));
  POLICIES.forEach((policy, i) => {
    const s = settled[i];
    outcomes.set(policy, s.status === 'fulfilled' ? s.value : (s.reason as Error));
    if (s.status === 'rejected') return;
    const { steady, down, up } = s.value;
    process.stderr.write(`[redis-outage] ${policy}: busiest second of steady ${maxInWindow(steady, 1000)} (bound ${windowBound(QUOTA, 1000)}); `
      + `from 5.5 s into the outage to its end ${countIn(steady, down + 5500, up)}, from 6 s ${countIn(steady, down + 6000, up)} in ${((up - down - 6000) / 1000).toFixed(1)} s\n`);
  });
}, 240_000);

const outcomeOf = (policy: Policy): Outage => {
  const o = outcomes.get(policy);
  if (o === undefined) throw new Error(`no outcome for ${policy}`);
  if (o instanceof Error) throw o;
  return o;
};

describe('when Redis is down for 10 s and limiter.onStoreError is local', () => {
  it('loses nothing and never forwards above the quota', () => {
    const { sent, downstream, steady } = outcomeOf('local');
    expect(missing(sent, downstream)).toEqual([]);
    expect(maxInWindow(steady, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
  });
});

describe('when Redis is down for 10 s and limiter.onStoreError is park', () => {
  it('loses nothing, forwards nothing new while Redis is down, and never forwards above the quota', () => {
    const { sent, downstream, steady, down, up } = outcomeOf('park');
    expect(missing(sent, downstream)).toEqual([]);
    // What was held before the outage (hold.maxMs = 5 s) may still leave; nothing after that.
    expect(countIn(steady, down + 5500, up)).toBeLessThanOrEqual(2);
    expect(maxInWindow(steady, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
  });
});

describe('when Redis is down for 10 s and limiter.onStoreError is forward', () => {
  it('loses nothing and lets the producer through at its offered rate while Redis is down', () => {
    const { sent, downstream, steady, down, up } = outcomeOf('forward');
    expect(missing(sent, downstream)).toEqual([]);
    const seconds = (up - down - 6000) / 1000;
    expect(countIn(steady, down + 6000, up)).toBeGreaterThan(QUOTA * 1.2 * seconds);
  });
});
