import { loadConfig } from '../../../src/config/load-config';
import { SluiceError } from '../../../src/errors';
import { findResolution, formatResolutions, parseResolutions } from '../../../src/config/usage-resolutions';

const topics = { SLUICE_INGRESS_TOPIC: 'orders', SLUICE_DOWNSTREAM_TOPIC: 'orders.out' };

describe('usage.resolutions', () => {
  describe('when the default is parsed', () => {
    const resolutions = parseResolutions('1s:10m,1m:48h,1h:30d')!;

    it('gives each bucket size, its retention and the number of buckets kept, finest first', () => {
      expect(resolutions).toEqual([
        { label: '1s', bucketMs: 1000, retentionMs: 600_000, buckets: 600 },
        { label: '1m', bucketMs: 60_000, retentionMs: 172_800_000, buckets: 2880 },
        { label: '1h', bucketMs: 3_600_000, retentionMs: 2_592_000_000, buckets: 720 },
      ]);
      expect(formatResolutions(resolutions)).toBe('1s:10m,1m:2d,1h:30d');
    });

    it('finds a resolution however its size is spelled', () => {
      expect(findResolution(resolutions, '1m')?.label).toBe('1m');
      expect(findResolution(resolutions, '60s')?.label).toBe('1m');
      expect(findResolution(resolutions, '5m')).toBeUndefined();
      expect(findResolution(resolutions, 'soon')).toBeUndefined();
    });
  });

  it('sorts by bucket size and accepts spaces', () => {
    expect(parseResolutions(' 1h:1d , 5s : 1m ')!.map((r) => r.label)).toEqual(['5s', '1h']);
  });

  it('reads an empty setting as no history', () => {
    expect(parseResolutions('')).toEqual([]);
  });

  it.each([
    ['1s', 'no retention'],
    ['1s:10m:1h', 'three parts'],
    ['500ms:1m', 'a bucket under one second'],
    ['1500ms:1m', 'a bucket that is not whole seconds'],
    ['1m:30s', 'a retention shorter than the bucket'],
    ['1m:90s', 'a retention that is not a multiple of the bucket'],
    ['1s:2d', 'more than 100000 buckets'],
    ['1m:1h,60s:2h', 'the same bucket size twice'],
    ['soon:1h', 'a bucket that does not parse'],
  ])('refuses %s (%s)', (text) => {
    expect(parseResolutions(text)).toBeUndefined();
  });

  describe('as a setting', () => {
    it('defaults to 1s:10m,1m:48h,1h:30d', () => {
      expect(loadConfig({ env: topics }).usage.resolutions.map((r) => r.label)).toEqual(['1s', '1m', '1h']);
    });

    it('is set by SLUICE_USAGE_RESOLUTIONS', () => {
      expect(loadConfig({ env: { ...topics, SLUICE_USAGE_RESOLUTIONS: '10s:1h' } }).usage.resolutions).toEqual([
        { label: '10s', bucketMs: 10_000, retentionMs: 3_600_000, buckets: 360 },
      ]);
    });

    it('stops start-up on a bad value, naming the key, the value and what was expected', () => {
      let error: unknown;
      try {
        loadConfig({ env: { ...topics, SLUICE_USAGE_RESOLUTIONS: '1m:30s' } });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SluiceError);
      expect((error as SluiceError).message).toMatch(/^usage\.resolutions = "1m:30s" \(from SLUICE_USAGE_RESOLUTIONS\): expected a comma-separated list of bucket:retention/);
    });
  });
});
