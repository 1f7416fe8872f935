/**
 * Whether the kafkajs sluice runs is the patched one (patches/kafkajs+2.2.4.patch, applied by
 * patch-package on install): a record is encoded from a header list and decoded back, and
 * the decoder must hand the list itself (`headerList`), names as raw bytes, in order, a null
 * value kept — what keeps any header name from colliding with an object's internals. An
 * install that skipped the patch (`--ignore-scripts`) is refused at start, not run unsafely.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SluiceError } from '../errors';
import type { HeaderList } from '../headers/header-list';

type Encode = (record: { key: null; value: Buffer; headers: unknown }) => { buffer: Buffer };
type DecoderClass = new (buffer: Buffer) => { readVarInt(): number };
type Decode = (decoder: InstanceType<DecoderClass>, context: { firstOffset: string; firstTimestamp: string }) => { headerList?: unknown };

const PROBE: HeaderList = [
  { key: '__proto__', value: Buffer.from([0xff, 0x00]) },
  { key: Buffer.from([0xfe]), value: null },
  { key: 'a', value: '1' },
  { key: 'b', value: '2' },
  { key: 'a', value: '3' },
];

const FIX = 'reinstall with install scripts on (`npm ci`; a production install runs `patch-package` too), or run `npx patch-package` where sluice is installed';

/**
 * Throws INTERNAL (exit 3) with one line naming the fix when the kafkajs in use (or the one in
 * `kafkajsDir`) is not patched.
 */
export const checkKafkajsPatch = (kafkajsDir = dirname(require.resolve('kafkajs/package.json'))): void => {
  const load = createRequire(join(kafkajsDir, 'package.json'));
  let problem: string | undefined;
  try {
    const encode = load('./src/protocol/recordBatch/record/v0') as Encode;
    const Decoder = load('./src/protocol/decoder') as DecoderClass;
    const decode = load('./src/protocol/recordBatch/record/v0/decoder') as Decode;
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
