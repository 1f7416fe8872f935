import { createReleasePacer } from '../../../src/hold/release-pacer';

describe('when a producer\'s releases come on time', () => {
  it('lets each go at once', () => {
    const pacer = createReleasePacer();
    expect(pacer.slot('p', 50, 1000)).toBe(1000);
    expect(pacer.slot('p', 50, 1051)).toBe(1051);
    expect(pacer.slot('p', 50, 1100)).toBe(1100);
  });
});

describe('when the process was late and several releases of one producer are due at once', () => {
  it('spreads them one interval apart', () => {
    const pacer = createReleasePacer();
    expect([0, 0, 0, 0].map(() => pacer.slot('p', 50, 2000))).toEqual([2000, 2050, 2100, 2150]);
  });

  it('does not hold back other producers or token-bucket rules (spacing 0)', () => {
    const pacer = createReleasePacer();
    pacer.slot('p', 50, 2000);
    expect(pacer.slot('q', 50, 2000)).toBe(2000);
    expect([0, 0].map(() => pacer.slot('burst', 0, 2000))).toEqual([2000, 2000]);
  });
});
