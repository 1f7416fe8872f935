/**
 * One `sluice run` process, one ingress partition, quota 20/s (queue 1m) for everybody, and
 * three producers at 0.5x, 2x and 10x their quota for 10 s (2x for 6 s); the half-rate one also forges
 * sluice-* headers. Judged by broker append time (LogAppendTime) on the downstream topic.
 */
import { headerValues, waitForMessages, ConsumedMessage, createKafka } from '../../helpers/kafka';
import {
  appendTimes, countIn, createScenario, duplicates, maxInWindow, missing, percentile, producerOf, runLoad, Scenario, seqOf, Sidecar,
  startSidecar, waitedMs, windowBound } from './sidecar-fixture';

const kafka = createKafka();
const QUOTA = 20;
const DOUBLE_SECONDS = 6;
let scenario: Scenario;
let sidecar: Sidecar;
let sent: string[];
let downstream: ConsumedMessage[];

const forged = { 'sluice-not-before': '0', 'sluice-reason': 'delayed', 'sluice-waited-ms': '424242', 'sluice-attempt': '7' };

beforeAll(async () => {
  scenario = await createScenario(kafka, { quotas: `default:\n  rate: ${QUOTA}/s\n  queue: 1m\n` });
  sidecar = startSidecar(scenario);
  await sidecar.joined();
  sent = await runLoad(kafka, scenario.ingress, [
    { id: 'half', perSecond: QUOTA / 2, seconds: 10, headers: forged },
    // 6 s at 2×: backlogged until 12 s, past the 8 s judged from 1 s on; at 10 s it took 20 s to drain.
    { id: 'double', perSecond: QUOTA * 2, seconds: DOUBLE_SECONDS },
    { id: 'tenfold', perSecond: QUOTA * 10, seconds: 10 },
  ]);
  const expected = new Set(sent.filter((v) => !v.startsWith('tenfold')));
  downstream = await waitForMessages(kafka, scenario.downstream, (all) => [...expected].every((v) => all.some((m) => String(m.value) === v)), { timeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  await sidecar?.stop();
});

describe('when producers offer 0.5x, 2x and 10x their quota', () => {
  it('forwards every message of the producers that never overflow, once each', () => {
    const clean = sent.filter((v) => !v.startsWith('tenfold'));
    expect(missing(clean, downstream)).toEqual([]);
    expect(duplicates(downstream)).toEqual([]);
  });

  it.each(['double', 'tenfold'])('holds %s to its quota within 2% while it is backlogged', (producer) => {
    const times = appendTimes(downstream, producer);
    const from = times[0] + 1000;
    const count = countIn(times, from, from + 8000);
    expect(Math.abs(count - QUOTA * 8)).toBeLessThanOrEqual(QUOTA * 8 * 0.02);
  });

  it.each(['half', 'double', 'tenfold'])('never forwards %s faster than quota × t + 1, plus the append jitter, in any window', (producer) => {
    const times = appendTimes(downstream, producer);
    expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
    expect(maxInWindow(times, 5000)).toBeLessThanOrEqual(windowBound(QUOTA, 5000));
  });

  it('forwards the under-quota producer at its offered rate, not slowed by the others on its partition', () => {
    const half = downstream.filter((m) => producerOf(m) === 'half');
    expect(half).toHaveLength(QUOTA / 2 * 10);
    expect(percentile(half.map(waitedMs), 99)).toBeLessThan(1000);
  });

  it('keeps the order of a producer that never overflows', () => {
    const seqs = downstream.filter((m) => producerOf(m) === 'double').sort((a, b) => Number(a.offset) - Number(b.offset)).map(seqOf);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });
});

describe('when a producer forges sluice-* headers', () => {
  it('drops them: its messages carry only the real sluice-waited-ms and keep their own headers', () => {
    for (const m of downstream.filter((x) => producerOf(x) === 'half')) {
      expect(headerValues(m.headers, 'producer-id')).toEqual(['half']);
      expect(Object.keys(m.headers).filter((k) => k.startsWith('sluice-'))).toEqual(['sluice-waited-ms']);
      expect(waitedMs(m)).toBeLessThan(424242);
    }
  });
});
