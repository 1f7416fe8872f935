// kafkajs 2.2.4 decodes a record's headers with a reduce that spreads the object built so far,
// so one record with 5,000 headers took seconds of CPU, the whole sidecar stopped meanwhile
// (`npm run chaos`, big-records). patches/kafkajs+2.2.4.patch makes it linear; these tests run
// kafkajs's own encoder and decoder, as the consumer does.
/* eslint-disable @typescript-eslint/no-require-imports */
type DecodedHeaders = Record<string, Buffer | Buffer[]>;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readVarIntBytes(): Buffer };
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: { key: string; value: string; headers: Record<string, string | string[]> }) => { buffer: Buffer };
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (d: unknown, context: object) => { headers: DecodedHeaders; value: Buffer };

const roundTrip = (headers: Record<string, string | string[]>): { headers: DecodedHeaders; value: Buffer } => {
  const outer = new Decoder(encodeRecord({ key: 'k', value: 'v', headers }).buffer);
  return decodeRecord(new Decoder(outer.readVarIntBytes()), { firstOffset: '0', firstTimestamp: '0' });
};

describe("kafkajs's record decoder, as patched", () => {
  it('decodes a record with 20,000 headers in well under a second', () => {
    const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`h-${i}`, 'x']));
    const started = process.hrtime.bigint();
    const record = roundTrip(many);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(Object.keys(record.headers)).toHaveLength(20_000);
    expect(String(record.headers['h-19999'])).toBe('x');
    // Unpatched, the same record takes about a minute (quadratic in the header count).
    expect(ms).toBeLessThan(1_000);
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
