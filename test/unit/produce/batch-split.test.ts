import { messageBytes, takeCount } from '../../../src/produce/batch-split';

describe('when the next request is taken from a queue', () => {
  const size = (n: number) => n;

  it('takes at most maxCount items and at most maxBytes in all', () => {
    expect(takeCount([1, 1, 1, 1], 0, size, 3, 100)).toBe(3);
    expect(takeCount([40, 40, 40], 0, size, 10, 100)).toBe(2);
    expect(takeCount([40, 40, 40], 1, size, 10, 100)).toBe(2);
  });

  it('takes an item bigger than maxBytes alone', () => {
    expect(takeCount([500, 1], 0, size, 10, 100)).toBe(1);
    expect(takeCount([1, 500], 0, size, 10, 100)).toBe(1);
  });

  it('takes nothing from an empty rest', () => {
    expect(takeCount([1], 1, size, 10, 100)).toBe(0);
  });
});

describe('when a message is sized', () => {
  it('counts key, value and every header value, with per-record overhead', () => {
    const bare = messageBytes({ key: null, value: null });
    expect(messageBytes({ key: 'ab', value: Buffer.alloc(10) })).toBe(bare + 12);
    expect(messageBytes({ value: null, headers: { h: ['12', '34'] } })).toBeGreaterThan(bare + 4);
  });
});
