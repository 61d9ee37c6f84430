// Zstandard encoder (RFC 8878), written from the format specification. Plain ES module: runs in
// Node and in browsers. Output: exactly one frame that any conforming decoder (zstd CLI,
// python-zstandard, our src/zstd.c) reads.
//
// Frame: magic, header with Frame_Content_Size always present and Single_Segment set when the
// whole input fits the window (so the decoder sizes one buffer), no dictionary; Content_Checksum
// (XXH64, implemented below) only with { checksum: true }.
// Blocks of at most 128 KiB, each the smallest of:
//   - RLE block  when the block is one repeated byte (4 bytes on disk);
//   - compressed block: literals section (Huffman-coded with a per-block tree in 1 or 4 streams,
//     or RLE when all literals are one byte, or Raw when Huffman would not be smaller) and a
//     sequences section whose LL / OF / ML codes each use the predefined FSE table, one fitted
//     to the block (FSE_Compressed_Mode) or RLE_Mode, whichever costs fewest bits;
//   - Raw block  when compression would not make it smaller.
// Offsets: the encoder keeps the three repeat offsets exactly as the decoder does (starting at
// 1, 4, 8; only compressed blocks change them) and sends a match at one of them as repeat code
// 1-3 (with the shifted meaning when no literals precede the match), any other as offset + 3.
// The parser prefers a match at the most recent offset when it is at most one byte shorter.
//
// level (1..22; 0 or omitted = 3; others clamped) only tunes the match search, never the format:
//   1       one candidate per position (plain hash table), skips ahead faster on incompressible data
//   2..5    hash chains searched 2, 4, 8, 16 deep, greedy
//   6..22   hash chains 32..256 deep, each block parsed twice, with one-step lazy matching (a
//           longer match at the next byte wins) and greedily; the smaller encoding is kept
// Output is a pure function of (input, level, checksum).

const MAGIC = 0xfd2fb528;
const BLOCK_MAX = 128 * 1024;
const WINDOW_LOG = 23; // 8 MiB: inputs up to this size are one segment, larger ones use this window
const MIN_MATCH = 4; // the hash covers 4 bytes (the format allows 3)
// A 4-byte match far back costs about as much as a sequence (offset extra bits grow with log2
// offset) as its bytes cost as Huffman literals; beyond FAR_4 it is not taken. (Measured with the
// fitted FSE tables: tighter limits lose up to 30% on int8-like float arrays, none loses ~0.1% on
// the MNIST f32 weights.)
const FAR_4 = 65536;
// Hash table size: about one bucket per input byte (2^10..2^20), so chains hold few strangers;
// walking a chain is cache-miss bound, and fewer collisions made level 19 ~3x faster.
const hashLogFor = (n) => Math.max(10, Math.min(20, Math.ceil(Math.log2(n + 1))));

// ------------------------------------------------------------------ code tables (RFC 8878 §3.1.1.3.2.1.1)

const LL_BASE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64,
  128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];
const LL_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
  12, 13, 14, 15, 16];
const ML_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
  28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, 4099, 8195,
  16387, 32771, 65539];
const ML_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

// Predefined distributions (§3.1.1.3.2.2); -1 = "less than 1" probability.
const LL_DEFAULT = [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
  -1, -1, -1, -1];
const ML_DEFAULT = [1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1];
const OF_DEFAULT = [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1];

const highBit = (v) => 31 - Math.clz32(v);

/** code = the last code whose baseline is <= value (table for small values, log2 above). */
function codeTable(base, size) {
  const t = new Uint8Array(size);
  for (let v = 0, c = 0; v < size; v++) {
    while (c + 1 < base.length && base[c + 1] <= v + base[0]) c++;
    t[v] = c;
  }
  return t;
}
const LL_CODE = codeTable(LL_BASE, 64); // indexed by literal length
const ML_CODE = codeTable(ML_BASE, 128); // indexed by match length - 3
const llCode = (ll) => (ll < 64 ? LL_CODE[ll] : highBit(ll) + 19);
const mlCode = (mlBase) => (mlBase < 128 ? ML_CODE[mlBase] : highBit(mlBase) + 36);

// ------------------------------------------------------------------ FSE tables

/**
 * Builds the decoder's view of an FSE table exactly as §4.1.1 spreads it (so encoder and decoder
 * agree by construction), then inverts it: for symbol s and the state t the decoder must reach
 * next, enc[s * size + t] is the state u (holding s) whose range [baseline, baseline + 2^nbBits)
 * contains t. A symbol's states' ranges tile [0, size), so the inverse is total.
 */
function buildFse(norm, log) {
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const nbBits = new Uint8Array(size);
  const baseline = new Uint16Array(size);
  let high = size - 1;
  for (let s = 0; s < norm.length; s++) if (norm[s] === -1) symbol[high--] = s;
  const step = (size >> 1) + (size >> 3) + 3;
  let pos = 0;
  for (let s = 0; s < norm.length; s++) {
    for (let i = 0; i < norm[s]; i++) {
      symbol[pos] = s;
      do pos = (pos + step) & (size - 1); while (pos > high);
    }
  }
  const next = norm.map((c) => (c === -1 ? 1 : c));
  const enc = new Uint16Array(norm.length * size);
  const first = new Int16Array(norm.length).fill(-1);
  for (let u = 0; u < size; u++) {
    const s = symbol[u];
    const x = next[s]++;
    nbBits[u] = log - highBit(x);
    baseline[u] = (x << nbBits[u]) - size;
    for (let t = baseline[u]; t < baseline[u] + (1 << nbBits[u]); t++) enc[s * size + t] = u;
    if (first[s] < 0) first[s] = u;
  }
  return { log, size, nbBits, baseline, enc, first };
}
const LL_FSE = buildFse(LL_DEFAULT, 6);
const ML_FSE = buildFse(ML_DEFAULT, 6);
const OF_FSE = buildFse(OF_DEFAULT, 5);

// ------------------------------------------------------------------ match finder

/** Search effort for a level (see the header comment). */
export function zstdLevelParams(level = 3) {
  const l = Math.max(1, Math.min(22, Math.trunc(level) || 3));
  return {
    level: l,
    depth: Math.min(256, 1 << (l - 1)), // chain candidates tried per position
    lazy: l >= 6, // try the next position before committing to a match
    goodEnough: l < 6 ? 64 : l < 13 ? 256 : 4096, // stop searching once a match is this long
    skip: l === 1, // accelerate over runs without matches
  };
}

const read32 = (s, i) => (s[i] | (s[i + 1] << 8) | (s[i + 2] << 16) | (s[i + 3] << 24)) >>> 0;
const hash4 = (s, i, shift) => Math.imul(read32(s, i), 2654435761) >>> shift;

/** Hash chains over the whole input: head[hash] = newest position, chain[pos & mask] = older one. */
class MatchFinder {
  constructor(src, window, params) {
    this.src = src;
    this.window = window;
    this.p = params;
    const hashLog = hashLogFor(src.length);
    this.shift = 32 - hashLog;
    this.head = new Int32Array(1 << hashLog).fill(-1);
    const chainSize = params.depth > 1 ? Math.min(window, 1 << Math.max(4, Math.ceil(Math.log2(src.length || 1)))) : 0;
    this.chain = new Int32Array(chainSize);
    this.mask = chainSize - 1;
    this.next = 0; // positions below this are in the tables
    this.offset = 0; // the best match's offset, set by find
  }

  /** Adds every position before `end` (that has 4 bytes) to the tables. */
  insertUpTo(end) {
    const { src, head, chain, mask, shift } = this;
    const last = Math.min(end, src.length - 3);
    for (let p = this.next; p < last; p++) {
      const h = hash4(src, p, shift);
      if (mask >= 0) chain[p & mask] = head[h];
      head[h] = p;
    }
    if (end > this.next) this.next = end;
  }

  /** Longest match for pos that ends by limit (length 0 if under MIN_MATCH); sets this.offset. */
  find(pos, limit) {
    const { src, chain, mask } = this;
    if (limit - pos < MIN_MATCH) return 0;
    this.insertUpTo(pos);
    const minPos = Math.max(0, pos - this.window);
    let cand = this.head[hash4(src, pos, this.shift)];
    let best = 0;
    const first = read32(src, pos);
    // hot loop: walk the chain newest first, extend each real 4-byte match
    for (let depth = this.p.depth; cand >= minPos && depth > 0; depth--) {
      if (src[cand + best] === src[pos + best] && read32(src, cand) === first) {
        let len = MIN_MATCH;
        while (pos + len < limit && src[cand + len] === src[pos + len]) len++;
        if (len > best && (len > 4 || pos - cand <= FAR_4)) {
          best = len;
          this.offset = pos - cand;
          if (len >= this.p.goodEnough || pos + len === limit) break;
        }
      }
      if (mask < 0) break;
      cand = chain[cand & mask];
    }
    return best >= MIN_MATCH ? best : 0;
  }
}

// ------------------------------------------------------------------ parsing a block into sequences

/** Length of the match between pos and pos - offset, up to limit. */
function matchLength(src, pos, offset, limit) {
  let len = 0;
  while (pos + len < limit && src[pos + len] === src[pos + len - offset]) len++;
  return len;
}

/**
 * Greedy (or one-step lazy) parse of src[start, end): fills seq.{ll, ml, of} (literal length,
 * match length, offset) and seq.lits; matches never cross `end` but may reach back before
 * `start` (earlier blocks are history for the decoder too). rep: a copy of the repeat offsets,
 * tracked as the encoder will, so a match at the most recent offset (a few bits to send) is
 * preferred over a barely longer one at a new offset.
 */
function parseBlock(mf, start, end, seq, rep) {
  const { src } = mf;
  const { lazy, skip } = mf.p;
  let n = 0;
  let nLits = 0;
  let anchor = start;
  let pos = start;
  let misses = 0;
  while (pos + MIN_MATCH <= end) {
    let len = mf.find(pos, end);
    let offset = mf.offset;
    const repLen = rep[0] <= pos ? matchLength(src, pos, rep[0], end) : 0;
    if (repLen >= MIN_MATCH && repLen + 1 >= len) {
      len = repLen;
      offset = rep[0];
    } else if (!len) {
      pos += skip ? 1 + (misses++ >> 6) : 1;
      continue;
    } else if (lazy) {
      // one step of lazy evaluation: a longer match one byte later beats this one
      while (pos + 1 + MIN_MATCH <= end) {
        const len2 = mf.find(pos + 1, end);
        if (len2 <= len) break;
        pos++;
        len = len2;
        offset = mf.offset;
      }
    }
    misses = 0;
    const ll = pos - anchor;
    seq.lits.set(src.subarray(anchor, pos), nLits);
    nLits += ll;
    seq.ll[n] = ll;
    seq.ml[n] = len;
    seq.of[n] = offset;
    offsetValue(offset, ll, rep);
    n++;
    pos += len;
    anchor = pos;
  }
  seq.lits.set(src.subarray(anchor, end), nLits);
  nLits += end - anchor;
  mf.insertUpTo(end);
  seq.n = n;
  seq.nLits = nLits;
}

// ------------------------------------------------------------------ block encoding

/** Raw_Literals_Block (type 0) or RLE_Literals_Block (type 1) header for n literals. */
function literalsHeader(type, n) {
  if (n < 32) return [type | (n << 3)]; // Size_Format 00: 5-bit size
  if (n < 4096) return [type | 0b0100 | ((n & 15) << 4), n >> 4]; // 01: 12 bits
  return [type | 0b1100 | ((n & 15) << 4), (n >> 4) & 255, n >> 12]; // 11: 20 bits
}

function writeLiterals(w, lits, n) {
  let same = n > 1;
  for (let i = 1; same && i < n; i++) same = lits[i] === lits[0];
  if (same) {
    w.bytes(literalsHeader(1, n));
    w.byte(lits[0]);
    return;
  }
  const huff = n >= HUF_MIN_LITERALS ? huffmanLiterals(lits, n) : null;
  if (huff && huff.length < n + literalsHeader(0, n).length) {
    w.bytes(huff);
    return;
  }
  w.bytes(literalsHeader(0, n));
  w.bytes(lits.subarray(0, n));
}

// ------------------------------------------------------------------ Huffman literals (§4.2)

const HUF_MAX_BITS = 11; // Max_Number_of_Bits allowed by the format
const HUF_MIN_LITERALS = 64; // below this the tree description costs more than it saves
const HUF_WEIGHT_LOG = 6; // accuracy of the FSE table that compresses the weights (format max 6)

/**
 * Code lengths for the byte counts, at most maxBits long, by package-merge: optimal under the
 * limit and always a complete prefix code (Kraft sum exactly 1), which the weight description
 * needs because the last symbol's weight is implied. Ties break by symbol, so it is deterministic.
 * counts: 256 byte counts, at least two nonzero. Exported for the tests.
 */
export function huffmanLengths(counts, maxBits = HUF_MAX_BITS) {
  const leaves = [];
  for (let s = 0; s < 256; s++) if (counts[s]) leaves.push({ w: counts[s], s });
  leaves.sort((a, b) => a.w - b.w || a.s - b.s);
  let list = leaves;
  for (let level = 1; level < maxBits; level++) {
    const packages = [];
    for (let i = 0; i + 1 < list.length; i += 2) packages.push({ w: list[i].w + list[i + 1].w, a: list[i], b: list[i + 1] });
    const merged = [];
    let i = 0, j = 0;
    while (i < leaves.length || j < packages.length) {
      merged.push(j >= packages.length || (i < leaves.length && leaves[i].w <= packages[j].w) ? leaves[i++] : packages[j++]);
    }
    list = merged;
  }
  // each time a leaf appears among the first 2n - 2 items, its code gets one bit longer
  const lens = new Uint8Array(256);
  const stack = list.slice(0, 2 * leaves.length - 2);
  while (stack.length) {
    const item = stack.pop();
    if (item.a) stack.push(item.a, item.b);
    else lens[item.s]++;
  }
  return lens;
}

/**
 * Canonical codes as §4.2.1.3 assigns them: by weight from the lowest (longest code), symbols in
 * increasing order within a weight, code values counting up.
 */
function huffmanCodes(lens, maxLen) {
  const codes = new Uint16Array(256);
  let next = 0;
  for (let len = maxLen; len >= 1; len--) {
    for (let s = 0; s < 256; s++) if (lens[s] === len) codes[s] = next++;
    next >>= 1;
  }
  return codes;
}

/** Normalizes counts to sum 2^log, every present symbol at least 1 (no "less than 1" cells). */
function normalizeCounts(counts, log) {
  const size = 1 << log;
  const total = counts.reduce((a, b) => a + b, 0);
  const norm = counts.map((c) => (c ? Math.max(1, Math.floor((c * size) / total)) : 0));
  let sum = norm.reduce((a, b) => a + b, 0);
  const argmax = (score) => score.reduce((best, v, i) => (v > score[best] ? i : best), 0);
  while (sum > size) { norm[argmax(norm.map((v) => (v > 1 ? v : 0)))]--; sum--; }
  while (sum < size) { norm[argmax(counts)]++; sum++; }
  return norm;
}

/**
 * FSE_Table_Description (§4.1.1), a forward little-endian bitstream: Accuracy_Log - 5 in 4 bits,
 * then each probability + 1 in a variable-width field (the low values one bit shorter), a zero
 * probability followed by 2-bit repeat counts of further zeros, until the total is 2^log.
 */
function writeFseDescription(out, norm, log) {
  const bw = new BitWriter(out);
  bw.add(log - 5, 4);
  let remaining = (1 << log) + 1, threshold = 1 << log, nbBits = log + 1;
  let s = 0, previousZero = false;
  while (remaining > 1) {
    if (previousZero) {
      const start = s;
      while (norm[s] === 0) s++;
      let run = s - start;
      for (; run >= 3; run -= 3) bw.add(3, 2);
      bw.add(run, 2);
    }
    const count = norm[s++];
    const max = 2 * threshold - 1 - remaining; // this many values fit in nbBits - 1 bits
    remaining -= count;
    let v = count + 1;
    if (v >= threshold) v += max;
    bw.add(v, v < max ? nbBits - 1 : nbBits);
    previousZero = count === 0;
    while (remaining < threshold) { nbBits--; threshold >>= 1; }
  }
  bw.pad();
}

/**
 * Huffman weights compressed with FSE (§4.2.1.2): two states take turns (even weights from the
 * first). The decoder stops when an update of one state would read past the stream's start and
 * then emits the other state's symbol; so the last two weights come from free initial choices
 * (the second-last from a state that reads at least one bit) and everything is written backwards.
 * Returns null when FSE cannot describe them (one distinct weight).
 */
function fseWeights(weights) {
  const counts = new Array(HUF_MAX_BITS + 1).fill(0);
  for (const x of weights) counts[x]++;
  if (weights.length < 2 || counts.filter(Boolean).length < 2) return null;
  const norm = normalizeCounts(counts, HUF_WEIGHT_LOG);
  const t = buildFse(norm, HUF_WEIGHT_LOG);
  const out = new ByteWriter(64);
  writeFseDescription(out, norm, HUF_WEIGHT_LOG);
  const bw = out.bitWriter();
  const n = weights.length;
  const state = new Uint16Array(n); // state[i]: the state that emits weights[i]
  state[n - 1] = t.first[weights[n - 1]];
  state[n - 2] = t.first[weights[n - 2]]; // its first cell has nbBits >= 1 (count < table size)
  for (let i = n - 3; i >= 0; i--) {
    const u = t.enc[weights[i] * t.size + state[i + 2]];
    bw.add(state[i + 2] - t.baseline[u], t.nbBits[u]);
    state[i] = u;
  }
  bw.add(state[1], HUF_WEIGHT_LOG);
  bw.add(state[0], HUF_WEIGHT_LOG);
  bw.finish();
  return out.result();
}

/** Huffman_Tree_Description: the smaller of FSE-compressed weights and 4-bit direct weights. */
function huffmanTreeDescription(lens, maxLen) {
  let last = 255;
  while (!lens[last]) last--;
  // weights of symbols 0..last-1; the last symbol's weight is implied by the total
  const weights = Array.from(lens.subarray(0, last), (l) => (l ? maxLen + 1 - l : 0));
  let best = null;
  const fse = fseWeights(weights);
  if (fse && fse.length < 128) best = Uint8Array.of(fse.length, ...fse);
  if (weights.length <= 128) {
    const direct = new Uint8Array(1 + Math.ceil(weights.length / 2));
    direct[0] = 127 + weights.length;
    weights.forEach((x, i) => { direct[1 + (i >> 1)] |= i & 1 ? x : x << 4; });
    if (!best || direct.length < best.length) best = direct;
  }
  return best;
}

/** One Huffman stream: read backwards, so the last literal goes in first. */
function huffmanStream(lits, from, to, codes, lens) {
  const out = new ByteWriter(((to - from) * HUF_MAX_BITS >> 3) + 8);
  const bw = out.bitWriter();
  // hot loop: one literal's code
  for (let i = to - 1; i >= from; i--) bw.add(codes[lits[i]], lens[lits[i]]);
  bw.finish();
  return out.result();
}

/** Compressed_Literals_Block (header, tree, 1 or 4 streams), or null if Huffman does not apply. */
function huffmanLiterals(lits, n) {
  const counts = new Uint32Array(256);
  for (let i = 0; i < n; i++) counts[lits[i]]++;
  const lens = huffmanLengths(counts, HUF_MAX_BITS);
  let maxLen = 0;
  for (let s = 0; s < 256; s++) maxLen = Math.max(maxLen, lens[s]);
  const tree = huffmanTreeDescription(lens, maxLen);
  if (!tree) return null;
  const codes = huffmanCodes(lens, maxLen);
  const four = n >= 1024; // one stream carries at most 1023 literals (10-bit sizes)
  let streams;
  if (!four) {
    streams = [huffmanStream(lits, 0, n, codes, lens)];
  } else {
    const seg = (n + 3) >> 2;
    streams = [0, 1, 2, 3].map((k) => huffmanStream(lits, k * seg, Math.min(n, (k + 1) * seg), codes, lens));
    if (streams.slice(0, 3).some((st) => st.length > 65535)) return null;
  }
  const jump = four ? [streams[0].length, streams[1].length, streams[2].length].flatMap((v) => [v & 255, v >> 8]) : [];
  const comp = tree.length + jump.length + streams.reduce((a, st) => a + st.length, 0);
  // Size_Format: 0 = one stream, 10-bit sizes; 1, 2, 3 = four streams with 10, 14, 18-bit sizes
  const sf = !four ? 0 : n < 1024 && comp < 1024 ? 1 : n < 16384 && comp < 16384 ? 2 : 3;
  const bits = [10, 10, 14, 18][sf];
  if (comp >= 2 ** bits) return null;
  const header = [];
  for (let v = 2 + sf * 4 + n * 16 + comp * 2 ** (4 + bits), k = 0; k < (4 + 2 * bits) / 8; k++, v = Math.floor(v / 256)) {
    header.push(v % 256);
  }
  return concatBytes([Uint8Array.from(header), tree, Uint8Array.from(jump), ...streams]);
}

function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function writeSequenceCount(w, n) {
  if (n < 128) w.byte(n);
  else if (n < 0x7f00) w.bytes([(n >> 8) + 128, n & 255]);
  else w.bytes([255, (n - 0x7f00) & 255, (n - 0x7f00) >> 8]);
}

/** Per symbol type: the largest code and Accuracy_Log the format allows, and the predefined table. */
const SEQ_KINDS = [
  { name: 'LL', maxLog: 9, codes: 36, predefined: LL_FSE, norm: LL_DEFAULT },
  { name: 'OF', maxLog: 8, codes: 32, predefined: OF_FSE, norm: OF_DEFAULT },
  { name: 'ML', maxLog: 9, codes: 53, predefined: ML_FSE, norm: ML_DEFAULT },
];

/** Approximate FSE cost in bits of the codes under a distribution: each code costs log2(size / p). */
function fseCostBits(counts, norm, log) {
  let bits = 0;
  for (let s = 0; s < counts.length; s++) {
    if (!counts[s]) continue;
    const p = norm[s] === -1 ? 1 : norm[s] || 0;
    if (!p) return Infinity; // the distribution cannot express this code
    bits += counts[s] * (log - Math.log2(p));
  }
  return bits;
}

/**
 * Chooses one table for a symbol type (§3.1.1.3.2.1): RLE_Mode when the block uses one code,
 * else FSE_Compressed_Mode with a table fitted to this block's codes when that (table description
 * included) costs fewer bits than Predefined_Mode. Returns { mode, header bytes, table }.
 */
function chooseTable(kind, codes, n) {
  const counts = new Array(kind.codes).fill(0);
  let distinct = 0;
  for (let i = 0; i < n; i++) if (counts[codes[i]]++ === 0) distinct++;
  if (distinct === 1) {
    const norm = counts.map((c) => (c ? 1 : 0));
    return { mode: 1, header: [codes[0]], table: buildFse(norm, 0) };
  }
  const predefined = { mode: 0, header: [], table: kind.predefined };
  const log = Math.min(kind.maxLog, Math.max(5, Math.ceil(Math.log2(n)), Math.ceil(Math.log2(distinct)) + 1));
  if (distinct > 1 << (log - 1)) return predefined; // too many codes to give each a cell
  const norm = normalizeCounts(counts, log);
  const desc = new ByteWriter(64);
  writeFseDescription(desc, norm, log);
  const custom = desc.length * 8 + fseCostBits(counts, norm, log);
  if (custom >= fseCostBits(counts, kind.norm, kind.predefined.log)) return predefined;
  return { mode: 2, header: Array.from(desc.result()), table: buildFse(norm, log) };
}

/**
 * Symbol_Compression_Modes, the tables, and the sequences bitstream. The decoder reads the
 * bitstream backwards: initial states LL, OF, ML; then per sequence the extra bits OF, ML, LL and
 * (except after the last) the state updates LL, ML, OF. So this writes everything in exactly the
 * reverse order, walking the sequences from the last, choosing each state from the state the
 * decoder must reach next.
 */
function writeSequences(w, seq, rep) {
  const n = seq.n;
  const llc = new Uint8Array(n), mlc = new Uint8Array(n), ofc = new Uint8Array(n), ofv = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    llc[i] = llCode(seq.ll[i]);
    mlc[i] = mlCode(seq.ml[i] - 3);
    ofv[i] = offsetValue(seq.of[i], seq.ll[i], rep);
    ofc[i] = highBit(ofv[i]);
  }
  const [llT, ofT, mlT] = [llc, ofc, mlc].map((codes, k) => chooseTable(SEQ_KINDS[k], codes, n));
  w.byte((llT.mode << 6) | (ofT.mode << 4) | (mlT.mode << 2));
  for (const t of [llT, ofT, mlT]) w.bytes(t.header);
  const LL = llT.table, OF = ofT.table, ML = mlT.table;
  const bw = w.bitWriter();
  let ls = LL.first[llc[n - 1]], ms = ML.first[mlc[n - 1]], os = OF.first[ofc[n - 1]];
  // hot loop: one sequence, back to front
  for (let i = n - 1; i >= 0; i--) {
    if (i < n - 1) {
      const lu = LL.enc[llc[i] * LL.size + ls];
      const mu = ML.enc[mlc[i] * ML.size + ms];
      const ou = OF.enc[ofc[i] * OF.size + os];
      bw.add(os - OF.baseline[ou], OF.nbBits[ou]);
      bw.add(ms - ML.baseline[mu], ML.nbBits[mu]);
      bw.add(ls - LL.baseline[lu], LL.nbBits[lu]);
      ls = lu; ms = mu; os = ou;
    }
    bw.add(seq.ll[i] - LL_BASE[llc[i]], LL_BITS[llc[i]]);
    bw.add(seq.ml[i] - ML_BASE[mlc[i]], ML_BITS[mlc[i]]);
    bw.add(ofv[i] - (1 << ofc[i]), ofc[i]);
  }
  bw.add(ms, ML.log);
  bw.add(os, OF.log);
  bw.add(ls, LL.log);
  bw.finish(); // the closing 1 bit, zero padding to a byte
}

/**
 * Offset_Value for a match (§3.1.1.5), updating the three repeat offsets rep[0..2] exactly as the
 * decoder will. Values 1-3 name a repeat offset: with literals before the match 1, 2, 3 are
 * rep[0], rep[1], rep[2]; with none they shift to rep[1], rep[2], rep[0] - 1. Anything else is
 * sent as offset + 3. A repeat other than the plain rep[0] moves to the front.
 */
function offsetValue(offset, ll, rep) {
  const choices = ll > 0 ? [rep[0], rep[1], rep[2]] : [rep[1], rep[2], rep[0] - 1];
  const k = choices.indexOf(offset);
  if (k === 0 && ll > 0) return 1; // rep[0] again: the history is unchanged
  if (k < 0) {
    rep[2] = rep[1]; rep[1] = rep[0]; rep[0] = offset;
    return offset + 3;
  }
  if (offset !== rep[1]) rep[2] = rep[1]; // rep[2] or rep[0] - 1 comes to the front
  rep[1] = rep[0];
  rep[0] = offset;
  return k + 1;
}

/** Compressed_Block content for the parsed sequences; rep: the repeat offsets, updated. */
function compressedBlock(w, seq, rep) {
  writeLiterals(w, seq.lits, seq.nLits);
  writeSequenceCount(w, seq.n);
  if (seq.n > 0) writeSequences(w, seq, rep);
}

function blockHeader(w, last, type, size) {
  const v = (last ? 1 : 0) | (type << 1) | (size << 3);
  w.bytes([v & 255, (v >> 8) & 255, (v >> 16) & 255]);
}

/** Frame_Header_Descriptor, Window_Descriptor and Frame_Content_Size for n bytes. */
function frameHeader(w, n, single, checksum) {
  // FCS field: 1 byte (single segment only), 2 bytes (value - 256), 4 or 8 bytes
  const fcsFlag = single && n < 256 ? 0 : n >= 256 && n < 65536 + 256 ? 1 : n < 2 ** 32 ? 2 : 3;
  w.byte((fcsFlag << 6) | (single ? 1 << 5 : 0) | (checksum ? 1 << 2 : 0));
  if (!single) w.byte((WINDOW_LOG - 10) << 3); // Exponent, Mantissa 0: Window_Size = 2^WINDOW_LOG
  if (fcsFlag === 0) w.byte(n);
  else if (fcsFlag === 1) w.bytes([(n - 256) & 255, (n - 256) >> 8]);
  else {
    const bytes = fcsFlag === 2 ? 4 : 8;
    for (let i = 0, v = n; i < bytes; i++, v = Math.floor(v / 256)) w.byte(v % 256);
  }
}

const isOneByte = (src, start, end) => {
  for (let i = start + 1; i < end; i++) if (src[i] !== src[start]) return false;
  return true;
};

/**
 * Compresses input into one Zstandard frame. level: match search effort (see the top); checksum:
 * append Content_Checksum (low 32 bits of XXH64 of the content; off by default, as in zstd's
 * library, and it costs BigInt arithmetic here).
 */
export function zstdCompress(input, { level = 3, checksum = false } = {}) {
  const w = new ByteWriter(input.length + 3 * Math.ceil(input.length / BLOCK_MAX) + 32);
  w.bytes([MAGIC & 255, (MAGIC >> 8) & 255, (MAGIC >> 16) & 255, MAGIC >>> 24]);
  const single = input.length <= 1 << WINDOW_LOG;
  frameHeader(w, input.length, single, checksum);
  writeBlocks(w, input, single ? Math.max(input.length, 1) : 1 << WINDOW_LOG, zstdLevelParams(level));
  if (checksum) {
    const h = Number(xxh64(input) & 0xffffffffn);
    w.bytes([h & 255, (h >> 8) & 255, (h >> 16) & 255, h >>> 24]);
  }
  return w.result();
}

/** The frame's blocks, each at most BLOCK_MAX bytes of content, the last one flagged. */
function writeBlocks(w, src, window, params) {
  const n = src.length;
  if (n === 0) {
    blockHeader(w, true, 0, 0); // one empty Raw block
    return;
  }
  // Lazy matching helps text but can hurt data on a fixed grid (float arrays), where the match
  // one byte later is longer yet misaligned. So lazy levels also parse greedily, with their own
  // tables, and keep whichever block encodes smaller.
  const parsers = [params, ...(params.lazy ? [{ ...params, lazy: false }] : [])].map((p) => ({
    mf: new MatchFinder(src, window, p),
    seq: {
      ll: new Uint32Array(BLOCK_MAX / MIN_MATCH + 1), ml: new Uint32Array(BLOCK_MAX / MIN_MATCH + 1),
      of: new Uint32Array(BLOCK_MAX / MIN_MATCH + 1), lits: new Uint8Array(BLOCK_MAX), n: 0, nLits: 0,
    },
  }));
  let rep = [1, 4, 8]; // the repeat offsets every frame starts with
  for (let start = 0; start < n; start += BLOCK_MAX) {
    const end = Math.min(n, start + BLOCK_MAX);
    const size = end - start;
    const last = end === n;
    if (size > 1 && isOneByte(src, start, end)) {
      for (const { mf } of parsers) mf.insertUpTo(end); // still history for later blocks' matches
      blockHeader(w, last, 1, size);
      w.byte(src[start]);
      continue;
    }
    let best = null;
    for (const { mf, seq } of parsers) {
      parseBlock(mf, start, end, seq, rep.slice());
      const body = new ByteWriter(size + 64);
      const repAfter = rep.slice();
      compressedBlock(body, seq, repAfter);
      if (!best || body.length < best.body.length) best = { body, repAfter };
    }
    if (best.body.length < size) {
      blockHeader(w, last, 2, best.body.length);
      w.bytes(best.body.result());
      rep = best.repAfter;
    } else { // not smaller: store the bytes (the decoder's repeat offsets stay as they were)
      blockHeader(w, last, 0, size);
      w.bytes(src.subarray(start, end));
    }
  }
}

/** Growable output with a bit writer for the backward-read FSE streams. */
class ByteWriter {
  constructor(capacity) {
    this.buf = new Uint8Array(Math.max(64, capacity));
    this.length = 0;
  }
  ensure(extra) {
    if (this.length + extra <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.length + extra));
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }
  byte(v) { this.ensure(1); this.buf[this.length++] = v; }
  bytes(a) { this.ensure(a.length); this.buf.set(a, this.length); this.length += a.length; }
  bitWriter() { return new BitWriter(this); }
  result() { return this.buf.slice(0, this.length); }
}

/**
 * Little-endian bit packer: values go in from the low bit up, so a decoder reading the finished
 * stream from its last byte backwards gets them in reverse order of writing.
 */
class BitWriter {
  constructor(out) {
    this.out = out;
    this.acc = 0; // pending bits, fewer than 8 between calls
    this.count = 0;
  }
  add(value, nbBits) {
    if (nbBits > 24) { // keep acc within 31 bits
      this.add(value & 0xffffff, 24);
      this.add(Math.floor(value / 0x1000000), nbBits - 24);
      return;
    }
    this.acc |= value << this.count;
    this.count += nbBits;
    while (this.count >= 8) {
      this.out.byte(this.acc & 255);
      this.acc >>>= 8;
      this.count -= 8;
    }
  }
  /** Zeros up to the byte boundary (forward streams such as an FSE table description). */
  pad() {
    if (this.count > 0) this.out.byte(this.acc & 255);
    this.acc = 0;
    this.count = 0;
  }
  /** The end marker: one 1 bit, then zeros up to the byte boundary. */
  finish() {
    this.add(1, 1);
    if (this.count > 0) this.out.byte(this.acc & 255);
    this.acc = 0;
    this.count = 0;
  }
}

// ------------------------------------------------------------------ XXH64 (for Content_Checksum)

const M64 = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n, P2 = 0xc2b2ae3d27d4eb4fn, P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n, P5 = 0x27d4eb2f165667c5n;
const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & M64;
const xxRound = (acc, lane) => (rotl((acc + lane * P2) & M64, 31n) * P1) & M64;
const xxMerge = (h, v) => (((h ^ xxRound(0n, v)) * P1 + P4) & M64);

/** XXH64 of data with seed 0, as a BigInt (Yann Collet's xxHash, 64-bit variant). */
export function xxh64(data, seed = 0n) {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data.length;
  let i = 0;
  let h;
  if (n >= 32) {
    let v1 = (seed + P1 + P2) & M64, v2 = (seed + P2) & M64, v3 = seed, v4 = (seed - P1) & M64;
    // hot loop: four 8-byte lanes per 32-byte stripe
    for (; i + 32 <= n; i += 32) {
      v1 = xxRound(v1, dv.getBigUint64(i, true));
      v2 = xxRound(v2, dv.getBigUint64(i + 8, true));
      v3 = xxRound(v3, dv.getBigUint64(i + 16, true));
      v4 = xxRound(v4, dv.getBigUint64(i + 24, true));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    h = xxMerge(xxMerge(xxMerge(xxMerge(h, v1), v2), v3), v4);
  } else {
    h = (seed + P5) & M64;
  }
  h = (h + BigInt(n)) & M64;
  for (; i + 8 <= n; i += 8) h = ((rotl(h ^ xxRound(0n, dv.getBigUint64(i, true)), 27n) * P1) + P4) & M64;
  if (i + 4 <= n) {
    h = ((rotl(h ^ ((BigInt(dv.getUint32(i, true)) * P1) & M64), 23n) * P2) + P3) & M64;
    i += 4;
  }
  for (; i < n; i++) h = (rotl(h ^ ((BigInt(data[i]) * P5) & M64), 11n) * P1) & M64;
  h ^= h >> 33n;
  h = (h * P2) & M64;
  h ^= h >> 29n;
  h = (h * P3) & M64;
  return h ^ (h >> 32n);
}
