/**
 * Redis stopped for 10 s under load, once per limiter.onStoreError policy, with a dedicated
 * redis-server on a free port (killed, then started again on the same port). Nothing is lost
 * under any policy; each keeps its own bound on a producer offered 1.5x its quota:
 *   local   — one replica enforces the whole quota in memory: never above the quota;
 *   park    — messages wait parked `store-unavailable`: nothing new leaves while Redis is down;
 *   forward — fail open: messages leave as they come, above the quota, and are counted.
 */
import { createServer } from 'node:net';
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { Owned, spawnOwned, stopOwned } from '../../helpers/processes';
import { waitFor } from '../../helpers/wait';
import { appendTimes, countIn, createScenario, maxInWindow, missing, runLoad, Sidecar, startSidecar, windowBound } from './sidecar-fixture';

const kafka = createKafka();
const QUOTA = 20;
let redis: Owned | undefined; // owned: killed with its group when its test ends, also on failure or timeout
let sidecar: Sidecar | undefined;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

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

afterEach(async () => {
  await sidecar?.stop('SIGKILL');
  if (redis) await stopRedis(redis);
});

const outage = async (policy: string) => {
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
  await new Promise((r) => setTimeout(r, 3000));
  await stopRedis(redis);
  const down = Date.now();
  await new Promise((r) => setTimeout(r, 10_000));
  redis = await startRedis(port);
  const up = Date.now();
  const sent = await loading;
  const downstream = await waitForMessages(kafka, scenario.downstream, (all) => missing(sent, all).length === 0, { timeoutMs: 120_000 });
  return { sent, downstream, down, up, steady: appendTimes(downstream, 'steady') };
};

describe('when Redis is down for 10 s and limiter.onStoreError is local', () => {
  it('loses nothing and never forwards above the quota', async () => {
    const { sent, downstream, steady } = await outage('local');
    expect(missing(sent, downstream)).toEqual([]);
    expect(maxInWindow(steady, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
  }, 240_000);
});

describe('when Redis is down for 10 s and limiter.onStoreError is park', () => {
  it('loses nothing, forwards nothing new while Redis is down, and never forwards above the quota', async () => {
    const { sent, downstream, steady, down, up } = await outage('park');
    expect(missing(sent, downstream)).toEqual([]);
    // What was held before the outage (hold.maxMs = 5 s) may still leave; nothing after that.
    expect(countIn(steady, down + 5500, up)).toBeLessThanOrEqual(2);
    expect(maxInWindow(steady, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
  }, 240_000);
});

describe('when Redis is down for 10 s and limiter.onStoreError is forward', () => {
  it('loses nothing and lets the producer through at its offered rate while Redis is down', async () => {
    const { sent, downstream, steady, down, up } = await outage('forward');
    expect(missing(sent, downstream)).toEqual([]);
    const seconds = (up - down - 6000) / 1000;
    expect(countIn(steady, down + 6000, up)).toBeGreaterThan(QUOTA * 1.2 * seconds);
  }, 240_000);
});
