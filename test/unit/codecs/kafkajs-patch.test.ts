// patches/kafkajs+2.2.4.patch changes eight parts of kafkajs 2.2.4:
// - the record decoder took a record's headers with a reduce that spread the object built so far:
//   one record with 5,000 headers took seconds of CPU, the whole sidecar stopped meanwhile
//   (`npm run chaos`, big-records); it is linear now, the list kept as read (`headerList`) and
//   kafkajs's object of names built when first read, by a getter every record shares (an own
//   getter and setter per record made two closures each and left the record in dictionary
//   mode: about 1 KB of heap a record while its fetch was handled), and each record's offset and
//   timestamp added in numbers when they are safe integers (Longs parsed from the batch's strings
//   for every record before, and the timestamp delta read through a Long per byte);
// - the record encoder allocated a zero-filled 512-byte Encoder per header and a record Encoder
//   that grew by copying; it writes one buffer of the record's exact size now, the same bytes;
// - the producer grouped a send's messages per partition with a reduce that copied the
//   partition's list for every message (a send of n messages to one partition: O(n²)); it
//   pushes each message onto its partition's list now, in the same order;
// - the encoder wrote every varint through an array copied in with Buffer.from (a buffer
//   allocated per varint, several per record) and every varlong through Long objects; it writes
//   the bytes in place now, and a varlong within ±2^30 as the varint it is.
// - every level of a produce request (record batch, partition, topic, request) copied what it
//   was given into a zero-filled buffer grown by doubling: about nine copies of every record
//   produced, 13 KB of buffers allocated a 1 KiB message, and V8 ran a full collection for every
//   64 MB of them; an encoder written into another is kept by reference now when it is 256
//   bytes or more, the record batch's CRC-32C taken over the pieces, and the request joined
//   once, when it is written to the socket — the same bytes;
// - the record batch's CRC-32C was a JavaScript table loop over every byte produced (about
//   2.6 ms a MiB: 650 ms of a 200,000-message run); it is @node-rs/crc32's native one when that
//   loads (prebuilt for the common platforms), the JavaScript one otherwise;
// - the request queue re-armed its check of pending requests every millisecond while nothing
//   was pending (a negative delay, which Node runs after 1 ms, and since Node 24 warns about):
//   a thousand timers a second on every connection for as long as it lived (kafkajs#1556,
//   #1704, #1751); it schedules a check only while a request is pending now;
// - the produce request sorted each partition's timestamps for the first and the largest and
//   made each record from a copy of its message (`{ ...message, offsetDelta, timestampDelta }`:
//   on Node 20 V8's slow path, 1.8 µs a message, two parses of a timestamp string besides); it
//   finds them in one pass, in the order the sort gave, and passes each record its fields.
// These tests run kafkajs's own encoder and decoder, as the consumer and the producer do.
/* eslint-disable @typescript-eslint/no-require-imports */
import fc from 'fast-check';
type DecodedHeaders = Record<string, Buffer | Buffer[]>;
const Encoder = require('kafkajs/src/protocol/encoder') as {
  new (): KafkaEncoder;
  sizeOfVarInt(n: number): number;
  sizeOfVarLong(n: number | object): number;
};
const Long = require('kafkajs/src/utils/long') as { fromString(s: string): object };
interface KafkaEncoder {
  buffer: Buffer;
  writeVarInt(n: number): KafkaEncoder;
  writeInt8(n: number): KafkaEncoder;
  writeVarLong(n: number | object): KafkaEncoder;
  writeVarIntBytes(b: unknown): KafkaEncoder;
  writeVarIntArray(a: unknown[]): KafkaEncoder;
}
const Header = require('kafkajs/src/protocol/recordBatch/header/v0') as (h: { key: string; value: unknown }) => KafkaEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: { key: string; value: string; headers: Record<string, string | string[]> }) => { buffer: Buffer };
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (d: unknown, context: object) => { headers: DecodedHeaders; value: Buffer };

const roundTrip = (headers: Record<string, string | string[]>): { headers: DecodedHeaders; value: Buffer } => {
  const outer = new Decoder(encodeRecord({ key: 'k', value: 'v', headers }).buffer);
  return decodeRecord(new Decoder(outer.readVarIntBytes()), { firstOffset: '0', firstTimestamp: '0' });
};

describe("kafkajs's record decoder, as patched", () => {
  it('decodes a record with 20,000 headers in seconds, not minutes', () => {
    const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`h-${i}`, 'x']));
    const started = process.hrtime.bigint();
    const record = roundTrip(many);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(Object.keys(record.headers)).toHaveLength(20_000);
    expect(String(record.headers['h-19999'])).toBe('x');
    // About 0.3 s here; unpatched, minutes (quadratic: 5,000 headers took 5.7 s). A loose bound,
    // so a busy CI machine cannot fail it.
    expect(ms).toBeLessThan(5_000);
  });

  it('builds every record as one class, `headers` a getter they share, read once', () => {
    const records = [roundTrip({ a: '1' }), roundTrip({ b: '2' })];
    const [first, second] = records;
    expect(Object.getPrototypeOf(first)).toBe(Object.getPrototypeOf(second));
    expect(Object.getPrototypeOf(first)).not.toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(first, 'headers')).toBeUndefined();
    expect(Object.keys(first).sort()).toEqual(['attributes', 'batchContext', 'headerList', 'isControlRecord', 'key', 'magicByte', 'offset', 'timestamp', 'value']);
    expect(first.headers).toBe(first.headers);
    expect(String(first.headers.a)).toBe('1');
    expect(String(second.headers.b)).toBe('2');
    (first as { headers: DecodedHeaders }).headers = { c: Buffer.from('3') };
    expect(String(first.headers.c)).toBe('3');
    expect(String(second.headers.b)).toBe('2');
  });

  it("gives every record the offset and timestamp the batch's first ones and its deltas add up to, whatever their size", () => {
    const Longs = Long as unknown as { fromValue(v: bigint): object };
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const nearSafe = fc.bigInt({ min: 2n ** 53n - 1000n, max: 2n ** 53n + 1000n });
    const first = fc.oneof(fc.bigInt({ min: -1n, max: 2n ** 45n }), nearSafe, int64);
    const delta = fc.oneof(fc.integer({ min: -(2 ** 27), max: 2 ** 27 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.bigInt({ min: -(2n ** 36n), max: 2n ** 36n }), fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }));
    fc.assert(
      fc.property(first, first, fc.integer({ min: 0, max: 2 ** 31 - 1 }), delta, (firstOffset, firstTimestamp, offsetDelta, timestampDelta) => {
        const written = encodeRecord({ key: 'k', value: 'v', headers: {}, offsetDelta, timestampDelta: typeof timestampDelta === 'bigint' ? Longs.fromValue(timestampDelta) : timestampDelta } as never);
        const outer = new Decoder(written.buffer);
        const record = decodeRecord(new Decoder(outer.readVarIntBytes()), { firstOffset: String(firstOffset), firstTimestamp: String(firstTimestamp) }) as unknown as { offset: string; timestamp: string; value: Buffer };
        expect(record.offset).toBe(String(firstOffset + BigInt(offsetDelta)));
        expect(record.timestamp).toBe(String(firstTimestamp + BigInt(timestampDelta)));
        expect(String(record.value)).toBe('v');
      }),
      { numRuns: 2000 },
    );
  });

  it('still collects the values of a repeated key in an array, in order', () => {
    const record = roundTrip({ a: ['1', '2', '3'], b: '4' });
    expect((record.headers.a as Buffer[]).map(String)).toEqual(['1', '2', '3']);
    expect(String(record.headers.b)).toBe('4');
    expect(String(record.value)).toBe('v');
  });

  it('takes keys named like Object.prototype members as plain headers', () => {
    const record = roundTrip({ constructor: 'c', toString: 't', ['__proto__']: 'p', hasOwnProperty: 'h' });
    expect(Object.keys(record.headers).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
    expect(String(record.headers.constructor)).toBe('c');
    expect(Object.getPrototypeOf(record.headers)).toBe(Object.prototype);
    expect(String(Object.getOwnPropertyDescriptor(record.headers, '__proto__')?.value)).toBe('p');
  });
});

describe("kafkajs's record encoder, as patched", () => {
  type Input = { key: string | Buffer | null; value: string | Buffer | null; headers: Record<string, string | Buffer | (string | Buffer)[]>; offsetDelta: number; timestampDelta: number };
  /** The bytes kafkajs 2.2.4 wrote before the patch: an Encoder per header, joined into the record's. */
  const unpatched = (r: Input): Buffer => {
    const headers = Object.keys(r.headers).flatMap((k) => {
      const v = r.headers[k];
      return Array.isArray(v) ? v.map((value) => ({ key: k, value })) : [{ key: k, value: v }];
    });
    const body = new Encoder().writeInt8(0).writeVarLong(r.timestampDelta).writeVarInt(r.offsetDelta).writeVarIntBytes(r.key).writeVarIntBytes(r.value).writeVarIntArray(headers.map(Header)).buffer;
    return Buffer.concat([new Encoder().writeVarInt(body.length).buffer, body]);
  };
  const encode = encodeRecord as unknown as (r: Input) => { buffer: Buffer };

  it('writes the same bytes as before for keys, values and headers of every kind', () => {
    const inputs: Input[] = [
      { key: 'k', value: 'v', headers: {}, offsetDelta: 0, timestampDelta: 0 },
      { key: null, value: null, headers: { a: '1' }, offsetDelta: 3, timestampDelta: 1_700_000 },
      { key: Buffer.from([0, 255, 7]), value: Buffer.alloc(3000, 1), headers: { 'producer-id': 'p-1', 'sluice-waited-ms': '12' }, offsetDelta: 499, timestampDelta: 70 },
      { key: 'ключ', value: 'значение ✓', headers: { 'é': ['x', Buffer.from('yz')], b: '' }, offsetDelta: 64, timestampDelta: -5 },
      { key: 'wide', value: 'x'.repeat(200), headers: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`h-${i}`, 'v'.repeat(i % 7)])), offsetDelta: 1, timestampDelta: 2 ** 40 },
    ];
    for (const input of inputs) expect(encode(input).buffer.equals(unpatched(input))).toBe(true);
  });

  it('round-trips through the decoder', () => {
    const outer = new Decoder(encode({ key: 'k', value: 'v', headers: { a: ['1', '2'] }, offsetDelta: 5, timestampDelta: 9 }).buffer);
    const record = decodeRecord(new Decoder(outer.readVarIntBytes()), { firstOffset: '10', firstTimestamp: '100' }) as unknown as { offset: string; timestamp: string; headers: DecodedHeaders };
    expect(record.offset).toBe('15');
    expect(record.timestamp).toBe('109');
    expect((record.headers.a as Buffer[]).map(String)).toEqual(['1', '2']);
  });
});

const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as (a: {
  topic: string;
  partitionMetadata: unknown[];
  messages: { value: string; partition?: number }[];
  partitioner: (a: { message: { partition?: number } }) => number;
}) => Record<string, { value: string }[]>;

describe("kafkajs's producer grouping messages per partition, as patched", () => {
  const partitioner = ({ message }: { message: { partition?: number } }) => message.partition as number;

  it('keeps each partition\'s messages in send order', () => {
    const messages = [0, 1, 0, 2, 1, 0].map((partition, i) => ({ value: `m${i}`, partition }));
    const grouped = groupMessagesPerPartition({ topic: 't', partitionMetadata: [{}, {}, {}], messages, partitioner });
    expect(Object.fromEntries(Object.entries(grouped).map(([p, list]) => [p, list.map((m) => m.value)])))
      .toEqual({ 0: ['m0', 'm2', 'm5'], 1: ['m1', 'm4'], 2: ['m3'] });
    expect(groupMessagesPerPartition({ topic: 't', partitionMetadata: [], messages, partitioner })).toEqual({});
  });

  it('groups 200,000 messages to one partition in well under a second (unpatched: a copy of the list per message)', () => {
    const messages = Array.from({ length: 200_000 }, (_, i) => ({ value: String(i), partition: 0 }));
    const started = process.hrtime.bigint();
    const grouped = groupMessagesPerPartition({ topic: 't', partitionMetadata: [{}], messages, partitioner });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(grouped[0]).toHaveLength(200_000);
    expect(grouped[0][199_999].value).toBe('199999');
    // A few ms here; the quadratic version copies 2·10¹⁰ elements (minutes). A loose bound, for a busy machine.
    expect(ms).toBeLessThan(2_000);
  });
});

describe("kafkajs's varint and varlong writers, as patched", () => {
  /** Zigzag, then 7 bits a byte, low first (the Kafka protocol's varint and varlong), computed on BigInt. */
  const reference = (n: bigint, bits: bigint): Buffer => {
    let z = BigInt.asUintN(Number(bits), (n << 1n) ^ (n >> (bits - 1n)));
    const out: number[] = [];
    while (z >= 0x80n) {
      out.push(Number(z & 0x7fn) | 0x80);
      z >>= 7n;
    }
    out.push(Number(z));
    return Buffer.from(out);
  };
  const edges = [0, 1, -1, 63, -64, 64, -65, 127, 128, 8191, -8192, 8192, 2 ** 20, -(2 ** 20), 2 ** 30 - 1, -(2 ** 30), 2 ** 30, -(2 ** 30) - 1, 2 ** 31 - 1, -(2 ** 31)];
  const spread = Array.from({ length: 2000 }, (_, i) => Math.round(Math.sin(i) * 2 ** (i % 32)));

  it('writes each int32 as the protocol\'s varint, of the size sizeOfVarInt says', () => {
    for (const n of [...edges, ...spread]) {
      const written = new Encoder().writeVarInt(n).buffer;
      expect([n, written.toString('hex')]).toEqual([n, reference(BigInt(n), 32n).toString('hex')]);
      expect(Encoder.sizeOfVarInt(n)).toBe(written.length);
    }
  });

  it('writes a varlong the same from a number and from a Long, beyond ±2^30 too', () => {
    const big = ['4398046511104', '-4398046511105', '9223372036854775807', '-9223372036854775808'];
    for (const n of [...edges, ...spread, ...big.map(Number).filter(Number.isSafeInteger)]) {
      const written = new Encoder().writeVarLong(n).buffer;
      expect([n, written.toString('hex')]).toEqual([n, reference(BigInt(n), 64n).toString('hex')]);
      expect(Encoder.sizeOfVarLong(n)).toBe(written.length);
    }
    for (const s of big) {
      const written = new Encoder().writeVarLong(Long.fromString(s)).buffer;
      expect([s, written.toString('hex')]).toEqual([s, reference(BigInt(s), 64n).toString('hex')]);
    }
  });
});

describe("kafkajs's CRC-32C, as patched", () => {
  const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as ((buffer: Buffer) => number) & { native: boolean };
  const tableLoop = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C') as (buffer: Buffer) => number;

  it('is the native one on this platform (linux x64 and the image\'s have a prebuilt binary)', () => {
    expect(crc32C.native).toBe(true);
  });

  it('gives the standard check value and what the JavaScript table loop gives, as an unsigned 32-bit number', () => {
    expect(crc32C(Buffer.from('123456789'))).toBe(0xe3069283);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.nat(64), fc.nat(64), (bytes, before, after) => {
        // Also as a view inside a larger allocation, the way kafkajs's encoder hands its buffer over.
        const whole = Buffer.alloc(before + bytes.length + after, 0xa5);
        whole.set(bytes, before);
        const view = whole.subarray(before, before + bytes.length);
        expect(crc32C(view)).toBe(tableLoop(Buffer.from(bytes)) >>> 0);
      }),
      { numRuns: 300 },
    );
  });
});

describe("kafkajs's encoder, appending large encoders by reference, as patched", () => {
  interface RopeEncoder {
    buffer: Buffer;
    size(): number;
    writeInt32(n: number): RopeEncoder;
    writeBytes(b: Buffer): RopeEncoder;
    writeEncoder(e: RopeEncoder): RopeEncoder;
    writeEncoderArray(e: RopeEncoder[]): RopeEncoder;
  }
  const Rope = Encoder as unknown as { new (): RopeEncoder; REFERENCE_MIN_BYTES: number };
  const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as ((buffer: Buffer) => number) & { ofPieces(pieces: Buffer[]): number };
  const shipped = Rope.REFERENCE_MIN_BYTES;
  afterEach(() => {
    Rope.REFERENCE_MIN_BYTES = shipped;
  });
  const int32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };

  // Four encoders and a model of each one's bytes: every write appends to the model what it
  // means (an encoder written into another: its bytes at that moment, whatever is written into
  // it later), and the encoder must read back exactly its model, at any point.
  const op = fc.oneof(
    fc.record({ kind: fc.constant('int32' as const), at: fc.nat(3), n: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) }),
    fc.record({ kind: fc.constant('bytes' as const), at: fc.nat(3), bytes: fc.uint8Array({ maxLength: 1200 }) }),
    fc.record({ kind: fc.constant('encoder' as const), at: fc.nat(3), from: fc.nat(3) }),
    fc.record({ kind: fc.constant('array' as const), at: fc.nat(3), from: fc.array(fc.nat(3), { maxLength: 3 }) }),
    fc.record({ kind: fc.constant('read' as const), at: fc.nat(3) }),
  );

  it('reads back what was written, in order, however encoders are nested, written into later or read midway', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.constantFrom(0, 1, 64, 256), (ops, referenceMin) => {
        Rope.REFERENCE_MIN_BYTES = referenceMin;
        const encoders = Array.from({ length: 4 }, () => new Rope());
        const model = Array.from({ length: 4 }, () => Buffer.alloc(0));
        for (const o of ops) {
          const e = encoders[o.at];
          if (o.kind === 'int32') {
            e.writeInt32(o.n);
            model[o.at] = Buffer.concat([model[o.at], int32(o.n)]);
          } else if (o.kind === 'bytes') {
            e.writeBytes(Buffer.from(o.bytes));
            model[o.at] = Buffer.concat([model[o.at], int32(o.bytes.length), o.bytes]);
          } else if (o.kind === 'encoder') {
            e.writeEncoder(encoders[o.from]);
            model[o.at] = Buffer.concat([model[o.at], model[o.from]]);
          } else if (o.kind === 'array') {
            e.writeEncoderArray(o.from.map((i) => encoders[i]));
            for (const i of o.from) model[o.at] = Buffer.concat([model[o.at], model[i]]); // one after another, itself as it is by then
          } else {
            expect(e.buffer.equals(model[o.at])).toBe(true);
          }
          expect(e.size()).toBe(model[o.at].length);
        }
        encoders.forEach((e, i) => expect(e.buffer.equals(model[i])).toBe(true));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the checksum of the pieces as of their concatenation', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 6 }), (pieces) => {
        const buffers = pieces.map((p) => Buffer.from(p));
        expect(crc32C.ofPieces(buffers)).toBe(crc32C(Buffer.concat(buffers)));
      }),
      { numRuns: 300 },
    );
  });

  it('encodes a produce request to the same bytes as when every encoder is copied, as kafkajs did', async () => {
    const produce = require('kafkajs/src/protocol/requests/produce/v3/request') as (a: object) => { encode(): Promise<RopeEncoder> };
    const frame = require('kafkajs/src/protocol/request') as (a: object) => Promise<RopeEncoder>;
    const request = (partitions: number, perPartition: number, valueBytes: number) => produce({
      acks: -1,
      timeout: 30_000,
      topicData: [{
        topic: 'downstream',
        partitions: Array.from({ length: partitions }, (_, partition) => ({
          partition,
          firstSequence: 0,
          messages: Array.from({ length: perPartition }, (_, i) => ({
            key: `producer-${i % 7}`,
            value: Buffer.alloc(valueBytes, (partition * 31 + i) % 251),
            headers: { 'producer-id': `p-${i}`, 'sluice-waited-ms': String(i) },
            timestamp: String(1_700_000_000_000 + i),
          })),
        })),
      }],
    });
    const bytes = async (referenceMin: number, shape: [number, number, number]): Promise<Buffer> => {
      Rope.REFERENCE_MIN_BYTES = referenceMin;
      return (await frame({ correlationId: 7, clientId: 'sluice', request: { apiKey: 0, apiVersion: 3, encode: () => request(...shape).encode() } })).buffer;
    };
    for (const shape of [[1, 1, 10], [3, 50, 1024], [8, 400, 100], [2, 3, 70_000]] as [number, number, number][]) {
      const copied = await bytes(Infinity, shape);
      expect((await bytes(256, shape)).equals(copied)).toBe(true);
      expect((await bytes(0, shape)).equals(copied)).toBe(true);
      expect(copied.readInt32BE(0)).toBe(copied.length - 4);
    }
  });
});

describe("kafkajs's request queue, as patched", () => {
  interface Queue {
    pending: unknown[];
    throttledUntil: number;
    throttleCheckTimeoutId: NodeJS.Timeout | null;
    scheduleCheckPendingRequests(): void;
    checkPendingRequests(): void;
    destroy(): void;
  }
  const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: object) => Queue;
  const queue = (): Queue => new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 1000, enforceRequestTimeout: false, clientId: 'test', broker: 'localhost:9092', logger: {} });
  let timers: jest.SpyInstance;
  beforeEach(() => {
    timers = jest.spyOn(global, 'setTimeout');
  });
  afterEach(() => timers.mockRestore());

  it('schedules no check while nothing is pending, throttled or not (it re-armed itself every millisecond)', () => {
    const idle = queue(); // throttledUntil -1: not throttled
    idle.checkPendingRequests(); // what every answer from the broker calls
    idle.scheduleCheckPendingRequests();
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 500;
    throttled.scheduleCheckPendingRequests();
    expect(timers).not.toHaveBeenCalled();
    expect([idle.throttleCheckTimeoutId, throttled.throttleCheckTimeoutId]).toEqual([null, null]);
  });

  it('checks a pending request when its throttle ends, or after 10 ms without one, never after a negative delay', () => {
    const waiting = queue();
    waiting.pending.push({});
    waiting.scheduleCheckPendingRequests();
    expect(timers).toHaveBeenLastCalledWith(expect.any(Function), 10);
    waiting.destroy();

    const throttled = queue();
    throttled.pending.push({});
    throttled.throttledUntil = Date.now() + 500;
    throttled.scheduleCheckPendingRequests();
    const delay = timers.mock.calls[timers.mock.calls.length - 1][1] as number;
    expect(delay).toBeGreaterThan(400);
    expect(delay).toBeLessThanOrEqual(500);
    throttled.destroy();
  });
});

describe("kafkajs's produce request, as patched", () => {
  interface RequestEncoder {
    buffer: Buffer;
    size(): number;
    writeString(s: string | null): RequestEncoder;
    writeInt16(n: number): RequestEncoder;
    writeInt32(n: number): RequestEncoder;
    writeEncoder(e: RequestEncoder): RequestEncoder;
    writeArray(a: RequestEncoder[]): RequestEncoder;
  }
  type Timestamp = string | number | null | undefined;
  interface Message {
    key: string | Buffer | null;
    value: string | Buffer | null;
    headers?: Record<string, string> | { key: string; value: string | null }[];
    timestamp?: Timestamp;
  }
  const Request = Encoder as unknown as new () => RequestEncoder;
  const produce = require('kafkajs/src/protocol/requests/produce/v3/request') as (a: object) => { encode(): Promise<RequestEncoder> };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: object) => unknown;
  const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch(b: object): Promise<RequestEncoder> };
  const KafkaLong = require('kafkajs/src/utils/long') as { fromInt(n: number): object };
  const NOW = 1_700_000_050_000;

  /** A partition's data as kafkajs 2.2.4 encoded it before the patch: the timestamps sorted, each message copied into its record's fields. */
  const unpatchedPartition = async (partition: number, messages: Message[]): Promise<RequestEncoder> => {
    const dateNow = Date.now();
    const sorted = messages.map((m) => m.timestamp).filter((t) => t != null).sort();
    const timestamps = sorted.length === 0 ? [dateNow] : sorted;
    const firstTimestamp = timestamps[0];
    const records = messages.map((message, i) =>
      Record({ ...message, offsetDelta: i, timestampDelta: ((message.timestamp || dateNow) as number) - (firstTimestamp as number) }));
    const batch = await RecordBatch({
      compression: 0,
      records,
      firstTimestamp,
      maxTimestamp: timestamps[timestamps.length - 1],
      producerId: KafkaLong.fromInt(-1),
      producerEpoch: 0,
      firstSequence: undefined,
      transactional: false,
      lastOffsetDelta: records.length - 1,
    });
    return new Request().writeInt32(partition).writeInt32(batch.size()).writeEncoder(batch);
  };
  const unpatched = async (partitions: Message[][]): Promise<Buffer> => {
    const topic = new Request().writeString('downstream').writeArray(await Promise.all(partitions.map((messages, p) => unpatchedPartition(p, messages))));
    return new Request().writeString(null).writeInt16(-1).writeInt32(30_000).writeArray([topic]).buffer;
  };
  const patched = async (partitions: Message[][]): Promise<Buffer> =>
    (await produce({ acks: -1, timeout: 30_000, topicData: [{ topic: 'downstream', partitions: partitions.map((messages, partition) => ({ partition, messages })) }] }).encode()).buffer;

  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW));
  afterEach(() => jest.restoreAllMocks());

  // Timestamps of every length (`.sort()` ordered them by their text: '9' after '10'), numbers,
  // none, and ties; keys, values and headers of every kind a producer passes.
  const timestamp: fc.Arbitrary<Timestamp> = fc.oneof(
    fc.integer({ min: NOW - 100_000, max: NOW + 100_000 }).map(String),
    fc.bigInt({ min: 0n, max: 10n ** 16n }).map(String),
    fc.integer({ min: 0, max: 2 ** 45 }),
    fc.constantFrom(undefined, null, String(NOW), NOW, 0, '0'),
  );
  const bytes = fc.oneof(fc.constant(null), fc.string({ maxLength: 20 }), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)));
  const headers = fc.oneof(
    fc.constant(undefined),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 4 }),
    fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: fc.oneof(fc.constant(null), fc.string({ maxLength: 8 })) }), { maxLength: 4 }),
  );
  const message: fc.Arbitrary<Message> = fc.record({ key: bytes, value: bytes, headers, timestamp }, { requiredKeys: ['key', 'value'] });

  it('writes the same bytes as before: the first and the largest timestamp as sorted by their text, each record its deltas and fields', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(message, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 3 }), async (partitions) => {
        expect((await patched(partitions)).equals(await unpatched(partitions))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('takes the first of equal timestamps as the first and the last as the largest, as a stable sort did', async () => {
    const partitions: Message[][] = [[
      { key: 'a', value: '1', timestamp: '1700000000000' },
      { key: 'b', value: '2', timestamp: 1_700_000_000_000 },
      { key: 'c', value: '3', timestamp: '999' },
      { key: 'd', value: '4', timestamp: 999 },
      { key: 'e', value: '5' },
    ]];
    expect((await patched(partitions)).equals(await unpatched(partitions))).toBe(true);
  });

  it('subtracts BigInt timestamps as BigInts, as before (the type says string; JavaScript callers pass what they like)', async () => {
    const partitions = [[
      { key: 'a', value: '1', timestamp: 1_700_000_000_005n },
      { key: 'b', value: '2', timestamp: 1_700_000_000_001n },
      { key: 'c', value: '3', timestamp: 1_700_000_000_009n },
    ]] as unknown as Message[][];
    expect((await patched(partitions)).equals(await unpatched(partitions))).toBe(true);
  });
});
