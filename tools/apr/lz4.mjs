// LZ4 block encoder (the raw block format, no LZ4 frame), written from the LZ4 block format
// description. Plain ES module: runs in Node and in browsers.
//
// A block is a list of sequences: token (literal length high nibble, match length - 4 low nibble),
// literal length extension bytes (255, ..., <255), the literals, a u16 LE offset (1..65535), match
// length extension bytes. The last sequence has literals only. End-of-block rules the decoder
// relies on (and lz4_flex / liblz4 enforce):
//   - the last 5 bytes are always literals (a match ends at least LAST_LITERALS before the end);
//   - the last match starts at least MF_LIMIT = 12 bytes before the end;
//   - so inputs shorter than 13 bytes are one literal run.
// Matching is greedy with one 4-byte hash table (no chains) over a 64 KiB window; the output is a
// pure function of the input.

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_OFFSET = 65535;
const HASH_LOG = 16;
// After this many misses in a row the scan starts skipping ahead (1 more byte per 64 misses), so
// incompressible data costs little; a match resets it.
const SKIP_TRIGGER = 6;

/** Worst-case compressed size: all literals plus their length bytes and the token. */
export function lz4CompressBound(n) {
  return n + Math.floor(n / 255) + 16;
}

const read32 = (s, i) => (s[i] | (s[i + 1] << 8) | (s[i + 2] << 16) | (s[i + 3] << 24)) >>> 0;
// Knuth's multiplicative hash of 4 bytes, top HASH_LOG bits.
const hash4 = (v) => Math.imul(v, 2654435761) >>> (32 - HASH_LOG);

/** Writes a length's 255-run extension (the part above the nibble's 15) at out[op]; returns op. */
function writeLengthExt(out, op, rest) {
  while (rest >= 255) { out[op++] = 255; rest -= 255; }
  out[op++] = rest;
  return op;
}

/** One sequence: literals src[litStart, litStart+litLen), then (if matchLen) a match. Returns op. */
function writeSequence(out, op, src, litStart, litLen, offset, matchLen) {
  const ml = matchLen ? matchLen - MIN_MATCH : 0;
  out[op++] = (Math.min(litLen, 15) << 4) | Math.min(ml, 15);
  if (litLen >= 15) op = writeLengthExt(out, op, litLen - 15);
  out.set(src.subarray(litStart, litStart + litLen), op);
  op += litLen;
  if (!matchLen) return op;
  out[op++] = offset & 0xff;
  out[op++] = offset >>> 8;
  if (ml >= 15) op = writeLengthExt(out, op, ml - 15);
  return op;
}

/** Compresses input into one raw LZ4 block (what LZ4_decompress_safe / lz4_flex decode). */
export function lz4CompressBlock(input) {
  const src = input;
  const n = src.length;
  const out = new Uint8Array(lz4CompressBound(n));
  let op = 0;
  let anchor = 0; // first byte not yet emitted
  if (n >= MF_LIMIT + 1) {
    const table = new Int32Array(1 << HASH_LOG).fill(-1); // position of the last 4 bytes with this hash
    const matchLimit = n - LAST_LITERALS; // a match may not cover bytes from here on
    const lastStart = n - MF_LIMIT; // no match may start after this
    let ip = 0;
    let misses = 0;
    // hot loop: hash the 4 bytes at ip, check the table's candidate, extend a match greedily
    while (ip <= lastStart) {
      const seq = read32(src, ip);
      const h = hash4(seq);
      const cand = table[h];
      table[h] = ip;
      if (cand < 0 || ip - cand > MAX_OFFSET || read32(src, cand) !== seq) {
        ip += 1 + (misses++ >> SKIP_TRIGGER);
        continue;
      }
      misses = 0;
      // extend backwards over pending literals, then forwards up to matchLimit
      let start = ip, ref = cand;
      while (start > anchor && ref > 0 && src[start - 1] === src[ref - 1]) { start--; ref--; }
      let end = ip + MIN_MATCH;
      let r = cand + MIN_MATCH;
      while (end < matchLimit && src[end] === src[r]) { end++; r++; }
      op = writeSequence(out, op, src, anchor, start - anchor, start - ref, end - start);
      anchor = ip = end;
      // index a position inside the match too, so back-to-back repeats are found cheaply
      if (end - 2 <= lastStart) table[hash4(read32(src, end - 2))] = end - 2;
    }
  }
  op = writeSequence(out, op, src, anchor, n - anchor, 0, 0); // the last literals
  return out.slice(0, op);
}

/** lz4_flex::compress_prepend_size: u32 LE uncompressed length, then one raw block. */
export function lz4CompressPrependSize(input) {
  const block = lz4CompressBlock(input);
  const out = new Uint8Array(4 + block.length);
  new DataView(out.buffer).setUint32(0, input.length, true);
  out.set(block, 4);
  return out;
}
