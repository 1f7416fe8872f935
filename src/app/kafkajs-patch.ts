/**
 * Whether the kafkajs sluice runs is the patched one (patches/kafkajs+2.2.4.patch, applied by
 * patch-package on install): a record is encoded from a header list and decoded back, and
 * the decoder must hand the list itself (`headerList`), names as raw bytes, in order, a null
 * value kept — what keeps any header name from colliding with an object's internals. An
 * install that skipped the patch (`--ignore-scripts`) is refused at start, not run unsafely;
 * so is a bundle built from one (the check reads the kafkajs the bundle holds).
 */
import { SluiceError } from '../errors';
import type { HeaderList } from '../headers/header-list';

type Encode = (record: { key: null; value: Buffer; headers: unknown }) => { buffer: Buffer };
type DecoderClass = new (buffer: Buffer) => { readVarInt(): number };
type Decode = (decoder: InstanceType<DecoderClass>, context: { firstOffset: string; firstTimestamp: string }) => { headerList?: unknown };

/** kafkajs's record encoder, its decoder class and its record decoder (`src/protocol/...`). */
export interface RecordCodec {
  encode: Encode;
  Decoder: DecoderClass;
  decode: Decode;
}

// kafkajs's inner modules have no types; `require` with literal names is what esbuild follows.
/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The record codec of the kafkajs this process runs: the bundle (scripts/build.mjs) holds these
 * very modules, the ones its kafkajs uses; under tsx or jest they are node_modules' own.
 */
const runningCodec = (): RecordCodec => ({
  encode: require('kafkajs/src/protocol/recordBatch/record/v0') as Encode,
  Decoder: require('kafkajs/src/protocol/decoder') as DecoderClass,
  decode: require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as Decode,
});
/* eslint-enable @typescript-eslint/no-require-imports */

const PROBE: HeaderList = [
  { key: '__proto__', value: Buffer.from([0xff, 0x00]) },
  { key: Buffer.from([0xfe]), value: null },
  { key: 'a', value: '1' },
  { key: 'b', value: '2' },
  { key: 'a', value: '3' },
];

const FIX = 'reinstall with install scripts on (`npm ci`; a production install runs `patch-package` too), or run `npx patch-package` where sluice is installed';

/**
 * Throws INTERNAL (exit 3) with one line naming the fix when the kafkajs in use (or the codec
 * given) is not patched.
 */
export const checkKafkajsPatch = (codec?: RecordCodec): void => {
  let problem: string | undefined;
  try {
    const { encode, Decoder, decode } = codec ?? runningCodec();
    const decoder = new Decoder(encode({ key: null, value: Buffer.from('v'), headers: PROBE }).buffer);
    decoder.readVarInt(); // the record's length
    const list = decode(decoder, { firstOffset: '0', firstTimestamp: '0' }).headerList;
    const same = Array.isArray(list) && list.length === PROBE.length && PROBE.every((expected, i) => {
      const got = list[i] as { key: unknown; value: unknown };
      const bytes = (b: Buffer | string | null): Buffer | null => (b === null ? null : Buffer.from(b));
      const want = bytes(expected.value);
      return Buffer.isBuffer(got.key) && got.key.equals(Buffer.from(expected.key))
        && (want === null ? got.value === null : Buffer.isBuffer(got.value) && got.value.equals(want));
    });
    if (!same) problem = 'its record decoder does not keep headers as a list in order';
  } catch (error) {
    problem = `its record codec failed on a header list (${error instanceof Error ? error.message : String(error)})`;
  }
  if (problem !== undefined) throw new SluiceError('INTERNAL', `kafkajs is not patched for sluice: ${problem}; ${FIX}`);
};
