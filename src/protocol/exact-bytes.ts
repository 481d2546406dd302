// Small Buffers from Buffer.allocUnsafe, zlib and protobufjs's writer are views into shared 8 KiB
// slabs, and one view a device keeps (a queued log file, an info message waiting for retry) keeps
// its whole slab alive: at thousands of devices that was most of their memory. What is kept beyond
// the current request is copied into a buffer of exactly its own size.

export function exactBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}
