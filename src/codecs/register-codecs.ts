/**
 * kafkajs reads only gzip by itself: one snappy, lz4 or zstd batch from a Java producer
 * would crash the consumer in a loop. This registers pure-JS codecs (no native builds):
 * snappy (kafkajs-snappy), lz4 (lz4js reads LZ4 frames as Kafka writes them) and zstd
 * (fzstd). lz4 and zstd are read-only: sluice never compresses with them (lz4js writes
 * dependent blocks, which Kafka brokers refuse; no pure-JS zstd compressor exists).
 */
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { decompress as zstdDecompress } from 'fzstd';
import { decompress as lz4Decompress } from 'lz4js';
import { SluiceError } from '../errors';
// kafkajs-snappy has no types; it exports the codec factory.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SnappyCodec = require('kafkajs-snappy') as () => KafkaCodec;

interface KafkaCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

export const lz4Codec = (): KafkaCodec => ({
  compress: async () => {
    throw new SluiceError('INTERNAL', 'lz4 compression is not available (sluice only reads lz4 batches)');
  },
  decompress: async (buffer) => Buffer.from(lz4Decompress(buffer)),
});

export const zstdCodec = (): KafkaCodec => ({
  compress: async () => {
    throw new SluiceError('INTERNAL', 'zstd compression is not available (sluice only reads zstd batches)');
  },
  decompress: async (buffer) => Buffer.from(zstdDecompress(buffer)),
});

/** Registers snappy, lz4 and zstd with kafkajs (process-wide; called once by the composition root). */
export const registerCodecs = (): void => {
  const codecs = CompressionCodecs as unknown as Record<number, () => KafkaCodec>;
  codecs[CompressionTypes.Snappy] = SnappyCodec;
  codecs[CompressionTypes.LZ4] = lz4Codec;
  codecs[CompressionTypes.ZSTD] = zstdCodec;
};
