import { murmur2, partitionForKey } from '../../../src/park/murmur2';

/** Apache Kafka's own vectors for `Utils.murmur2` (clients UtilsTest.testMurmur2). */
const JAVA_VECTORS: Array<[string, number]> = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

describe('murmur2', () => {
  it.each(JAVA_VECTORS)('hashes %j as the Java client does (%d)', (key, hash) => {
    expect(murmur2(key)).toBe(hash);
    expect(murmur2(Buffer.from(key))).toBe(hash);
  });

  it.each(JAVA_VECTORS)('puts %j on the partition the Java client picks (positive hash modulo the count)', (key, hash) => {
    for (const n of [1, 3, 12, 64]) expect(partitionForKey(key, n)).toBe((hash & 0x7fffffff) % n);
  });
});
