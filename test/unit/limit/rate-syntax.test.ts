import { parseByteRate, parseDuration, parseQueue, parseRate, parseWindow } from '../../../src/limit/rate-syntax';

describe('rate syntax', () => {
  describe('when a duration is written', () => {
    it.each([
      ['500ms', 500],
      ['10s', 10_000],
      ['1m', 60_000],
      ['1.5h', 5_400_000],
      ['1d', 86_400_000],
      ['0s', 0],
    ])('reads %s as %d ms', (text, ms) => {
      expect(parseDuration(text, 'queue')).toBe(ms);
    });

    it.each(['1', '1 min', '-1s', 'm', '', '1M'])('refuses %j naming the field and what was expected', (text) => {
      expect(() => parseDuration(text, 'queue')).toThrow(/^queue: expected a duration such as "500ms".*got/);
    });
  });

  describe('when a message rate is written', () => {
    it.each([
      ['20/s', 20, 1000, 50],
      ['1000/h', 1000, 3_600_000, 3600],
      ['3/s', 3, 1000, 1000 / 3],
      ['5/10s', 5, 10_000, 2000],
      ['1/d', 1, 86_400_000, 86_400_000],
      ['6/m', 6, 60_000, 10_000],
    ])('reads %s as %d per %d ms (T = %d ms)', (text, count, perMs, intervalMs) => {
      expect(parseRate(text, 'rate')).toEqual({ count, perMs, intervalMs });
    });

    it.each(['20', '20/x', '0/s', '20/0s', 'fast', 20, '6 / m', '20/s/s', '20/1.5ms'])('refuses %j', (value) => {
      expect(() => parseRate(value, 'rate')).toThrow(/^rate: expected a rate N\/s, N\/m, N\/h, N\/d/);
    });
  });

  describe('when a byte rate is written', () => {
    it('reads binary and decimal units', () => {
      expect(parseByteRate('512KiB/s', 'bytes').intervalMs).toBeCloseTo(1000 / (512 * 1024), 12);
      expect(parseByteRate('1MB/s', 'bytes').count).toBe(1_000_000);
      expect(parseByteRate('2GiB/h', 'bytes').count).toBe(2 * 1024 ** 3);
      expect(parseByteRate('100B/s', 'bytes').intervalMs).toBe(10);
    });

    it('refuses an unknown unit naming the accepted ones', () => {
      expect(() => parseByteRate('5kb/s', 'bytes')).toThrow(/bytes: expected a byte rate .*KiB.*\(unknown unit "kb"; the units are B, KB, KiB, MB, MiB, GB, GiB, case-sensitive\)$/);
    });

    it('refuses a plain number of bytes and a space before the unit', () => {
      expect(() => parseByteRate('512/s', 'bytes')).toThrow(/got "512\/s" \(a number needs a unit here\)$/);
      expect(() => parseByteRate('512 KiB/s', 'bytes')).toThrow(/got "512 KiB\/s" \(no space between the number and its unit\)$/);
      expect(() => parseByteRate('512KiB / s', 'bytes')).toThrow(/got "512KiB \/ s" \(no spaces inside a rate\)$/);
    });
  });

  describe('when a queue is written', () => {
    it('reads a duration or a count of messages', () => {
      expect(parseQueue('1m', 'queue')).toEqual({ kind: 'duration', ms: 60_000 });
      expect(parseQueue(30, 'queue')).toEqual({ kind: 'count', messages: 30 });
      expect(parseQueue('30', 'queue')).toEqual({ kind: 'count', messages: 30 });
      expect(parseQueue(0, 'queue')).toEqual({ kind: 'count', messages: 0 });
    });

    it.each([-1, 1.5, 'soon'])('refuses %j', (value) => {
      expect(() => parseQueue(value, 'queue')).toThrow(/^queue: expected a duration .* or a whole number of messages/);
    });
  });

  describe('when a window is written', () => {
    it('reads the short form as a sliding window labelled as written', () => {
      expect(parseWindow('1000/h', 'limits[0]')).toEqual({ max: 1000, windowMs: 3_600_000, kind: 'sliding', label: '1000/h' });
      expect(parseWindow('20000/1d fixed', 'limits[0]')).toMatchObject({ max: 20000, windowMs: 86_400_000, kind: 'fixed' });
    });

    it('reads the object form with a duration or a bare unit', () => {
      expect(parseWindow({ max: 20000, per: '1d', window: 'fixed' }, 'limits[1]')).toEqual({
        max: 20000,
        windowMs: 86_400_000,
        kind: 'fixed',
        label: '20000/1d fixed',
      });
      expect(parseWindow({ max: 5, per: 'm' }, 'limits[1]')).toMatchObject({ windowMs: 60_000, kind: 'sliding', label: '5/m' });
    });

    it('names the key inside the object that is wrong', () => {
      expect(() => parseWindow({ max: 5, per: '1x' }, 'limits[1]')).toThrow(/^limits\[1\]\.per: expected a duration/);
      expect(() => parseWindow({ max: 0, per: '1h' }, 'limits[1]')).toThrow(/^limits\[1\]\.max: expected a whole number/);
      expect(() => parseWindow({ max: 5, per: '1h', window: 'rolling' }, 'limits[1]')).toThrow(/window: expected sliding, fixed or log/);
      expect(() => parseWindow({ max: 5, per: '1h', size: 3 }, 'limits[1]')).toThrow(/limits\[1\]\.size: expected no such key/);
    });

    it('refuses a fractional maximum', () => {
      expect(() => parseWindow('2.5/s', 'limits[0]')).toThrow(/whole number/);
    });
  });
});
