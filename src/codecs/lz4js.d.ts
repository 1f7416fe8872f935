/** lz4js 0.2 ships no types: the frame functions. */
declare module 'lz4js' {
  export function compress(src: Uint8Array | number[], maxSize?: number): Uint8Array;
  export function decompress(src: Uint8Array | number[], maxSize?: number): Uint8Array;
}
