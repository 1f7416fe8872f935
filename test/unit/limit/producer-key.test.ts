import fc from 'fast-check';
import { encodeProducerId, fingerprintDigits, MAX_ENCODED_ID, producerKey } from '../../../src/limit/producer-key';

describe('producer keys', () => {
  describe('when any producer id is encoded', () => {
    it('never contains a brace, so the key has exactly one hash tag: the id', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (id) => {
          const key = producerKey('sluice:', id);
          expect(encodeProducerId(id)).not.toMatch(/[{}]/);
          expect(key.startsWith('sluice:{')).toBe(true);
          expect(key.indexOf('}')).toBe(key.length - 1);
          expect(encodeProducerId(id).length).toBeLessThanOrEqual(MAX_ENCODED_ID);
        }),
      );
    });

    it('gives two different ids two different keys', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 120 }), fc.string({ unit: 'binary', maxLength: 120 }), (a, b) => {
          fc.pre(a !== b);
          expect(encodeProducerId(a)).not.toBe(encodeProducerId(b));
        }),
      );
      expect(encodeProducerId('{a}')).not.toBe(encodeProducerId('%7Ba%7D'));
    });
  });

  describe('when an id is long', () => {
    it('hashes it to a bounded # form', () => {
      expect(encodeProducerId('x'.repeat(96))).toBe('x'.repeat(96));
      expect(encodeProducerId('x'.repeat(97))).toMatch(/^#[A-Za-z0-9_-]{43}$/);
      expect(encodeProducerId('\ud800')).toMatch(/^#/); // a lone surrogate cannot be URI-encoded
    });
  });

  describe('when a fingerprint is kept in Redis', () => {
    it('is five decimal digits', () => {
      expect(fingerprintDigits('KuNvZ8jG')).toMatch(/^\d{5}$/);
    });
  });
});
