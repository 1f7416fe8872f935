/**
 * The one quantity grammar (src/units), run against both of its uses: a setting read by
 * loadConfig and a field of the quota file read by parseQuotas. Each row is accepted by both
 * with the same value, or refused by both for the same reason, quoted in full in each message.
 */
import { loadConfig } from '../../../src/config/load-config';
import { SluiceError } from '../../../src/errors';
import { parseQuotas } from '../../../src/rules/parse-quotas';

const topics = { SLUICE_INGRESS_TOPIC: 'orders', SLUICE_DOWNSTREAM_TOPIC: 'orders.out' };

const messageOf = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(SluiceError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

const DURATION_REFUSALS: Array<[string, string]> = [
  ['5 s', 'no space between the number and its unit'],
  ['1M', 'unknown unit "M"; the units are ms, s, m, h, d, case-sensitive'],
  ['1w', 'unknown unit "w"; the units are ms, s, m, h, d, case-sensitive'],
  ['5sec', 'unknown unit "sec"; the units are ms, s, m, h, d, case-sensitive'],
  ['-1s', 'not a number followed by a unit'],
  ['+1s', 'not a number followed by a unit'],
  ['.5s', 'not a number followed by a unit'],
  ['1e3ms', 'not a number followed by a unit'],
  ['forever', 'not a number followed by a unit'],
  ['0.5ms', 'not a whole number of milliseconds'],
  ['1.0001s', 'not a whole number of milliseconds'],
  ['99999999999d', 'too large'],
];

const SIZE_REFUSALS: Array<[string, string]> = [
  ['64 MiB', 'no space between the number and its unit'],
  ['64mib', 'unknown unit "mib"; the units are B, KB, KiB, MB, MiB, GB, GiB, case-sensitive'],
  ['500kB', 'unknown unit "kB"; the units are B, KB, KiB, MB, MiB, GB, GiB, case-sensitive'],
  ['1TB', 'unknown unit "TB"; the units are B, KB, KiB, MB, MiB, GB, GiB, case-sensitive'],
  ['-1KiB', 'not a number followed by a unit'],
  ['0.5B', 'not a whole number of bytes'],
  ['0.1KiB', 'not a whole number of bytes'],
];

/** The two uses of a duration: the setting retry.maxAge and the quota field queue. */
const duration = {
  setting: (text: string) => loadConfig({ env: { ...topics, SLUICE_RETRY_MAX_AGE: text } }).retry.maxAgeMs,
  settingRefusal: (text: string, reason: string) =>
    `retry.maxAge = ${JSON.stringify(text)} (from SLUICE_RETRY_MAX_AGE): expected a duration > 0 such as 500ms, 5s, 1m, 1h or 1d (${reason})`,
  quota: (text: string) => {
    const rule = parseQuotas(`default: { rate: 1/s, queue: ${JSON.stringify(text)} }\n`, 'q.yaml').default;
    return rule.unlimited ? undefined : rule.limit?.capacityMs;
  },
  quotaRefusal: (text: string, reason: string) =>
    `q.yaml:1: default: queue: expected a duration such as "500ms", "10s", "1m", "1h" or "1d", or a whole number of messages (0 or more), got ${JSON.stringify(text)} (${reason})`,
};

/** The two uses of a size: the setting hold.maxBytes and the quota field bytes (per second). */
const size = {
  setting: (text: string) => loadConfig({ env: { ...topics, SLUICE_HOLD_MAX_BYTES: text } }).hold.maxBytes,
  settingRefusal: (text: string, reason: string) =>
    `hold.maxBytes = ${JSON.stringify(text)} (from SLUICE_HOLD_MAX_BYTES): expected a size > 0 in bytes, or with a unit such as 512KiB, 64MiB or 1GB (${reason})`,
  quota: (text: string) => {
    const rule = parseQuotas(`default: { rate: 1/s, bytes: ${JSON.stringify(`${text}/s`)} }\n`, 'q.yaml').default;
    return rule.unlimited ? undefined : Math.round(1000 / (rule.limit?.byteIntervalMs as number));
  },
  quotaRefusal: (text: string, reason: string) =>
    `q.yaml:1: default: bytes: expected a byte rate such as "512KiB/s" (units B, KB, KiB, MB, MiB, GB, GiB; per s, m, h, d), got ${JSON.stringify(`${text}/s`)} (${reason})`,
};

describe('the quantity grammar, in settings and in the quota file', () => {
  describe('when a duration is written', () => {
    it.each([
      ['500ms', 500],
      ['5s', 5000],
      ['1.5m', 90_000],
      ['1h', 3_600_000],
      ['1d', 86_400_000],
      [' 10s ', 10_000],
    ])('reads %j as %d ms in both', (text, ms) => {
      expect(duration.setting(text)).toBe(ms);
      expect(duration.quota(text)).toBe(ms);
    });

    it.each(DURATION_REFUSALS)('refuses %j in both: %s', (text, reason) => {
      expect(messageOf(() => duration.setting(text))).toBe(duration.settingRefusal(text, reason));
      expect(messageOf(() => duration.quota(text))).toBe(duration.quotaRefusal(text, reason));
    });
  });

  describe('when a size is written', () => {
    it.each([
      ['100B', 100],
      ['500KB', 500_000],
      ['512KiB', 524_288],
      ['1.5KiB', 1536],
      ['64MiB', 67_108_864],
      ['1GB', 1_000_000_000],
      ['2GiB', 2_147_483_648],
    ])('reads %j as %d bytes in both', (text, bytes) => {
      expect(size.setting(text)).toBe(bytes);
      expect(size.quota(text)).toBe(bytes);
    });

    it.each(SIZE_REFUSALS)('refuses %j in both: %s', (text, reason) => {
      expect(messageOf(() => size.setting(text))).toBe(size.settingRefusal(text, reason));
      expect(messageOf(() => size.quota(text))).toBe(size.quotaRefusal(text, reason));
    });
  });

  describe('when a plain number is written', () => {
    it('is milliseconds in a …Ms setting, bytes in hold.maxBytes, messages in queue', () => {
      expect(loadConfig({ env: { ...topics, SLUICE_HOLD_MAX_MS: '7000' } }).hold.maxMs).toBe(7000);
      expect(size.setting('1024')).toBe(1024);
      const rule = parseQuotas('default: { rate: 10/s, queue: 30 }\n', 'q.yaml').default;
      expect(rule.unlimited ? undefined : rule.limit?.capacityMs).toBe(3000);
    });

    it('needs a unit anywhere else', () => {
      const reason = 'a number needs a unit here';
      expect(messageOf(() => duration.setting('1500'))).toBe(duration.settingRefusal('1500', reason));
      expect(messageOf(() => size.quota('1024'))).toBe(size.quotaRefusal('1024', reason));
      expect(messageOf(() => parseQuotas('default: { rate: 1/1500 }\n', 'q.yaml'))).toBe(
        `q.yaml:1: default: rate: expected a rate N/s, N/m, N/h, N/d or N/<duration> such as "20/s", "1000/h" or "5/10s", got "1/1500" (${reason})`,
      );
    });
  });
});
