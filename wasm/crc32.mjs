// CRC-32/ISO-HDLC (zlib's crc32): reflected polynomial 0xEDB88320, initial value and final xor
// 0xFFFFFFFF. The .apr v1 trailer is this checksum of every byte before it. A checksum, not
// cryptography: it only catches accidents, the Ed25519 signature catches tampering.

const TABLE = Uint32Array.from({ length: 256 }, (_, b) => {
  let c = b;
  for (let i = 0; i < 8; i++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  return c >>> 0;
});

/** crc32 of one or more byte arrays, as if they were concatenated; an unsigned 32-bit number. */
export function crc32(...parts) {
  let c = 0xffffffff;
  for (const bytes of parts) for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
