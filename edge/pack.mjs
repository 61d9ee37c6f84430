// pack.mjs — several named files in one Data module (words.bin: the encoder's files and the lemma
// index, for a MODEL=wordnet worker), so the bundle keeps one module per kind and wrangler's
// `**/*.bin` rule uploads it. Written by edge/bundle.mjs, read by edge/worker.mjs.
//
// Format "MLRTPACK" version 1, little-endian:
//    0  8  magic "MLRTPACK"
//    8  4  u32 version = 1
//   12  4  u32 count (1 .. 64)
//   then count entries: u32 name bytes (1 .. 255), the name (UTF-8, no NUL), zero padding to a
//   multiple of 8, u64 size, the bytes, zero padding to a multiple of 8 (so that every file
//   starts 8-byte aligned and can be viewed in place).
// The file ends after the last entry's padding; names are unique.

const MAGIC = 'MLRTPACK';
const MAX_FILES = 64;
const pad8 = (n) => (n + 7) & ~7;

/** { name: Uint8Array } -> Uint8Array */
export function packFiles(files) {
  const enc = new TextEncoder();
  const entries = Object.entries(files).map(([name, bytes]) => [enc.encode(name), bytes]);
  if (entries.length < 1 || entries.length > MAX_FILES) throw new Error(`packFiles: ${entries.length} files, expected 1..${MAX_FILES}`);
  let size = 16;
  for (const [name, bytes] of entries) {
    if (name.length < 1 || name.length > 255 || name.includes(0)) throw new Error('packFiles: a name must be 1..255 bytes without NUL');
    size += pad8(4 + name.length) + 8 + pad8(bytes.length);
  }
  const out = new Uint8Array(size), dv = new DataView(out.buffer);
  out.set(enc.encode(MAGIC), 0);
  dv.setUint32(8, 1, true);
  dv.setUint32(12, entries.length, true);
  let at = 16;
  for (const [name, bytes] of entries) {
    dv.setUint32(at, name.length, true);
    out.set(name, at + 4);
    at = pad8(at + 4 + name.length);
    dv.setBigUint64(at, BigInt(bytes.length), true);
    out.set(bytes, at + 8);
    at = pad8(at + 8 + bytes.length);
  }
  return out;
}

/** ArrayBuffer | Uint8Array -> { name: Uint8Array } (views, no copies). Throws naming the offset. */
export function unpackFiles(input) {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : input;
  const bad = (msg) => new Error(`words.bin: ${msg}`);
  if (bytes.length < 16 || String.fromCharCode(...bytes.subarray(0, 8)) !== MAGIC) throw bad('not an MLRTPACK file (magic at offset 0)');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(8, true) !== 1) throw bad(`version ${dv.getUint32(8, true)} at offset 8 is not 1`);
  const count = dv.getUint32(12, true);
  if (count < 1 || count > MAX_FILES) throw bad(`count ${count} at offset 12 is not in 1..${MAX_FILES}`);
  const dec = new TextDecoder('utf-8', { fatal: true });
  const files = {};
  let at = 16;
  for (let i = 0; i < count; i++) {
    if (at + 4 > bytes.length) throw bad(`entry ${i} at offset ${at} runs past the end`);
    const n = dv.getUint32(at, true);
    if (n < 1 || n > 255 || at + 4 + n > bytes.length) throw bad(`entry ${i}: name length ${n} at offset ${at}`);
    let name;
    try {
      name = dec.decode(bytes.subarray(at + 4, at + 4 + n));
    } catch {
      throw bad(`entry ${i}: the name at offset ${at + 4} is not UTF-8`);
    }
    if (name.includes('\0') || Object.hasOwn(files, name)) throw bad(`entry ${i}: bad or repeated name "${name}"`);
    at = pad8(at + 4 + n);
    if (at + 8 > bytes.length) throw bad(`entry ${i} ("${name}"): its size at offset ${at} runs past the end`);
    const size = dv.getBigUint64(at, true);
    if (size > BigInt(bytes.length - at - 8)) throw bad(`entry ${i} ("${name}"): size ${size} at offset ${at} runs past the end`);
    files[name] = bytes.subarray(at + 8, at + 8 + Number(size));
    at = pad8(at + 8 + Number(size));
  }
  if (at !== bytes.length) throw bad(`${bytes.length - at} bytes after the last entry (offset ${at})`);
  return files;
}
