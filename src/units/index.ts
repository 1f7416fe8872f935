export { type Reading } from './quantity';
export { readDuration, formatDuration, DURATION } from './duration';
export { readByteSize, BYTE_SIZE } from './byte-size';
