import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { lz4Codec, registerCodecs, zstdCodec } from '../../../src/codecs/register-codecs';

const plain = Buffer.from('sluice codec fixture: '.repeat(20));
// Written by the reference command-line tools (`lz4 -z`, `zstd`), i.e. real LZ4 and zstd frames.
const lz4Frame = Buffer.from('BCJNGGRApyIAAAD/B3NsdWljZSBjb2RlYyBmaXh0dXJlOiAWAP+LUHVyZTogAAAAADCVstA=', 'base64');
const zstdFrame = Buffer.from('KLUv/WS4AO0AALBzbHVpY2UgY29kZWMgZml4dHVyZTogAQA+U51N5BJPqw==', 'base64');

describe('when a batch is compressed with lz4 by another client', () => {
  it('decompresses the LZ4 frame', async () => {
    expect(await lz4Codec().decompress(lz4Frame)).toEqual(plain);
  });

  it('refuses to compress with a clear error', async () => {
    await expect(lz4Codec().compress({ buffer: plain })).rejects.toThrow(/lz4 compression is not available/);
  });
});

describe('when a batch is compressed with zstd by another client', () => {
  it('decompresses the zstd frame', async () => {
    expect(await zstdCodec().decompress(zstdFrame)).toEqual(plain);
  });

  it('refuses to compress with a clear error', async () => {
    await expect(zstdCodec().compress({ buffer: plain })).rejects.toThrow(/zstd compression is not available/);
  });
});

describe('when the codecs are registered', () => {
  it('gives kafkajs a codec for snappy, lz4 and zstd', async () => {
    registerCodecs();
    const codecs = CompressionCodecs as unknown as Record<number, () => { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> }>;
    for (const type of [CompressionTypes.Snappy, CompressionTypes.LZ4, CompressionTypes.ZSTD]) expect(codecs[type]).toBeDefined();
    const snappy = codecs[CompressionTypes.Snappy]();
    expect(await snappy.decompress(await snappy.compress({ buffer: plain }))).toEqual(plain);
  });
});
