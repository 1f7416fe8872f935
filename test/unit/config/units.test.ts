import { formatDuration, parseByteSize, parseDuration } from '../../../src/config/units';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['5s', 5000],
    ['1.5m', 90_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1500', 1500],
    [42, 42],
  ])('reads %p as %p ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(['', '5 sec', '5 s', '-1s', '1w', '1M', 'abc', '1.0001ms', '0.5ms'])('refuses %p', (input) => {
    expect(parseDuration(input)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  it.each([
    [5000, '5s'],
    [60_000, '1m'],
    [600_000, '10m'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [90_000, '90s'],
    [1500, '1500ms'],
    [500, '500ms'],
  ])('writes %p ms as %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('parseByteSize', () => {
  it.each([
    ['64MiB', 67_108_864],
    ['500KB', 500_000],
    ['1GB', 1_000_000_000],
    ['1024', 1024],
  ])('reads %p as %p bytes', (input, bytes) => {
    expect(parseByteSize(input)).toBe(bytes);
  });

  it.each(['64 megs', '500kB', '64mib', '64 MiB', '0.5B'])('refuses %p', (input) => {
    expect(parseByteSize(input)).toBeUndefined();
  });
});
