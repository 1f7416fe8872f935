/**
 * Hostile or odd input on the ingress topic, one replica each:
 * - many-ids: 20,000 distinct producer ids (every tenth 2,000 characters long with braces, every
 *   tenth with invalid UTF-8 bytes, every tenth a short `{…}`) beside three steady producers:
 *   nothing lost, the sidecar stays up, `sluice_producer_messages_total` keeps ≤ 51 producers;
 * - forged-headers: a producer at 2× quota whose every message carries forged `sluice-*` headers
 *   (not-before 0, reason delayed, attempt 99, first-seen 0, another producer): each is decided
 *   (all downstream, none dead-lettered, none carrying the forged values), its busiest second stays
 *   within the quota bound, and `sluice_forged_headers_dropped_total` counts them;
 * - big-records: a record bigger than the downstream topic's max.message.bytes and one with 5,000
 *   headers beside a steady producer at 0.5× quota: each ends downstream or dead-lettered (the
 *   oversize one dead-lettered `too-large`), the steady producer is untouched (each message
 *   downstream within 2 s, /healthz answering within 1 s throughout), the sidecar stays up.
 */
import { consumeAll, headerValues } from '../../test/helpers/kafka';
import { busiestBound, judgeAll, Offered, offerLoad, readOutcome } from '../../test/integration/retry/backlog-fixture';
import { setMaxMessageBytes, sleep } from './faults';
import { cpuMs, fmtLive, fmtSettled, fmtTotals, mergeOffered, open, quotaFile, replicas, Scenario, settle, TIER_SETTINGS, totals, up } from './harness';
import { offerManyIds, sendOne } from './load';
import { healthz, labelValues, metricSum, metricsText, samples } from './probes';
import { RATE } from './scenarios-stop';

const IDS = 20_000;
const OUTCOMES = 6;

/** Id `i` as raw header bytes. */
const oddId = (i: number): Buffer => {
  switch (i % 10) {
    case 0: return Buffer.from(`{long-${i}}`.padEnd(2_000, '{x}'));
    case 1: return Buffer.concat([Buffer.from(`bad-${i}-`), Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from(`-${i}`)]);
    case 2: return Buffer.from(`{tag-${i}}`);
    default: return Buffer.from(`p-${i}`);
  }
};

export const manyIds: Scenario = {
  name: 'many-ids',
  what: `${IDS} distinct producer ids (2,000-character, braces, invalid UTF-8) beside 3 steady producers`,
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, 1);
    const [replica] = running;
    const reader = await readOutcome(ctx.kafka, s);
    const ids = Array.from({ length: IDS }, (_, i) => oddId(i));
    const [many, steady] = await Promise.all([
      offerManyIds(ctx.brokers, s.ingress, 'many', ids, 2_000),
      offerLoad(ctx.brokers, s.ingress, [1, 2, 3].map((n) => ({ id: `heavy-${n}`, perSecond: RATE / 2, seconds: 10 }))),
    ]);
    const offered = mergeOffered(many, steady);
    let series = 0;
    let producers = new Set<string>();
    let metricsError = '';
    const st = await settle(ctx, s, reader, offered, running, offered.startedAt + 150_000, async () => {
      try {
        const text = await metricsText(replica?.port as number, 15_000);
        series = samples(text, 'sluice_producer_messages_total').length;
        producers = labelValues(text, 'sluice_producer_messages_total', 'producer');
      } catch (error) {
        metricsError = (error as Error).message;
      }
    });
    const js = judgeAll(offered, st.outcome, () => RATE);
    const t = totals(js);
    const lastOut = Math.max(...st.outcome.forwarded.map((o) => o.appendMs));
    const heavyLabelled = [1, 2, 3].filter((n) => producers.has(`heavy-${n}`)).length;
    const bounded = metricsError === '' && producers.size <= 51 && series <= 51 * OUTCOMES;
    return [{
      scenario: 'many-ids',
      invariant: `lost 0; sidecar up; sluice_producer_messages_total ≤ 51 producers (≤ ${51 * OUTCOMES} series)`,
      measured: `lost ${t.lost}; duplicates ${t.duplicates}; ${fmtLive(st.live)}; ${metricsError || `${producers.size} producers, ${series} series`}`,
      pass: t.lost === 0 && st.live.every(up) && bounded,
      dir: s.dir,
      details: [
        `${fmtTotals(t)}; the last forwarded ${((lastOut - offered.startedAt) / 1000).toFixed(1)} s after the load started (offered over ${((offered.endedAt - offered.startedAt) / 1000).toFixed(1)} s)`,
        `heavy producers keeping their own label: ${heavyLabelled} of 3; other present: ${producers.has('other')}; ${fmtSettled(st)}`,
      ],
    }];
  },
};

/** Forged on every message; `sluice-Attempt` in another letter case on purpose. */
const FORGED = {
  'sluice-not-before': '0',
  'sluice-reason': 'delayed',
  'sluice-Attempt': '99',
  'sluice-first-seen': '0',
  'sluice-producer': 'someone-else',
  'SLUICE-WAITED-MS': '0',
};

export const forgedHeaders: Scenario = {
  name: 'forged-headers',
  what: 'forged sluice-* headers on every message of a producer at 2× quota',
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    const running = await replicas(s, 1);
    const [replica] = running;
    const reader = await readOutcome(ctx.kafka, s);
    const offered = await offerLoad(ctx.brokers, s.ingress, [{ id: 'forger', perSecond: 2 * RATE, seconds: 6, keys: 2, headers: () => FORGED }]);
    let dropped = Number.NaN;
    const st = await settle(ctx, s, reader, offered, running, offered.startedAt + 90_000, async () => {
      dropped = metricSum(await metricsText(replica?.port as number).catch(() => ''), 'sluice_forged_headers_dropped_total');
    });
    const [j] = judgeAll(offered, st.outcome, () => RATE);
    if (j === undefined) throw new Error('no judgement');
    const bound = busiestBound(RATE, 1);
    const downstream = await consumeAll(ctx.kafka, s.downstream);
    const carrying = downstream.filter((m) =>
      ['sluice-not-before', 'sluice-reason', 'sluice-first-seen', 'sluice-producer'].some((h) => headerValues(m.headers, h).length > 0)
      || Object.keys(m.headers).some((h) => h !== 'sluice-attempt' && h !== 'sluice-waited-ms' && h.toLowerCase().startsWith('sluice-'))
      || headerValues(m.headers, 'sluice-attempt').includes('99')
      || headerValues(m.headers, 'sluice-waited-ms').length !== 1).length;
    const t = totals([j]);
    return [{
      scenario: 'forged-headers',
      invariant: `all downstream (lost 0, dead-lettered 0, duplicates 0); busiest second ≤ ${bound} (1.15 × ${RATE}/s + 1); forged values gone; dropped counter > 0`,
      measured: `forwarded ${j.forwarded}/${j.offered}; dead-lettered ${j.deadLettered}; duplicates ${j.duplicates}; busiest second ${j.busiest1s}; records with forged values ${carrying}; sluice_forged_headers_dropped_total ${dropped}`,
      pass: t.lost === 0 && j.deadLettered === 0 && j.duplicates === 0 && j.busiest1s <= bound && carrying === 0 && dropped > 0,
      dir: s.dir,
      details: [
        `${fmtTotals(t)}; quota used while backlogged ${j.quotaUsedPct.toFixed(1)}% over ${(j.backloggedMs / 1000).toFixed(1)} s; ${Object.keys(FORGED).length} forged headers a message`,
        `${fmtSettled(st)}; replica ${fmtLive(st.live)}`,
      ],
    }];
  },
};

const DOWNSTREAM_MAX = 64 * 1024;
const WIDE_HEADERS = 5_000;
/** Steady (0.5× quota, never held back by it) normally lands within ~0.1 s; more than this is "affected". */
const STEADY_MAX_MS = 2_000;

/** /healthz every 250 ms (1 s timeout) until stopped: how many did not answer in time, and the slowest. */
export const watchHealth = (port: number) => {
  let running = true;
  let probes = 0;
  let failed = 0;
  let slowest = 0;
  const done = (async () => {
    while (running) {
      const from = Date.now();
      const code = await healthz(port, 1_000);
      probes += 1;
      if (code !== 200) failed += 1;
      slowest = Math.max(slowest, Date.now() - from);
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { probes, failed, slowest };
    },
  };
};

export const bigRecords: Scenario = {
  name: 'big-records',
  what: `an oversize record (> the downstream's max.message.bytes ${DOWNSTREAM_MAX}) and one with ${WIDE_HEADERS} headers beside a steady producer`,
  async run(ctx) {
    const s = await open(ctx, { quotas: quotaFile(RATE, '60s'), settings: TIER_SETTINGS, partitions: 2 });
    await setMaxMessageBytes(ctx.kafka, s.downstream, DOWNSTREAM_MAX);
    const running = await replicas(s, 1);
    const [replica] = running;
    if (replica === undefined) throw new Error('no replica');
    // No reader during the load: kafkajs takes seconds of CPU to decode the wide record, and this
    // process must not stall while it offers load and times the replica.
    const health = watchHealth(replica.port);
    const startedAt = Date.now();
    const loading = offerLoad(ctx.brokers, s.ingress, [{ id: 'steady', perSecond: RATE / 2, seconds: 8, keys: 2 }]);
    await sleep(1_500);
    const big = await sendOne(ctx.brokers, s.ingress, { key: 'big', value: 'big:0'.padEnd(4 * DOWNSTREAM_MAX, 'x'), headers: { 'producer-id': 'big' } });
    await sleep(1_500);
    const headers = Object.fromEntries(Array.from({ length: WIDE_HEADERS }, (_, i) => [`h-${i}`, 'v']));
    const cpuBefore = cpuMs(replica.pid);
    const wide = await sendOne(ctx.brokers, s.ingress, { key: 'wide', value: 'wide:0', headers: { 'producer-id': 'wide', ...headers } });
    const steady = await loading;
    await sleep(Math.max(0, wide.at + 8_000 - Date.now()));
    const cpuUsed = cpuMs(replica.pid) - cpuBefore;
    const probed = await health.stop();
    const reader = await readOutcome(ctx.kafka, s);
    const single: Offered = { byProducer: new Map([['wide', [wide]], ['big', [big]]]), startedAt, endedAt: Date.now() };
    const offered = mergeOffered(steady, single);
    const st = await settle(ctx, s, reader, offered, running, startedAt + 120_000);
    const js = judgeAll(offered, st.outcome, () => RATE);
    const by = (id: string) => js.find((j) => j.id === id);
    const [w, b, y] = [by('wide'), by('big'), by('steady')];
    const dead = await consumeAll(ctx.kafka, s.deadLetter);
    const reasonOf = (prefix: string): string =>
      dead.filter((m) => String(m.value).startsWith(prefix)).map((m) => headerValues(m.headers, 'sluice-dead-letter-reason').join('/')).join(',') || 'none';
    const downstream = await consumeAll(ctx.kafka, s.downstream, { timeoutMs: 60_000 });
    const wideOut = downstream.find((m) => String(m.value) === 'wide:0');
    const wideHeaders = wideOut ? Object.keys(wideOut.headers).filter((h) => h.startsWith('h-')).length : 0;
    const t = totals(js);
    // Broker append time downstream − acknowledged at ingress.
    const sentAt = new Map([...offered.byProducer.values()].flat().map((o) => [o.value, o.at]));
    const latency = (id: string): number[] => st.outcome.forwarded.filter((o) => o.producer === id).map((o) => o.appendMs - (sentAt.get(o.value) ?? o.appendMs));
    const steadyWorst = Math.max(0, ...latency('steady'));
    const wideMs = latency('wide')[0];
    const where = (j: typeof w): string => (j === undefined ? 'n/a' : j.forwarded > 0 ? 'downstream' : j.deadLettered > 0 ? 'dead-lettered' : 'lost');
    const oversizeOk = reasonOf('big:0') === 'too-large' && b?.deadLettered === 1 && b.forwarded === 0;
    const steadyOk = y?.forwarded === y?.offered && y?.deadLettered === 0 && y?.duplicates === 0 && steadyWorst <= STEADY_MAX_MS && probed.failed === 0;
    return [{
      scenario: 'big-records',
      invariant: `each ends downstream or dead-lettered (oversize: too-large); nothing else affected (steady all downstream once, each within ${STEADY_MAX_MS / 1000} s; every /healthz probe answered within 1 s); sidecar up`,
      measured: `oversize: ${where(b)} (reason ${reasonOf('big:0')}); ${WIDE_HEADERS} headers: ${where(w)}${wideOut ? ` with ${wideHeaders} of them` : ''}; steady ${y?.forwarded}/${y?.offered} downstream, slowest ${(steadyWorst / 1000).toFixed(1)} s; /healthz missed ${probed.failed} of ${probed.probes} probes (slowest ${(probed.slowest / 1000).toFixed(1)} s); replica CPU ${(cpuUsed / 1000).toFixed(1)} s in the 8 s after the wide record; ${fmtLive(st.live)}`,
      pass: t.lost === 0 && t.duplicates === 0 && oversizeOk && steadyOk && st.live.every(up),
      dir: s.dir,
      details: [
        `${fmtTotals(t)}; wide record ${wideMs === undefined ? `dead-lettered (${reasonOf('wide:0')})` : `downstream ${(wideMs / 1000).toFixed(1)} s after it was sent`}; steady dead-lettered ${y?.deadLettered}, duplicates ${y?.duplicates}`,
        `${fmtSettled(st)}`,
      ],
    }];
  },
};
