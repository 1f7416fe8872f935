/**
 * Kafka's murmur2 (Java client `Utils.murmur2`, also kafkajs's default partitioner), so a
 * producer's parked messages land on the partition any Kafka client would pick for that key.
 * Kept rather than calling kafkajs's `Partitioners.DefaultPartitioner()`, which gives the same
 * answers but computes murmur2 on an emulated 64-bit Long: 14 µs a call against 0.4 µs here
 * (`npx tsx bench/micro/partitioner.ts`), and it runs once per forwarded keyed message.
 * test/unit/park checks it against Kafka's own vectors and against kafkajs.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

const mix = (h: number, k: number): number => {
  let x = Math.imul(k, M);
  x ^= x >>> 24;
  x = Math.imul(x, M);
  return Math.imul(h, M) ^ x;
};

const tail = (h: number, data: Buffer): number => {
  const rest = data.length % 4;
  if (rest === 0) return h;
  const base = data.length & ~3;
  let x = h;
  if (rest === 3) x ^= data[base + 2] << 16;
  if (rest >= 2) x ^= data[base + 1] << 8;
  x ^= data[base];
  return Math.imul(x, M);
};

export const murmur2 = (key: Buffer | string): number => {
  const data = Buffer.isBuffer(key) ? key : Buffer.from(key, 'utf8');
  let h = SEED ^ data.length;
  for (let i = 0; i + 4 <= data.length; i += 4) {
    h = mix(h, data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24));
  }
  h = tail(h, data);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
};

/** The partition Kafka's default partitioner picks for a key: positive murmur2 modulo the count. */
export const partitionForKey = (key: Buffer | string, partitions: number): number =>
  (murmur2(key) & 0x7fffffff) % partitions;
