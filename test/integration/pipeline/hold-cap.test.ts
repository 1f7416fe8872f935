/**
 * The hold is capped: past SLUICE_HOLD_MAX_MESSAGES the ingress consumer pauses, leaves the
 * rest of its batch unresolved (kafkajs fetches it again after resume) and resumes when the
 * hold frees. Nothing is lost, skipped or sent twice, and the quota still holds.
 */
import { createKafka, waitForMessages } from '../../helpers/kafka';
import { appendTimes, createScenario, duplicates, maxInWindow, missing, runLoad, Sidecar, startSidecar, windowBound } from './sidecar-fixture';

const kafka = createKafka();
const QUOTA = 20;
let sidecar: Sidecar | undefined;

afterAll(async () => {
  await sidecar?.stop('SIGTERM');
});

describe('when more messages are due within hold.maxMs than the hold may keep', () => {
  it('pauses and resumes the consumer, forwarding every message once, at the quota', async () => {
    const scenario = await createScenario(kafka, {
      quotas: `default:\n  rate: ${QUOTA}/s\n  queue: 1m\n`,
      env: { SLUICE_HOLD_MAX_MESSAGES: '15', SLUICE_LOG_LEVEL: 'debug' },
    });
    sidecar = startSidecar(scenario);
    await sidecar.joined();
    // 2x the quota: within seconds more than 15 messages are due within hold.maxMs.
    const sent = await runLoad(kafka, scenario.ingress, [{ id: 'burst', perSecond: QUOTA * 2, seconds: 3 }]);
    const downstream = await waitForMessages(kafka, scenario.downstream, (all) => missing(sent, all).length === 0, { timeoutMs: 60_000 });
    expect(sent).toHaveLength(120);
    const said = (text: string): boolean => (sidecar as Sidecar).lines.some((l) => l.includes(text));
    expect([said('hold full: pausing'), said('hold freed: resuming')]).toEqual([true, true]);
    expect(duplicates(downstream)).toEqual([]);
    expect(maxInWindow(appendTimes(downstream, 'burst'), 1000)).toBeLessThanOrEqual(windowBound(QUOTA, 1000));
  }, 120_000);
});
