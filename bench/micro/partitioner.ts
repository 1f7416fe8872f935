/**
 * Cost per call of the key → partition function, which runs once per forwarded keyed message
 * and once per parked message: sluice's murmur2 (src/park/murmur2.ts) against kafkajs's
 * `Partitioners.DefaultPartitioner()` (same answers; murmur2 on kafkajs's Long emulation).
 *   npx tsx bench/micro/partitioner.ts
 */
import { randomBytes } from 'node:crypto';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { partitionForKey } from '../../src/park/murmur2';

const CALLS = 1_000_000;
const PARTITIONS = 12;
const keys = Array.from({ length: 1024 }, (_, i) => (i % 2 === 0 ? `producer-${i}-${randomBytes(8).toString('hex')}` : randomBytes(16)));

const kafkajs = Partitioners.DefaultPartitioner();
const metadata: PartitionMetadata[] = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [], isr: [] }));
const viaKafkajs = (key: Buffer | string): number => kafkajs({ topic: 't', partitionMetadata: metadata, message: { key, value: null } });

const time = (name: string, fn: (key: Buffer | string) => number): void => {
  let sink = 0;
  for (let i = 0; i < 100_000; i += 1) sink += fn(keys[i & 1023]);
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i += 1) sink += fn(keys[i & 1023]);
  const ns = Number(process.hrtime.bigint() - start);
  console.log(`${name}: ${CALLS} calls in ${(ns / 1e6).toFixed(0)} ms, ${(ns / CALLS).toFixed(0)} ns/call (checksum ${sink})`);
};

time('src/park/murmur2.ts partitionForKey', (key) => partitionForKey(key, PARTITIONS));
time('kafkajs Partitioners.DefaultPartitioner()', viaKafkajs);
