/**
 * A fetched record's bytes, kept with a message read from ingress so that writing it copies
 * them: the patched kafkajs decoder notes where a record's key, header count and headers lie in
 * its bytes, and its encoder copies them for a message that carries this object as `record`
 * with the same key and value and these very header entries first (docs/kafkajs.md "The
 * patch"). A small object of its own, not the decoded record: what waits in the hold keeps
 * these eight fields alive, not kafkajs's record with its accessors.
 */
import type { KafkaMessage } from 'kafkajs';
import type { HeaderList } from '../headers/header-list';

export interface RecordBytes {
  key: Buffer | null;
  value: Buffer | null;
  headerList: HeaderList;
  rawBuffer: Buffer;
  rawKeyAt: number;
  rawCountAt: number;
  rawHeadersAt: number;
  rawEnd: number;
}

/** The bytes of a record the patched decoder read whole; undefined for any other message. */
export const recordBytesOf = (message: KafkaMessage & Partial<RecordBytes>): RecordBytes | undefined => {
  const { rawBuffer, headerList } = message;
  if (rawBuffer === undefined || !Array.isArray(headerList)) return undefined;
  return {
    key: message.key,
    value: message.value,
    headerList,
    rawBuffer,
    rawKeyAt: message.rawKeyAt as number,
    rawCountAt: message.rawCountAt as number,
    rawHeadersAt: message.rawHeadersAt as number,
    rawEnd: message.rawEnd as number,
  };
};
