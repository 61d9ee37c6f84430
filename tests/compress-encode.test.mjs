// Our JS encoders (tools/apr/lz4.mjs, tools/apr/zstd.mjs) against INDEPENDENT decoders: Debian's
// zstd CLI, python3-zstandard, python3-lz4; then our own C decoders through .apr v1 files loaded
// by the wasm runtime. Plus the LZ4 end-of-block rules checked structurally, determinism, and
// compression ratios that show real compression happened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lz4CompressBlock, lz4CompressPrependSize } from '../tools/apr/lz4.mjs';
import { zstdCompress, xxh64, huffmanLengths } from '../tools/apr/zstd.mjs';
import { createRuntime } from '../wasm/mlrt.mjs';
import { concat, u64le, f32bytes, readModel, parseBin, bincodeF32s, aprV1, APR_TYPE } from './helpers.mjs';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const hasPy = (mod) => spawnSync(PYTHON, ['-c', `import ${mod}`]).status === 0;
const noZstdCli = spawnSync('zstd', ['--version']).status === 0 ? false : 'zstd CLI missing (apt-get install zstd)';
const noPyZstd = hasPy('zstandard') ? false : 'python3-zstandard missing';
const noPyLz4 = hasPy('lz4.block') ? false : 'python3-lz4 missing';
const LEVELS = [1, 3, 19];
const KB = 1024;

// ------------------------------------------------------------------ corpus

function rng(seed) { // xorshift32: the same bytes on every run
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s; };
}
function randomBytes(n, seed) {
  const r = rng(seed), b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = r() & 255;
  return b;
}
const WORDS = ('the of and to in is weights layer model tensor matrix float bias input output hidden network '
  + 'train loss gradient literal sequence offset match huffman table state stream block frame').split(' ');
function text(n, seed) {
  const r = rng(seed);
  let s = '';
  while (s.length < n) s += WORDS[r() % WORDS.length] + (r() % 12 === 0 ? '.\n' : ' ');
  return new TextEncoder().encode(s.slice(0, n));
}
function floats(n, seed, f) {
  const r = rng(seed), v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = f(r() / 2 ** 32, r);
  return new Uint8Array(v.buffer);
}
const repeat = (unit, n) => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = unit[i % unit.length]; return b; };

/** n bytes drawn from alphabet (a byte array) with weights (counts), no repeats to speak of. */
function drawn(n, seed, alphabet, weights = alphabet.map(() => 1)) {
  const r = rng(seed), total = weights.reduce((a, b) => a + b, 0), b = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let x = r() % total, k = 0;
    while (x >= weights[k]) x -= weights[k++];
    b[i] = alphabet[k];
  }
  return b;
}
const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);
const letters = range(97, 123);
const fib = [1, 1];
while (fib.length < 24) fib.push(fib.at(-1) + fib.at(-2));

const mnist = readModel('mnist-mlp.f32.bin');
const CORPUS = [
  ['empty', new Uint8Array(0)],
  ['1 byte', Uint8Array.of(0x42)],
  ...['ab', 'hello', 'abcabcabcab', 'abcabcabcabc', 'abcabcabcabca', 'abcdabcdabcdabcdabcd', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']
    .map((s) => [`"${s}"`, new TextEncoder().encode(s)]),
  ['zeros 1 MiB', new Uint8Array(1 << 20)],
  ['random 200 KiB', randomBytes(200 * KB, 1)],
  ['text 300 KB', text(300000, 2)],
  ['mnist-mlp.f32.bin', mnist],
  ['gaussian-ish f32', floats(50000, 3, (u) => (u - 0.5) * 0.2)],
  ['sparse f32 (90% zero)', floats(60000, 4, (u, r) => (r() % 10 ? 0 : u - 0.5))],
  ['quantized f32 (16 levels)', floats(60000, 5, (u) => Math.round(u * 15) / 15 - 0.5)],
  ['text 128 KiB - 1', text(128 * KB - 1, 6)],
  ['text 128 KiB', text(128 * KB, 7)],
  ['text 128 KiB + 1', text(128 * KB + 1, 8)],
  ['mixed 3 blocks + 17', concat(text(100 * KB, 9), new Uint8Array(150 * KB), randomBytes(150 * KB + 17, 10))],
  // Huffman literals: one stream (< 1024), four streams with 14- and 18-bit sizes
  ['letters 700', drawn(700, 20, letters)],
  ['letters 1200', drawn(1200, 21, letters)],
  ['letters 10000', drawn(10000, 22, letters)],
  ['letters 100000', drawn(100000, 23, letters)],
  // Fibonacci counts: an unlimited Huffman code would be 23 bits deep; the format allows 11
  // (every other byte uniform noise from 24..100, so LZ matches cannot eat the frequent symbols)
  ['Fibonacci byte frequencies', (() => {
    const f = drawn(60000, 24, range(0, 24), fib), noise = drawn(60000, 26, range(24, 101));
    return Uint8Array.from({ length: 120000 }, (_, i) => (i & 1 ? noise : f)[i >> 1]);
  })()],
  // symbols above 128 force FSE-compressed weights; the gaps need the zero-repeat flags
  ['sparse alphabet 0..40, 200..255', drawn(50000, 25, [...range(0, 41), ...range(200, 256)], [...range(0, 41), ...range(200, 256)].map((v) => 1 + (v % 7)))],
  ['one match > 65535 (period 61)', concat(randomBytes(5, 11), repeat(randomBytes(61, 12), 300000))],
  ['offset 65535 (the LZ4 window)', (() => { const r = randomBytes(65535, 13); return concat(r, r, text(100, 14)); })()],
  ['offset 65536 (just past the LZ4 window)', (() => { const r = randomBytes(65536, 15); return concat(r, r); })()],
  ['offsets 65000..65535', (() => { const r = randomBytes(65535, 16); return concat(r, r.subarray(0, 40000), r.subarray(500, 40500)); })()],
];

// ------------------------------------------------------------------ independent decoders

/** Runs one python3 script over files in dir; it prints one line per file: "ok" or an error. */
function pythonDecode(dir, names, script) {
  const r = spawnSync(PYTHON, ['-c', script, dir, ...names], { maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr.toString());
  return r.stdout.toString().trim().split('\n');
}

function withDir(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-enc-'));
  try { return fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
}

// All compressed forms of the corpus, computed once.
const packed = CORPUS.map(([name, raw]) => ({
  name, raw, lz4: lz4CompressPrependSize(raw), zst: Object.fromEntries(LEVELS.map((l) => [l, zstdCompress(raw, { level: l })])),
}));

test('zstd frames decode with the zstd CLI (zstd -d), every corpus item at levels 1, 3, 19', { skip: noZstdCli }, () => {
  withDir((dir) => {
    const files = [];
    packed.forEach((p, i) => LEVELS.forEach((l) => {
      const f = join(dir, `${i}-${l}.zst`);
      writeFileSync(f, p.zst[l]);
      files.push([f, p, l]);
    }));
    const r = spawnSync('zstd', ['-d', '-q', '-f', ...files.map(([f]) => f)]);
    assert.equal(r.status, 0, r.stderr.toString());
    for (const [f, p, l] of files) {
      assert.deepEqual(new Uint8Array(readFileSync(f.slice(0, -4))), p.raw, `${p.name} level ${l}`);
    }
    // and through a pipe, as zstd -d -c
    const one = packed.find((p) => p.name === 'text 128 KiB + 1');
    assert.deepEqual(new Uint8Array(spawnSync('zstd', ['-d', '-c', '-q'], { input: one.zst[3] }).stdout), one.raw);
  });
});

test('zstd frames decode with python3-zstandard, which also checks the declared content size', { skip: noPyZstd }, () => {
  withDir((dir) => {
    const names = [];
    packed.forEach((p, i) => LEVELS.forEach((l) => {
      writeFileSync(join(dir, `${i}-${l}.zst`), p.zst[l]);
      writeFileSync(join(dir, `${i}.raw`), p.raw);
      names.push(`${i}-${l}`);
    }));
    const lines = pythonDecode(dir, names, `
import sys, os, zstandard
d = sys.argv[1]
for n in sys.argv[2:]:
    frame = open(os.path.join(d, n + '.zst'), 'rb').read()
    raw = open(os.path.join(d, n.split('-')[0] + '.raw'), 'rb').read()
    p = zstandard.get_frame_parameters(frame)
    try:
        out = zstandard.ZstdDecompressor().decompress(frame)
        print('ok' if out == raw and p.content_size == len(raw) else 'mismatch %d %d' % (len(out), p.content_size))
    except Exception as e:
        print('error', e)`);
    assert.deepEqual(lines, names.map(() => 'ok'), names.map((n, i) => `${n}: ${lines[i]}`).filter((s) => !s.endsWith('ok')).join('; '));
  });
});

test('LZ4 blocks decode with python3-lz4 (explicit size and the prepended size)', { skip: noPyLz4 }, () => {
  withDir((dir) => {
    const names = packed.map((p, i) => {
      writeFileSync(join(dir, `${i}.lz4`), p.lz4);
      writeFileSync(join(dir, `${i}.raw`), p.raw);
      return `${i}`;
    });
    const lines = pythonDecode(dir, names, `
import sys, os, lz4.block
d = sys.argv[1]
for n in sys.argv[2:]:
    data = open(os.path.join(d, n + '.lz4'), 'rb').read()
    raw = open(os.path.join(d, n + '.raw'), 'rb').read()
    try:
        a = lz4.block.decompress(data[4:], uncompressed_size=len(raw))
        b = lz4.block.decompress(data) if raw else b''
        print('ok' if a == raw and b == raw else 'mismatch')
    except Exception as e:
        print('error', e)`);
    assert.deepEqual(lines, names.map(() => 'ok'), names.map((n, i) => `${packed[i].name}: ${lines[i]}`).filter((s) => !s.endsWith('ok')).join('; '));
  });
});

/**
 * Noisy records with two interleaved periods: many matches at the last few offsets, so every
 * repeat-offset code (1-3, with and without literals before the match, and rep[0] - 1) occurs.
 */
function records(n, seed) {
  const r = rng(seed), p1 = 3 + (r() % 20), p2 = 3 + (r() % 20), b = new Uint8Array(n);
  for (let j = 0; j < n; j++) b[j] = r() % 5 === 0 ? r() & 255 : (j % (j % 3 ? p1 : p2)) * 7;
  return b;
}

test('200 random mixtures (text, runs, repeats, noise, letters, records) at random levels decode with python3-lz4 and python3-zstandard',
  { skip: noPyLz4 || noPyZstd }, () => {
    const r = rng(99);
    const pieces = [(n, k) => text(n, k), (n) => new Uint8Array(n).fill(n & 255), (n, k) => repeat(randomBytes(1 + (k % 40), k), n),
      (n, k) => randomBytes(n, k), (n, k) => drawn(n, k, letters), (n, k) => floats(n >> 2, k, (u) => Math.round(u * 7)),
      records, records];
    withDir((dir) => {
      const names = [];
      for (let i = 0; i < 200; i++) {
        const parts = [];
        for (let j = r() % 6; j > 0; j--) parts.push(pieces[r() % pieces.length](r() % (i < 150 ? 3000 : 70000), r()));
        const raw = concat(...parts);
        const level = [1, 2, 3, 5, 9, 19][r() % 6];
        writeFileSync(join(dir, `${i}.raw`), raw);
        writeFileSync(join(dir, `${i}.zst`), zstdCompress(raw, { level }));
        writeFileSync(join(dir, `${i}.lz4`), lz4CompressPrependSize(raw));
        names.push(`${i}`);
      }
      const lines = pythonDecode(dir, names, `
import sys, os, lz4.block, zstandard
d = sys.argv[1]
for n in sys.argv[2:]:
    rd = lambda ext: open(os.path.join(d, n + ext), 'rb').read()
    raw = rd('.raw')
    try:
        z = zstandard.ZstdDecompressor().decompress(rd('.zst'))
        l = lz4.block.decompress(rd('.lz4')[4:], uncompressed_size=len(raw))
        print('ok' if z == raw and l == raw else 'mismatch zstd=%s lz4=%s' % (z == raw, l == raw))
    except Exception as e:
        print('error', e)`);
      assert.deepEqual(lines, names.map(() => 'ok'), names.map((n, i) => `${n}: ${lines[i]}`).filter((x) => !x.endsWith('ok')).join('; '));
    });
  });

test('zstd { checksum: true }: XXH64 vectors; the same 4 checksum bytes as zstd --check; verified by the zstd CLI and python3-zstandard',
  { skip: noZstdCli || noPyZstd }, () => {
    const enc = new TextEncoder();
    assert.equal(xxh64(new Uint8Array(0)), 0xef46db3751d8e999n);
    assert.equal(xxh64(enc.encode('a')), 0xd24ec4f1a98c6e5bn);
    assert.equal(xxh64(enc.encode('abc')), 0x44bc2cf5ad770999n);
    withDir((dir) => {
      const names = [];
      packed.filter((p) => p.raw.length <= 1 << 20).forEach((p, i) => {
        const f = zstdCompress(p.raw, { checksum: true });
        assert.equal(f[4] & 4, 4, `${p.name}: Content_Checksum_Flag`);
        assert.deepEqual(f.subarray(0, -4).subarray(5), zstdCompress(p.raw).subarray(5), `${p.name}: only the flag and the tail differ`);
        const ref = new Uint8Array(spawnSync('zstd', ['-q', '-c', '--check'], { input: p.raw, maxBuffer: 1 << 26 }).stdout);
        assert.deepEqual(f.subarray(-4), ref.subarray(-4), `${p.name}: checksum`);
        writeFileSync(join(dir, `${i}.zst`), f);
        writeFileSync(join(dir, `${i}.raw`), p.raw);
        names.push(`${i}`);
      });
      const r = spawnSync('zstd', ['-t', '-q', ...names.map((n) => join(dir, `${n}.zst`))]);
      assert.equal(r.status, 0, r.stderr.toString());
      const bad = zstdCompress(text(5000, 1), { checksum: true });
      bad[bad.length - 1] ^= 1;
      assert.notEqual(spawnSync('zstd', ['-d', '-c', '-q'], { input: bad }).status, 0, 'a wrong checksum is caught');
      const lines = pythonDecode(dir, names, `
import sys, os, zstandard
d = sys.argv[1]
for n in sys.argv[2:]:
    frame = open(os.path.join(d, n + '.zst'), 'rb').read()
    raw = open(os.path.join(d, n + '.raw'), 'rb').read()
    p = zstandard.get_frame_parameters(frame)
    print('ok' if p.has_checksum and zstandard.ZstdDecompressor().decompress(frame) == raw else 'mismatch')`);
      assert.deepEqual(lines, names.map(() => 'ok'));
    });
  });

test('zstd above 8 MiB: an 8 MiB window (no single segment), matches only within it; zstd CLI and python3-zstandard decode it',
  { skip: noZstdCli || noPyZstd }, () => {
    const rnd = randomBytes(1 << 20, 40);
    const data = concat(rnd, repeat(text(300000, 41), 7.2 * (1 << 20)), rnd, rnd); // copy 2: 8.2 MiB back, copy 3: 1 MiB
    const f = zstdCompress(data, { checksum: true });
    assert.deepEqual([f[4], f[5]], [0x84, (23 - 10) << 3], 'FCS 4 bytes + checksum; Window_Descriptor 2^23');
    assert.ok(f.length > 2 * (1 << 20) && f.length < 2 * (1 << 20) + 150000, `${f.length}: copy 2 stored, copy 3 matched`);
    const d = spawnSync('zstd', ['-d', '-c', '-q'], { input: f, maxBuffer: 1 << 26 });
    assert.equal(d.status, 0, d.stderr.toString());
    assert.ok(Buffer.from(data).equals(d.stdout));
    const p = spawnSync(PYTHON, ['-c', 'import sys, zstandard; sys.stdout.buffer.write(zstandard.ZstdDecompressor().decompress(sys.stdin.buffer.read()))'],
      { input: f, maxBuffer: 1 << 26 });
    assert.equal(p.status, 0, p.stderr.toString());
    assert.ok(Buffer.from(data).equals(p.stdout));
  });

// ------------------------------------------------------------------ LZ4 structure

/** Strict LZ4 block walk: returns the decoded bytes and where the last match started/ended. */
function lz4Walk(block, n) {
  const out = new Uint8Array(n);
  let ip = 0, op = 0, lastMatch = null, longest = 0;
  const len = (base) => { let l = base; if (base === 15) { let b; do { b = block[ip++]; l += b; } while (b === 255); } return l; };
  for (;;) {
    const token = block[ip++];
    const ll = len(token >> 4);
    out.set(block.subarray(ip, ip + ll), op);
    ip += ll; op += ll;
    if (ip === block.length) break; // the last sequence: literals only
    const off = block[ip] | (block[ip + 1] << 8);
    ip += 2;
    const ml = len(token & 15) + 4;
    assert.ok(off >= 1 && off <= op, `offset ${off} at output ${op}`);
    lastMatch = { start: op, end: op + ml, off };
    longest = Math.max(longest, ml);
    for (let i = 0; i < ml; i++, op++) out[op] = out[op - off];
  }
  assert.equal(op, n, 'decoded size');
  return { out, lastMatch, longest };
}

test('LZ4: end-of-block rules (last 5 bytes literals, last match starts >= 12 before the end), offsets <= 65535', () => {
  for (const { name, raw, lz4 } of packed) {
    assert.equal(new DataView(lz4.buffer).getUint32(0, true), raw.length, name);
    const { out, lastMatch } = lz4Walk(lz4.subarray(4), raw.length);
    assert.deepEqual(out, raw, name);
    if (raw.length < 13) assert.equal(lastMatch, null, `${name}: short inputs are all literals`);
    if (lastMatch) {
      assert.ok(lastMatch.end <= raw.length - 5, `${name}: last match ends ${raw.length - lastMatch.end} bytes before the end`);
      assert.ok(lastMatch.start <= raw.length - 12, `${name}: last match starts ${raw.length - lastMatch.start} bytes before the end`);
    }
  }
  assert.deepEqual(lz4CompressBlock(new Uint8Array(0)), Uint8Array.of(0), 'empty input: one empty token');
  // a match longer than 65535 really is one match (length bytes run over many 255s)
  const long = packed.find((p) => p.name.startsWith('one match'));
  assert.ok(lz4Walk(long.lz4.subarray(4), long.raw.length).longest > 65535 * 4);
  assert.ok(long.lz4.length < 100 + long.raw.length / 255, `long match: ${long.lz4.length} bytes`);
  // offset exactly 65535 is used, 65536 is out of reach
  const at = packed.find((p) => p.name.startsWith('offset 65535'));
  assert.ok(at.lz4.length < 65535 + 1000, 'offset 65535 found');
  const past = packed.find((p) => p.name.startsWith('offset 65536'));
  assert.ok(past.lz4.length > 2 * 65536 - 100, 'nothing matches beyond the window');
});

// ------------------------------------------------------------------ zstd structure

test('zstd: frame header (content size present, single segment), RLE and raw block fallbacks, deterministic', () => {
  for (const { name, raw, zst } of packed) {
    const f = zst[3];
    assert.deepEqual(Array.from(f.subarray(0, 4)), [0x28, 0xb5, 0x2f, 0xfd], name);
    const fhd = f[4];
    assert.equal(fhd & 0x20, 0x20, `${name}: Single_Segment`);
    assert.equal(fhd & 0x0f, 0, `${name}: no checksum, no dictionary, reserved bit clear`);
    const fcsBytes = [1, 2, 4, 8][fhd >> 6];
    let fcs = 0;
    for (let i = 0; i < fcsBytes; i++) fcs += f[5 + i] * 256 ** i;
    assert.equal(fcs + (fcsBytes === 2 ? 256 : 0), raw.length, `${name}: Frame_Content_Size`);
    const blocks = Math.max(1, Math.ceil(raw.length / (128 * KB)));
    assert.ok(f.length <= 5 + fcsBytes + 3 * blocks + raw.length, `${name}: never larger than raw blocks`);
    for (const l of LEVELS) assert.deepEqual(zstdCompress(raw, { level: l }), zst[l], `${name}: deterministic at ${l}`);
  }
  assert.deepEqual(lz4CompressPrependSize(mnist), packed.find((p) => p.raw === mnist).lz4, 'LZ4 deterministic');
  // 1 MiB of zeros: 8 RLE blocks of 4 bytes each after a 9-byte header
  const zeros = packed.find((p) => p.name === 'zeros 1 MiB').zst[3];
  assert.equal(zeros.length, 4 + 1 + 4 + 8 * 4);
  assert.equal((zeros[9] >> 1) & 3, 1, 'RLE block');
  // random data: raw blocks
  const rnd = packed.find((p) => p.name === 'random 200 KiB').zst[3];
  assert.equal(rnd.length, 4 + 1 + 4 + 3 + 128 * KB + 3 + 72 * KB);
  // above 8 MiB the frame uses a window descriptor instead of one segment
  const big = zstdCompress(new Uint8Array(8 * 1024 * 1024 + 1));
  assert.equal(big[4], 0x80, 'FCS 4 bytes, not single segment');
  assert.equal(big[5], (23 - 10) << 3, 'Window_Size 8 MiB');
});

/**
 * What each block of a frame uses: 'raw-block', 'rle-block', or for compressed blocks the literals
 * ('raw-lits', 'rle-lits', 'huf-1stream', 'huf-4streams-sf1..3', 'direct-weights' / 'fse-weights',
 * 'huf-maxbits-N' for direct weights). A frame walker independent of the encoder's code.
 */
function frameFeatures(f) {
  const out = new Set();
  const fhd = f[4];
  let at = 5 + ((fhd & 0x20) ? 0 : 1) + [(fhd & 0x20) ? 1 : 0, 2, 4, 8][fhd >> 6];
  for (;;) {
    const h = f[at] | (f[at + 1] << 8) | (f[at + 2] << 16);
    const type = (h >> 1) & 3, size = h >> 3;
    at += 3;
    if (type === 0) out.add('raw-block');
    if (type === 1) out.add('rle-block');
    if (type === 2) {
      const lt = f[at] & 3, sf = (f[at] >> 2) & 3;
      // the literals section's size, then the sequences' count and Symbol_Compression_Modes
      const hdr = lt < 2 ? [1, 2, 1, 3][sf] : [3, 3, 4, 5][sf];
      let v = 0;
      for (let i = hdr - 1; i >= 0; i--) v = v * 256 + f[at + i];
      const bits = lt < 2 ? [5, 12, 5, 20][sf] : [10, 10, 14, 18][sf];
      const regen = Math.floor(v / 2 ** (4 - (lt < 2 && !(sf & 1) ? 1 : 0))) % 2 ** bits;
      const litBytes = lt === 0 ? regen : lt === 1 ? 1 : Math.floor(v / 2 ** (4 + bits)) % 2 ** bits;
      let q = at + hdr + litBytes;
      const nseq = f[q] < 128 ? f[q] : f[q] < 255 ? ((f[q] - 128) << 8) + f[q + 1] : f[q + 1] + (f[q + 2] << 8) + 0x7f00;
      q += f[q] < 128 ? 1 : f[q] < 255 ? 2 : 3;
      if (nseq) ['LL', 'OF', 'ML'].forEach((k, i) => out.add(`${k}-${['predefined', 'rle', 'fse', 'repeat'][(f[q] >> (6 - 2 * i)) & 3]}`));
      if (lt === 0) out.add('raw-lits');
      if (lt === 1) out.add('rle-lits');
      if (lt === 2) {
        out.add(sf === 0 ? 'huf-1stream' : `huf-4streams-sf${sf}`);
        const tree = at + [3, 3, 4, 5][sf];
        if (f[tree] >= 128) {
          out.add('direct-weights');
          let sum = 0;
          for (let i = 0; i < f[tree] - 127; i++) {
            const w = i & 1 ? f[tree + 1 + (i >> 1)] & 15 : f[tree + 1 + (i >> 1)] >> 4;
            if (w) sum += 2 ** (w - 1);
          }
          out.add(`huf-maxbits-${Math.floor(Math.log2(sum)) + 1}`);
        } else out.add('fse-weights');
      }
    }
    at += type === 1 ? 1 : size;
    if (h & 1) break;
  }
  assert.equal(at, f.length, 'frame walked to its end');
  return out;
}

test('zstd blocks: the corpus reaches every sequences table mode but repeat; for literals 1 and 4 Huffman streams (size formats 0, 2, 3), direct and FSE weights', () => {
  const has = (name, ...features) => {
    const got = frameFeatures(packed.find((p) => p.name === name).zst[3]);
    for (const x of features) assert.ok(got.has(x), `${name}: ${x} not in ${[...got]}`);
  };
  has('letters 700', 'huf-1stream');
  has('letters 1200', 'huf-4streams-sf2'); // (4 streams start at 1024 literals, so never Size_Format 1)
  has('letters 10000', 'huf-4streams-sf2');
  has('letters 100000', 'huf-4streams-sf3');
  has('Fibonacci byte frequencies', 'huf-4streams-sf3');
  has('sparse alphabet 0..40, 200..255', 'fse-weights');
  has('mnist-mlp.f32.bin', 'fse-weights', 'huf-4streams-sf3');
  has('zeros 1 MiB', 'rle-block');
  has('random 200 KiB', 'raw-block');
  // sequences: predefined, RLE and fitted FSE tables for each of LL, OF, ML somewhere in the corpus
  const all = new Set(packed.flatMap((p) => LEVELS.flatMap((l) => [...frameFeatures(p.zst[l])])));
  for (const k of ['LL', 'OF', 'ML']) for (const m of ['predefined', 'rle', 'fse']) assert.ok(all.has(`${k}-${m}`), `${k}-${m} never used`);
  assert.ok(!['LL', 'OF', 'ML'].some((k) => all.has(`${k}-repeat`)));
});

test('Huffman code lengths: optimal when the limit does not bind, 11 bits deep and complete when it does', () => {
  const counts = (list) => { const c = new Uint32Array(256); list.forEach((v, s) => { c[s] = v; }); return c; };
  const kraft = (lens) => lens.reduce((a, l) => a + (l ? 2 ** -l : 0), 0);
  assert.deepEqual(Array.from(huffmanLengths(counts([1, 1, 2, 4])).subarray(0, 4)), [3, 3, 2, 1]);
  assert.deepEqual(Array.from(huffmanLengths(counts([5, 5])).subarray(0, 2)), [1, 1]);
  const deep = huffmanLengths(counts(fib)); // unlimited: 23 bits for the rarest symbols
  assert.equal(Math.max(...deep), 11);
  assert.equal(kraft(deep), 1);
  assert.ok(deep.subarray(0, 24).every((l) => l >= 1));
  const all = huffmanLengths(new Uint32Array(256).map((_, s) => 1 + s * s));
  assert.equal(kraft(all), 1);
  assert.ok(Math.max(...all) <= 11);
});

// ------------------------------------------------------------------ ratios

const ratio = (raw, c) => raw.length / c.length;

test('compression is real: text >= 2x, zeros >= 100x, repetitive data much more', () => {
  const get = (n) => packed.find((p) => p.name === n);
  for (const n of ['text 300 KB', 'text 128 KiB + 1']) {
    assert.ok(ratio(get(n).raw, get(n).lz4) >= 2, `${n}: lz4 ${ratio(get(n).raw, get(n).lz4).toFixed(2)}`);
    for (const l of LEVELS) assert.ok(ratio(get(n).raw, get(n).zst[l]) >= 2.5, `${n}: zstd ${l} ${ratio(get(n).raw, get(n).zst[l])}`);
  }
  const z = get('zeros 1 MiB');
  assert.ok(ratio(z.raw, z.lz4) >= 100, `zeros lz4 ${ratio(z.raw, z.lz4)}`);
  for (const l of LEVELS) assert.ok(ratio(z.raw, z.zst[l]) >= 10000, `zeros zstd ${l}`);
  const sparse = get('sparse f32 (90% zero)');
  assert.ok(ratio(sparse.raw, sparse.lz4) >= 2, `sparse lz4 ${ratio(sparse.raw, sparse.lz4)}`);
  assert.ok(ratio(sparse.raw, sparse.zst[3]) >= 2, `sparse zstd ${ratio(sparse.raw, sparse.zst[3])}`);
  // higher levels never lose to lower ones by much on text
  const t = get('text 300 KB');
  assert.ok(t.zst[19].length <= t.zst[1].length, 'level 19 <= level 1 on text');
});

test('MNIST weights: ratio and speed per encoder and level (reported)', (t) => {
  const lines = [];
  const report = (label, fn) => {
    const out = fn(); // also warms up the JIT
    // repeat until 100 ms have passed, for a measurable time even for the fast LZ4 encoder
    const cpu0 = process.cpuUsage(), t0 = performance.now();
    let runs = 0;
    do { fn(); runs++; } while (performance.now() - t0 < 100);
    const ms = (performance.now() - t0) / runs;
    const cpuMs = process.cpuUsage(cpu0).user / 1000 / runs; // CPU time: steadier than wall time on a busy machine
    const mbs = (t) => (mnist.length / 1e6 / (t / 1000)).toFixed(1);
    lines.push(`${label}: ${mnist.length} -> ${out.length} bytes, ratio ${ratio(mnist, out).toFixed(3)}, `
      + `${mbs(cpuMs)} MB/s CPU (${mbs(ms)} MB/s wall)`);
    return out;
  };
  report('lz4', () => lz4CompressPrependSize(mnist));
  const z = LEVELS.map((l) => report(`zstd level ${l}`, () => zstdCompress(mnist, { level: l })));
  for (const line of lines) t.diagnostic(line);
  // float32 weights barely repeat; zstd's Huffman literals still find the redundant exponent bytes
  for (const out of z) assert.ok(ratio(mnist, out) > 1.05, `zstd on MNIST weights ${ratio(mnist, out)}`);
});

// ------------------------------------------------------------------ our own C decoders, through .apr v1

const rt = await createRuntime();

/** A LinearRegression payload (spec §3.2): Some(coefficients), intercept, fit_intercept. */
const linearPayload = (coefBytes, intercept = 0.5) =>
  concat(Uint8Array.of(1), u64le(coefBytes.length / 4), coefBytes, f32bytes([intercept]), Uint8Array.of(1));

const COMPRESSORS = [
  ['lz4', 3, lz4CompressPrependSize],
  ['zstd level 3', 1, (b) => zstdCompress(b, { level: 3 })],
  ['zstd level 19', 2, (b) => zstdCompress(b, { level: 19 })],
  ['zstd level 1', 1, (b) => zstdCompress(b, { level: 1 })],
];

test('.apr v1 LinearRegression with our LZ4 / zstd payloads loads through src/lz4.c, src/zstd.c and predicts like the uncompressed file', () => {
  const coefs = [
    ['2 coefficients', f32bytes([2, -1])],
    ['MNIST layer-1 weights as 401408 coefficients', mnist.subarray(12, 12 + 784 * 512 * 4)],
    ['sparse', packed.find((p) => p.name.startsWith('sparse')).raw],
    ['quantized', packed.find((p) => p.name.startsWith('quantized')).raw],
  ];
  const used = new Set(); // what the C decoder had to handle
  for (const [label, coef] of coefs) {
    const payload = linearPayload(coef);
    const n = coef.length / 4;
    const x = new Float32Array(n).map((_, i) => ((i * 7919) % 13) - 6);
    const want = rt.loadFromBytes(aprV1({ type: APR_TYPE.LinearRegression, payload })).predict(x);
    for (const [name, compression, fn] of COMPRESSORS) {
      const packedPayload = fn(payload);
      if (compression !== 3) frameFeatures(packedPayload).forEach((x) => used.add(x));
      const file = aprV1({ type: APR_TYPE.LinearRegression, payload: packedPayload, compression, rawSize: payload.length });
      const m = rt.loadFromBytes(file, { expect: 'LinearRegression' });
      assert.equal(m.info.inputSize, n, `${label} ${name}`);
      assert.deepEqual(Array.from(m.predict(x)), Array.from(want), `${label} ${name}`);
      m.dispose?.();
    }
  }
  const tables = ['LL', 'OF', 'ML'].flatMap((k) => [`${k}-fse`, `${k}-rle`, `${k}-predefined`]);
  for (const x of ['huf-4streams-sf3', 'fse-weights', 'raw-lits', ...tables]) assert.ok(used.has(x), `${x}: ${[...used]}`);
  // with a content checksum, which src/zstd.c verifies
  const payload = linearPayload(mnist.subarray(12, 12 + 4000 * 4));
  const checked = zstdCompress(payload, { checksum: true });
  assert.equal(rt.loadFromBytes(aprV1({ type: 1, payload: checked, compression: 1, rawSize: payload.length })).info.inputSize, 4000);
  checked[checked.length - 2] ^= 0x10;
  assert.throws(() => rt.loadFromBytes(aprV1({ type: 1, payload: checked, compression: 1, rawSize: payload.length })), /checksum/);
  // the spec's y = 2 x0 - x1 + 0.5, exactly
  const tiny = linearPayload(f32bytes([2, -1]));
  for (const [name, compression, fn] of COMPRESSORS) {
    const m = rt.loadFromBytes(aprV1({ type: 1, payload: fn(tiny), compression, rawSize: tiny.length }));
    assert.deepEqual(Array.from(m.predictBatch([1, 1, 3, -2, 0, 0], 3)), [1.5, 8.5, 0.5], name);
  }
});

test('.apr v1 NeuralSequential MNIST MLP with our compressed payloads predicts bit-identically to mnist-mlp.f32.bin', () => {
  const net = parseBin(mnist);
  const payload = concat(bincodeF32s(net.w1), bincodeF32s(net.b1), bincodeF32s(net.w2), bincodeF32s(net.b2));
  const xs = new Float32Array(784 * 8).map((_, i) => ((i * 31) % 256) / 255);
  const want = rt.loadFromBytes(mnist).predictBatch(xs, 8);
  for (const [name, compression, fn] of COMPRESSORS) {
    const m = rt.loadFromBytes(aprV1({ type: APR_TYPE.NeuralSequential, payload: fn(payload), compression, rawSize: payload.length }));
    assert.deepEqual(new Uint8Array(m.predictBatch(xs, 8).buffer), new Uint8Array(want.buffer), name);
    m.dispose?.();
  }
});
