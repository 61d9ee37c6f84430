#!/usr/bin/env node
// tools/unicode/gen.mjs — writes src/base/unicode_tables.c, the Unicode data of the WordPiece
// tokenizer, each table at the version Hugging Face's Rust `tokenizers` uses (see
// ../shared/specs/bert-encoder.md §3.1). `make` does not run this: the output is committed.
//
//   node tools/unicode/gen.mjs [--check]      (--check: compare with the committed file, exit 1 if stale)
//
// Inputs (all pinned, all from Debian packages or Node itself):
//   - crate unicode_categories 0.1.1 (Debian librust-unicode-categories-dev), src/tables.rs:
//     Cc, Cf, Mn and the seven P* categories at Unicode 8.0.0, as `tokenizers` links them;
//   - Debian unicode-data 15.0.0 (/usr/share/unicode): UnicodeData.txt's canonical decompositions
//     and combining classes, kept only for code points DerivedAge.txt says were assigned by 9.0
//     (crate unicode-normalization-alignments 0.1.12 carries Unicode 9.0.0 tables; decompositions
//     and combining classes never change once assigned);
//   - lowercase: String.prototype.toLowerCase of each single code point under Node's ICU, which
//     must be Unicode 17.0 (the Rust std of npm tokenizers 0.23.2): full default mapping, no
//     context (a lone U+03A3 maps to U+03C3). The one multi-character result, U+0130, is left to
//     the caller (mlrt__uni_lower returns U+0069 and mlrt__uni_lower_extra the U+0307).
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';

const UC = '/usr/share/cargo/registry/unicode_categories-0.1.1/src/tables.rs';
const UD = '/usr/share/unicode';
const OUT = new URL('../../src/base/unicode_tables.c', import.meta.url);
const hex = (n, w = 4) => n.toString(16).toUpperCase().padStart(w, '0');
const fail = (msg) => { console.error(`gen.mjs: ${msg}`); process.exit(2); };

if (process.versions.unicode !== '17.0') fail(`Node's ICU has Unicode ${process.versions.unicode}, need 17.0 for the lowercase table`);

// ---------------------------------------------------------------- unicode_categories (8.0)
const ucText = readFileSync(UC, 'utf8');
function ucTable(name) {
  const m = ucText.match(new RegExp(`pub static ${name} : &'static \\[char\\] = &\\[([^\\]]*)\\]`));
  if (!m) fail(`${UC}: no table ${name}`);
  return [...m[1].matchAll(/'\\u\{([0-9A-F]+)\}'/g)].map((x) => parseInt(x[1], 16));
}
const cc = ucTable('OTHER_CONTROL'), cf = ucTable('OTHER_FORMAT'), mn = ucTable('MARK_NONSPACING');
const punct = ['PUNCTUATION_CONNECTOR', 'PUNCTUATION_DASH', 'PUNCTUATION_CLOSE', 'PUNCTUATION_FINAL_QUOTE',
  'PUNCTUATION_INITIAL_QUOTE', 'PUNCTUATION_OTHER', 'PUNCTUATION_OPEN'].flatMap(ucTable);
// Co is matched by ranges in the crate's code, not its table (lib.rs is_other_private_use)
const co = [[0xE000, 0xF8FF], [0xF0000, 0xFFFFD], [0x100000, 0x10FFFD]];
if (cc.length !== 65 || cf.length !== 150 || mn.length !== 1567 || punct.length !== 717) {
  fail(`unexpected unicode_categories sizes: Cc ${cc.length} Cf ${cf.length} Mn ${mn.length} P ${punct.length}`);
}

// sorted code points -> [first, last] ranges
function ranges(cps) {
  const s = [...new Set(cps)].sort((a, b) => a - b), out = [];
  for (const c of s) {
    const last = out[out.length - 1];
    if (last && last[1] + 1 === c) last[1] = c; else out.push([c, c]);
  }
  return out;
}
const other = ranges([...cc, ...cf]); // Co: three whole ranges, tested in base/unicode.c

// ranges packed as start << 11 | (length - 1): lengths above 2048 are split
// ranges [first, last, flag] as three arrays: the 16 low bits of the start, a byte (length - 1 in
// the bits below flagBit, the flag in flagBit), and where each plane's ranges begin (18 entries);
// a range never crosses a plane and is split when longer than the byte allows
function pack16(rs, flagBit) {
  const lo = [], len = [], at = [];
  const max = flagBit ? 1 << flagBit : 256;
  for (let [a, b, flag = 0] of rs) {
    while (a <= b) {
      const end = Math.min(b, a + max - 1, (a | 0xffff));
      while (at.length <= a >> 16) at.push(lo.length);
      lo.push(a & 0xffff);
      len.push((flag ? 1 << flagBit : 0) | (end - a));
      a = end + 1;
    }
  }
  while (at.length <= 17) at.push(lo.length);
  return { lo, len, at };
}
const cPacked = (name, { lo, len, at }) => `${cSums('uint16_t', `${name}_lo`, lo, 10, h16)}${cArray('uint8_t', `${name}_len`, len, 16, h8)}${cArray('uint16_t', `${name}_at`, at, 9, dec)}`;

function packRanges(rs) {
  const out = [];
  for (let [a, b] of rs) {
    while (b - a + 1 > 2048) { out.push(a * 2048 + 2047); a += 2048; }
    out.push(a * 2048 + (b - a));
  }
  return out;
}

// ---------------------------------------------------------------- UnicodeData 15.0 restricted to 9.0
const age = new Map(); // cp -> [major, minor]
for (const line of readFileSync(`${UD}/DerivedAge.txt`, 'utf8').split('\n')) {
  const m = line.match(/^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*(\d+)\.(\d+)/);
  if (!m) continue;
  const a = parseInt(m[1], 16), b = m[2] ? parseInt(m[2], 16) : a;
  for (let c = a; c <= b; c++) age.set(c, [+m[3], +m[4]]);
}
if (!readFileSync(`${UD}/DerivedAge.txt`, 'utf8').startsWith('# DerivedAge-15.0.0.txt')) fail('DerivedAge.txt is not 15.0.0');
const in9 = (c) => { const v = age.get(c); return v !== undefined && (v[0] < 9 || (v[0] === 9 && v[1] === 0)); };
const decomp = new Map(), ccc = new Map();
for (const line of readFileSync(`${UD}/UnicodeData.txt`, 'utf8').split('\n')) {
  if (!line) continue;
  const f = line.split(';');
  const c = parseInt(f[0], 16);
  if (!in9(c)) continue;
  if (+f[3]) ccc.set(c, +f[3]);
  if (f[5] && !f[5].startsWith('<')) decomp.set(c, f[5].split(' ').map((x) => parseInt(x, 16)));
}
// every part of a 9.0 decomposition is itself a 9.0 character
for (const [c, d] of decomp) for (const x of d) if (!in9(x)) fail(`U+${hex(c)} decomposes to U+${hex(x)}, not in 9.0`);
if (decomp.size !== 2060) fail(`${decomp.size} canonical decompositions in 9.0, expected 2060`);

// Single-step decompositions: (first, second?) where second is a combining mark from a short list.
const seconds = [...new Set([...decomp.values()].filter((d) => d.length === 2).map((d) => d[1]))].sort((a, b) => a - b);
const secondsBmp = seconds.filter((c) => c <= 0xffff).length;
if (seconds.some((c) => c > 0x1ffff)) fail('a second character beyond plane 1');
if (seconds.length > 255) fail(`${seconds.length} distinct second characters`);
// CJK compatibility ideographs (singletons) in two dense arrays, the others in the sorted list
const CJK = [[0xF900, 0xFADA], [0x2F800, 0x2FA1E]];
const inCjk = (c) => CJK.some(([a, b]) => c >= a && c < b);
const cjkValues = [], cjkAstral = [];
for (const [a, b] of CJK) for (let c = a; c < b; c++) {
  const d = decomp.get(c);
  if (d && d.length !== 1) fail(`U+${hex(c)}: not a singleton`);
  if (!d && decomp.has(c)) fail('?');
  cjkValues.push(d ? d[0] & 0xffff : 0);
  cjkAstral.push(d ? d[0] >> 16 : 0);
}
for (const p of cjkAstral) if (p !== 0 && p !== 2) fail('a CJK compatibility ideograph outside planes 0 and 2');
for (const [c] of decomp) if (!inCjk(c) && ((c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F))) fail(`U+${hex(c)} outside the dense ranges`);
const cjkBits = [];
for (let i = 0; i < cjkAstral.length; i += 8) cjkBits.push(cjkAstral.slice(i, i + 8).reduce((v, p, k) => v | (p ? 1 << k : 0), 0));
const keys = [...decomp.keys()].filter((c) => !inCjk(c)).sort((a, b) => a - b);
// keys as their low byte under a block table; the first character as a byte that says, with the
// mode in nfd_mark, where it is: mode 0: in the key's own block of 256, mode 1: in U+0000..00FF,
// mode 2: nfd_other[byte]; nfd_mark = mode * 85 + (the second's index + 1, or 0 for none)
const nfdLo = [], nfdFirst = [], nfdMark = [], nfdBlocks = [], nfdOther = []; // blocks: cp >> 8 << 16 | first entry
if (seconds.length > 84) fail(`${seconds.length} distinct second characters (84 fit)`);
for (const k of keys) {
  const d = decomp.get(k);
  if (!nfdBlocks.length || nfdBlocks[nfdBlocks.length - 1] >>> 16 !== k >> 8) {
    if (k >> 8 > 0xffff || nfdLo.length > 0xffff) fail('NFD blocks overflow');
    nfdBlocks.push(((k >> 8) << 16 | nfdLo.length) >>> 0);
  }
  nfdLo.push(k & 0xff);
  let mode, byte;
  if (d[0] >> 8 === k >> 8) mode = 0, byte = d[0] & 0xff;
  else if (d[0] < 0x100) mode = 1, byte = d[0];
  else {
    mode = 2;
    if (!nfdOther.includes(d[0])) nfdOther.push(d[0]);
    byte = nfdOther.indexOf(d[0]);
    if (byte > 255 || d[0] > 0xffff) fail(`U+${hex(k)}: first U+${hex(d[0])} does not fit`);
  }
  nfdFirst.push(byte);
  nfdMark.push(mode * 85 + (d.length === 2 ? seconds.indexOf(d[1]) + 1 : 0));
}
nfdBlocks.push(0xffff0000 + nfdLo.length); // the end

// the longest full decomposition (mlrt__uni_nfd writes at most MLRT__UNI_NFD_MAX characters)
const full = (c) => (decomp.has(c) ? decomp.get(c).flatMap(full) : [c]);
const longest = Math.max(...[...decomp.keys()].map((k) => full(k).length));
if (longest > 4) fail(`a full decomposition of ${longest} characters`);

// Mn ranges split where the combining class turns 0 or not: start << 11 | class0 << 10 | (length - 1)
const mnSet = new Set(mn), mnRuns = [];
for (const c of [...mnSet].sort((a, b) => a - b)) {
  const zero = ccc.has(c) ? 0 : 1, last = mnRuns[mnRuns.length - 1];
  if (last && last[1] + 1 === c && last[2] === zero && c - last[0] < 1023) last[1] = c;
  else mnRuns.push([c, c, zero]);
}
// combining classes of the characters strip_accents keeps (not Mn in 8.0) as runs of one class:
// start << 11 | (length - 1), and the class per run
const cccRuns = [];
for (const c of [...ccc.keys()].filter((x) => !mnSet.has(x)).sort((a, b) => a - b)) {
  const last = cccRuns[cccRuns.length - 1];
  if (last && last[1] + 1 === c && last[2] === ccc.get(c) && c - last[0] < 2047) last[1] = c;
  else cccRuns.push([c, c, ccc.get(c)]);
}

// ---------------------------------------------------------------- lowercase (17.0)
const lower = []; // [cp, lower]
let specials = 0;
for (let c = 0; c <= 0x10ffff; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  const l = String.fromCodePoint(c).toLowerCase();
  const cps = [...l].map((x) => x.codePointAt(0));
  if (cps.length === 1 && cps[0] === c) continue;
  if (cps.length !== 1) {
    if (c !== 0x130 || cps.length !== 2 || cps[0] !== 0x69 || cps[1] !== 0x307) fail(`U+${hex(c)} lowercases to ${cps.map((x) => hex(x))}`);
    specials++;
    lower.push([c, 0x69]);
    continue;
  }
  lower.push([c, cps[0]]);
}
if (specials !== 1) fail('U+0130 did not lowercase to i + U+0307');
// runs: cps c, c + stride, ... with the same delta (stride 1 or 2)
const lowerRuns = [];
for (const [c, l] of lower) {
  const last = lowerRuns[lowerRuns.length - 1], delta = l - c;
  if (last && last.delta === delta && last.len < 256 &&
      ((last.stride === 0 && (c - last.start === 1 || c - last.start === 2)) ||
       (last.stride && c === last.start + last.stride * last.len))) {
    if (last.stride === 0) last.stride = c - last.start;
    last.len++;
  } else lowerRuns.push({ start: c, len: 1, delta, stride: 0 });
}
for (const r of lowerRuns) if (!r.stride) r.stride = 1;
const deltas = [...new Set(lowerRuns.map((r) => r.delta))];
if (deltas.length > 255) fail('too many lowercase deltas');

// ---------------------------------------------------------------- Final_Sigma's context (17.0)
// Python's str.lower (sentence-transformers' do_lower_case) lowers a capital sigma to U+03C2 after a Cased
// character and not before one, Case_Ignorable characters skipped on both sides. One class per code point:
// 2 Case_Ignorable (first: a character can be both), 1 Cased, 0 neither. The Mn of 8.0 (the mn table) are
// Case_Ignorable, all but a few (case_mn_except), and left out: the run they fall in goes on over them. Stored as runs from U+0000, each a
// LEB128: the first length << 2 | class, then length << 1 | bit, the class being (previous + 1 + bit) % 3.
const CASED = /^\p{Cased}$/u, IGNORABLE = /^\p{Case_Ignorable}$/u;
const caseCtx = [], caseMnExcept = [];
{
  const mnAll = new Set(mn);
  const cls = (c) => { const s = String.fromCodePoint(c); return IGNORABLE.test(s) ? 2 : CASED.test(s) ? 1 : 0; };
  for (const c of mnAll) if (cls(c) !== 2) caseMnExcept.push(c), mnAll.delete(c); // Mn in 8.0, Mc since
  const leb = (v) => { do { caseCtx.push((v & 127) | (v >= 128 ? 128 : 0)); v = Math.floor(v / 128); } while (v); };
  let run = 0, k = cls(0), prev = -1;
  const put = () => { leb(prev < 0 ? run * 4 + k : run * 2 + ((k - prev + 2) % 3)); prev = k; };
  for (let c = 0; c <= 0x10ffff; c++) {
    if (mnAll.has(c)) { run++; continue; }
    const now = cls(c);
    if (now !== k) { put(); run = 0; k = now; }
    run++;
  }
  put();
  if (caseMnExcept.length !== 2) fail(`${caseMnExcept.length} Mn of 8.0 are not Case_Ignorable: base/unicode.c tests 2`);
}

// ---------------------------------------------------------------- output
function cArray(type, name, values, perLine, fmt, qual = 'const') {
  const lines = [];
  for (let i = 0; i < values.length; i += perLine) lines.push('    ' + values.slice(i, i + perLine).map(fmt).join(', ') + ',');
  return `${qual} ${type} ${name}[${values.length}] = {\n${lines.join('\n')}\n};\n`;
}
// A table stored as differences: name_d[i] = name[i] - name[i - 1] modulo the type's range (name_d[0] =
// name[0]), which gzip shrinks far more than the values (about 1.2 KB of mlrt.wasm gzipped); name itself
// is zero-initialised and mlrt__uni_tables_sum adds the differences up into it. FNV-1a of every such table's
// values, little-endian, lets the tests check the sums.
const sums = [];
let fnv = 0x811c9dc5;
function cSums(type, name, values, perLine, fmt) {
  const bytes = { uint8_t: 1, uint16_t: 2, uint32_t: 4 }[type], mod = 2 ** (8 * bytes);
  const d = values.map((v, i) => (i ? (((v - values[i - 1]) % mod) + mod) % mod : v));
  for (const v of values) for (let k = 0; k < bytes; k++) fnv = Math.imul(fnv ^ (Math.floor(v / 2 ** (8 * k)) & 255), 0x01000193) >>> 0;
  sums.push({ bits: 8 * bytes, name, n: values.length });
  return `${cArray(type, `${name.replace('mlrt__uni_', '')}_d`, d, perLine, fmt, 'static const')}${type} ${name}[${values.length}];\n`;
}
const h32 = (v) => `0x${hex(v >>> 0, 8)}`, h16 = (v) => `0x${hex(v)}`, h8 = (v) => `0x${hex(v, 2)}`, dec = (v) => String(v);
const text = `/* base/unicode_tables.c — GENERATED by tools/unicode/gen.mjs; do not edit. Regenerate with
 *   node tools/unicode/gen.mjs
 * (needs Debian librust-unicode-categories-dev and unicode-data, and Node 20 whose ICU has Unicode 17.0).
 *
 * Each table is at the Unicode version Hugging Face's Rust \`tokenizers\` links (spec bert-encoder.md §3.1):
 *   other, mn, punct   Unicode 8.0.0   crate unicode_categories 0.1.1 (Cc+Cf+Co, Mn, P*)
 *   nfd_*, ccc         Unicode 9.0.0   UnicodeData 15.0.0 restricted to code points assigned by 9.0
 *                                      (DerivedAge), as crate unicode-normalization-alignments 0.1.12
 *   lower              Unicode 17.0.0  the Rust std of npm tokenizers 0.23.2 (U+0130's i + U+0307: see unicode.c)
 *   case_ctx           Unicode 17.0.0  Cased and Case_Ignorable (Node's ICU), for do_lower_case's Final_Sigma
 * Layouts are described in base/unicode.c, which reads them. */
#include "base.h"

/* Cc and Cf (${cf.length} code points). Range tables: the ranges of plane p are entries [_at[p], _at[p + 1]),
 * from p << 16 | _lo[i], _len[i] + 1 code points (Mn: (_len[i] & 127) + 1, and bit 7 set when their
 * combining class is 0) */
${cPacked('mlrt__uni_other', pack16(other, 0))}
/* Mn, ${mn.length} code points */
${cPacked('mlrt__uni_mn', pack16(mnRuns, 7))}
/* P* (Pc Pd Ps Pe Pi Pf Po), ${punct.length} code points */
${cPacked('mlrt__uni_punct', pack16(ranges(punct), 0))}
/* Canonical decompositions, one step, of the ${keys.length} other code points, sorted. The keys of block b
 * (code points b << 8 ..) are entries [nfd_block[i] & 0xffff, nfd_block[i + 1] & 0xffff) where
 * nfd_block[i] >> 16 == b (the last block is the end), key = b << 8 | nfd_lo. The decomposition:
 * with mode = nfd_mark / 85, first = b << 8 | nfd_first (mode 0), nfd_first (mode 1) or
 * nfd_other[nfd_first] (mode 2); then nfd_second[nfd_mark % 85 - 1] unless nfd_mark % 85 is 0. */
${cSums('uint32_t', 'mlrt__uni_nfd_block', nfdBlocks, 6, h32)}
${cSums('uint8_t', 'mlrt__uni_nfd_lo', nfdLo, 16, h8)}
${cSums('uint8_t', 'mlrt__uni_nfd_first', nfdFirst, 16, h8)}
${cSums('uint16_t', 'mlrt__uni_nfd_other', nfdOther, 10, h16)}
${cArray('uint8_t', 'mlrt__uni_nfd_mark', nfdMark, 16, dec)}
${cSums('uint16_t', 'mlrt__uni_nfd_second', seconds.map((c) => c & 0xffff), 10, h16)}
const uint8_t mlrt__uni_nfd_second_bmp = ${secondsBmp}; /* the seconds from this index on are in plane 1 */

/* The CJK compatibility ideographs U+F900..FAD9 then U+2F800..2FA1D: each one's decomposition, a
 * single character, its 16 low bits (0: none) and in cjk_astral bit i % 8 of byte i / 8 whether it is in plane 2 */
${cSums('uint16_t', 'mlrt__uni_cjk_compat', cjkValues, 10, h16)}
${cArray('uint8_t', 'mlrt__uni_cjk_astral', cjkBits, 16, h8)}
/* Canonical combining classes other than 0 of the characters that are not Mn: runs of one class,
 * start << 11 | (length - 1), and the class */
${cArray('uint32_t', 'mlrt__uni_ccc_run', cccRuns.map(([a, b]) => a * 2048 + (b - a)), 6, h32)}
${cArray('uint8_t', 'mlrt__uni_ccc_class', cccRuns.map((r) => r[2]), 16, dec)}
/* Lowercase: runs start, start + stride, ... (length) mapping c -> c + delta:
 * lower_run = start << 11 | (stride - 1) << 8 | (length - 1), delta = lower_delta[lower_index] */
${cSums('uint32_t', 'mlrt__uni_lower_run', lowerRuns.map((r) => r.start * 2048 + (r.stride - 1) * 256 + (r.len - 1)), 6, h32)}
${cArray('uint8_t', 'mlrt__uni_lower_index', lowerRuns.map((r) => deltas.indexOf(r.delta)), 16, dec)}
${cArray('int32_t', 'mlrt__uni_lower_delta', deltas, 8, dec)}
/* Final_Sigma's classes (2 Case_Ignorable, 1 Cased, 0 neither; the Mn of 8.0 but case_mn_except left out): runs from U+0000, LEB128s:
 * the first length << 2 | class, then length << 1 | bit, the class (previous + 1 + bit) % 3 */
${cArray('uint8_t', 'mlrt__uni_case_ctx', caseCtx, 16, h8)}const size_t mlrt__uni_case_ctx_n = ${caseCtx.length};
/* the Mn of 8.0 that are not Case_Ignorable in 17.0 (the table holds them) */
${cArray('uint32_t', 'mlrt__uni_case_mn_except', caseMnExcept, 8, h32)}
const size_t mlrt__uni_counts[3] = {${[nfdBlocks.length - 1, cccRuns.length, lowerRuns.length].join(', ')}}; /* nfd blocks, ccc, lower */

/* The tables stored as differences (_d), summed into place; base/unicode.c calls this once, before its first lookup. */
${[8, 16, 32].map((b) => `static void sum${b}(uint${b}_t *t, const uint${b}_t *d, size_t n) {
    for (size_t i = 0; i < n; i++) t[i] = (uint${b}_t)((i ? t[i - 1] : 0u) + d[i]);
}
`).join('')}
void mlrt__uni_tables_sum(void) {
${sums.map((t) => `    sum${t.bits}(${t.name}, ${t.name.replace('mlrt__uni_', '')}_d, ${t.n});`).join('\n')}
}

/* For the tests: FNV-1a of the summed tables' values (little-endian), and what the sums must give. */
#define FNV_OF(t, bytes) for (size_t i = 0; i < sizeof t / sizeof *t; i++) \\
        for (unsigned k = 0; k < bytes; k++) h = (h ^ (uint8_t)(t[i] >> 8 * k)) * 0x01000193u
uint32_t mlrt__uni_tables_fnv(void) {
    uint32_t h = 0x811c9dc5u;
${sums.map((t) => `    FNV_OF(${t.name}, ${t.bits / 8});`).join('\n')}
    return h;
}
const uint32_t mlrt__uni_tables_fnv_want = 0x${hex(fnv, 8)};
`;
if (process.argv.includes('--check')) {
  const now = readFileSync(OUT, 'utf8');
  if (now !== text) { console.error('src/base/unicode_tables.c is stale: run node tools/unicode/gen.mjs'); process.exit(1); }
  console.log('unicode_tables.c is up to date');
} else {
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT.pathname}: other ${other.length} ranges, Mn ${mnRuns.length}, P ${ranges(punct).length}, ` +
    `NFD ${keys.length} (${seconds.length} second chars), ccc ${cccRuns.length} runs, lower ${lower.length} in ${lowerRuns.length} runs, case context ${caseCtx.length} bytes`);
}
