import { Partitioners } from 'kafkajs';

/**
 * The producer settings of `sluice run` and of the benchmark's plain pipe (acks = all is given
 * per send): no auto-created topics, Java's murmur2 partitioner, not idempotent, and requests
 * not limited per connection (kafkajs's `maxInFlightRequests`): the sender keeps one request in
 * flight per partition, which keeps each partition's order, and requests for other partitions
 * go out meanwhile. With one request per connection, every forward waited behind every other
 * partition's request and behind the tiers' writes (one broker, one connection): its append
 * came late, and the lanes' second rule, counting it late, held its producer back
 * (bench/HISTORY.md, "One request at a time, and answers read late").
 */
export const PRODUCER_SETTINGS = { allowAutoTopicCreation: false, idempotent: false, createPartitioner: Partitioners.DefaultPartitioner } as const;
