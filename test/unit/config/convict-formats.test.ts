import { convictSettings, validateSettings } from '../../../src/config/convict-formats';

describe("convict's validation of the settings", () => {
  describe('when a value does not fit its format', () => {
    it('is refused by convict, tagged with the key and the value, with the expectation and the reason', () => {
      const settings = convictSettings({ SLUICE_MODE: 'loud', SLUICE_REDIS_TIMEOUT_MS: '5 s' });
      const { refused, other } = validateSettings(settings);
      expect(other).toEqual([]);
      expect(refused.map((r) => [r.fullName, r.value, r.format.expected, r.reason]).sort()).toEqual([
        ['mode', 'loud', 'one of enforce, shadow', undefined],
        ['redis.timeoutMs', '5 s', 'a duration > 0 such as 500ms, 5s, 1m, 1h or 1d, or a whole number of milliseconds', 'no space between the number and its unit'],
      ].sort());
    });
  });

  describe('when a key the schema does not declare reaches convict', () => {
    it('is refused (strict)', () => {
      const settings = convictSettings({});
      settings.load({ nope: 1 });
      expect(validateSettings(settings)).toEqual({ refused: [], other: ["configuration param 'nope' not declared in the schema"] });
    });
  });

  describe('when every value fits', () => {
    it('refuses nothing', () => {
      expect(validateSettings(convictSettings({}))).toEqual({ refused: [], other: [] });
    });
  });
});
