/**
 * Black box: messages of several producers through two `sluice run` replicas sharing one Redis.
 * The usage history's forwarded total per producer — from GET /v1/producers/{id}/usage at each
 * resolution and from `sluice usage --json` — equals what reached the downstream topic (by ids).
 * Needs the run wiring to feed the usage recorder (withUsage around the flow's Metrics).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { waitFor } from '../../helpers/wait';
import { createScenario, missing, producerOf, runLoad, type Sidecar, startSidecar } from '../pipeline/sidecar-fixture';

const ROOT = resolve(__dirname, '../../..');
const kafka = createKafka();
const running: Sidecar[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop('SIGTERM')));
});

/** The admin listener's port (/v1/*), from the start-up line. */
const portOf = (sidecar: Sidecar): number => {
  const line = sidecar.lines.find((l) => l.includes('"msg":"HTTP server listening"'));
  return line ? (JSON.parse(line) as { admin: { port: number } }).admin.port : 0;
};

interface Answer {
  totals: { forwarded: number; offered: number };
  rows: unknown[];
}

const usageOverHttp = async (sidecar: Sidecar, producer: string, resolution: string, since: string): Promise<Answer> => {
  const response = await fetch(`http://127.0.0.1:${portOf(sidecar)}/v1/producers/${encodeURIComponent(producer)}/usage?resolution=${resolution}&since=${since}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
};

const usageOverCli = async (env: Record<string, string>, producer: string): Promise<Answer> => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'usage', producer, '--resolution', '1s', '--since', '10m', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env, SLUICE_LOG_LEVEL: 'error' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Answer;
};

describe('when two replicas forward several producers', () => {
  it("finds each producer's forwarded total in the usage history equal to what reached downstream, at every resolution and through sluice usage", async () => {
    const scenario = await createScenario(kafka, { partitions: 2, quotas: 'default:\n  rate: 1000/s\n  queue: 1m\n' });
    const first = startSidecar(scenario);
    running.push(first);
    await first.joined();
    const second = startSidecar(scenario);
    running.push(second);
    await second.joined();
    const loads = [
      { id: 'alpha', perSecond: 40, seconds: 5 },
      { id: 'beta/eu', perSecond: 20, seconds: 5 },
      { id: 'gamma', perSecond: 10, seconds: 5 },
    ];
    const sent = await runLoad(kafka, scenario.ingress, loads, (_id, seq) => `key-${seq}`);
    const downstream = await waitForMessages(kafka, scenario.downstream, sent.length, { timeoutMs: 60_000 });
    expect(missing(sent, downstream)).toEqual([]);
    const delivered = (id: string) => new Set(downstream.filter((m) => producerOf(m) === id).map((m) => String(m.value))).size;

    for (const { id } of loads) {
      // the replicas flush once a second
      await waitFor(async () => (await usageOverHttp(first, id, '1s', '10m')).totals.forwarded >= delivered(id), {
        timeoutMs: 15_000,
        message: `the usage history of ${id} to reach ${delivered(id)} forwarded`,
      });
      for (const [resolution, since] of [['1s', '10m'], ['1m', '1h'], ['1h', '2h']]) {
        expect({ id, resolution, forwarded: (await usageOverHttp(second, id, resolution, since)).totals.forwarded }).toEqual({ id, resolution, forwarded: delivered(id) });
      }
      expect((await usageOverCli(scenario.env, id)).totals.forwarded).toBe(delivered(id));
    }
  }, 240_000);
});
