#!/usr/bin/env node
// size.mjs — where mlrt.wasm's bytes go. Prints, in one Markdown report:
//   1. each build's size, raw and gzipped (-9), against the budget (256 KB, 100 KB gzipped);
//   2. mlrt.wasm's bytes per layer of src/ (base, codecs, ir, formats, kernels, model, api), code and
//      data apart, with the Unicode tables (base/unicode_tables.c) as a line of their own, and what
//      each layer adds to the gzipped module; with --files, the same per source file.
//
// Code: build/size/mlrt.wasm is mlrt.wasm linked and optimised the same way but keeping its
// function names (--profiling-funcs, wasm-opt --debuginfo); each function's body size comes from
// its code section, and its file from the objects' symbols (llvm-nm: static functions included).
// Data: each object's data segments, less what the module does not store: zero-initialised
// variables (.bss) and runs of 8 or more zero bytes, which wasm-opt's memory packing leaves out.
// What no file claims (the libc and allocator, the toolchain's glue) is "toolchain".
// "gz": what the module's gzipped size would lose without that layer's (or file's) code and data,
// measured on their bytes gzipped together (gzip is not additive: the rows do not sum to the total).
//
//   make build/size/mlrt.wasm && node bench/size.mjs [--files] [--json FILE]
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILDS = ['mlrt.wasm', 'mlrt-relaxed.wasm', 'mlrt-scalar.wasm', 'mlrt-threads.wasm', 'mlrt-wasi.wasm'];
const BUDGET = { raw: 256 * 1024, gzip: 100 * 1024 };
const LAYERS = ['base', 'codecs', 'ir', 'formats', 'kernels', 'model', 'api'];

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** Sections of a wasm binary: [{ id, start, end }] (start: the payload after the size). */
function sections(bytes) {
  let p = 8;
  const out = [];
  while (p < bytes.length) {
    const id = bytes[p++];
    const [size, q] = leb(bytes, p);
    out.push({ id, start: q, end: q + size });
    p = q + size;
  }
  return out;
}

function leb(bytes, p) {
  let v = 0, shift = 0, b;
  do { b = bytes[p++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return [v, p];
}

/** Function index -> body size, and index -> name (from the custom "name" section). */
export function functionSizes(bytes) {
  const secs = sections(bytes);
  let imported = 0;
  const imp = secs.find((s) => s.id === 2);
  if (imp) { // count imported functions: they come first in the index space
    let [n, p] = leb(bytes, imp.start);
    for (; n > 0; n--) {
      let len;
      [len, p] = leb(bytes, p); p += len;           // module
      [len, p] = leb(bytes, p); p += len;           // field
      const kind = bytes[p++];
      if (kind === 0) { [, p] = leb(bytes, p); imported++; }
      else if (kind === 1) { p++; const [flags, q] = leb(bytes, p); p = q; [, p] = leb(bytes, p); if (flags & 1) [, p] = leb(bytes, p); }
      else if (kind === 2) { const [flags, q] = leb(bytes, p); p = q; [, p] = leb(bytes, p); if (flags & 1) [, p] = leb(bytes, p); }
      else if (kind === 3) { p += 2; }
    }
  }
  const sizes = new Map();
  const code = secs.find((s) => s.id === 10);
  let [n, p] = leb(bytes, code.start);
  for (let i = 0; i < n; i++) {
    const [size, q] = leb(bytes, p);
    sizes.set(imported + i, size + (q - p));
    p = q + size;
  }
  const names = new Map();
  for (const s of secs.filter((x) => x.id === 0)) {
    let [len, q] = leb(bytes, s.start);
    if (new TextDecoder().decode(bytes.subarray(q, q + len)) !== 'name') continue;
    q += len;
    while (q < s.end) {
      const kind = bytes[q++];
      const [size, r] = leb(bytes, q);
      if (kind === 1) {
        let [count, t] = leb(bytes, r);
        for (; count > 0; count--) {
          let idx, nl;
          [idx, t] = leb(bytes, t);
          [nl, t] = leb(bytes, t);
          names.set(idx, new TextDecoder().decode(bytes.subarray(t, t + nl)));
          t += nl;
        }
      }
      q = r + size;
    }
  }
  const data = secs.filter((s) => s.id === 11).reduce((a, s) => a + (s.end - s.start), 0);
  return { sizes, names, data, total: bytes.length };
}

function objects(dir) {
  const out = [];
  (function walk(d) {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith('.o')) out.push(p);
    }
  })(dir);
  return out;
}

/** The sources in link order (the Makefile's CORE: BASE CODECS IR FORMATS KERNELS MODEL API). */
function linkOrder() {
  const mk = readFileSync(join(ROOT, 'Makefile'), 'utf8').replace(/\\\n/g, ' ');
  const vars = mk.match(/^CORE\s*=(.*)$/m)[1].match(/\$\((\w+)\)/g).map((v) => v.slice(2, -1));
  return vars.flatMap((v) => mk.match(new RegExp(`^${v}\\s*=(.*)$`, 'm'))[1].trim().split(/\s+/).map((f) => f.replace(/^src\//, '')));
}

/** function name -> src file (e.g. 'kernels/dense.c'), from the objects' symbols (llvm-nm: static
 * functions included). A static name in several files is numbered in the module's names in link
 * order ("describe", "describe.1", ...): name.k goes to the k-th of those files in link order. */
function functionFiles(objDir) {
  const files = new Map(); // name -> [file]
  for (const o of objects(objDir)) {
    const file = relative(objDir, o).replace(/\.o$/, '.c');
    for (const line of execFileSync('llvm-nm-14', ['--defined-only', o], { encoding: 'utf8' }).split('\n')) {
      const [, type, name] = line.trim().split(/\s+/);
      if (!type || !/[Tt]/.test(type)) continue;
      files.set(name, [...(files.get(name) ?? []), file]);
    }
  }
  const order = linkOrder();
  const fnFile = new Map();
  for (const [name, list] of files) {
    list.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    list.forEach((file, k) => fnFile.set(k ? `${name}.${k}` : name, file));
  }
  return fnFile;
}

/** The payloads of a wasm module's (or object's) data segments. */
function dataSegments(bytes) {
  const out = [];
  for (const sec of sections(bytes).filter((x) => x.id === 11)) {
    let [n, p] = leb(bytes, sec.start);
    for (; n > 0; n--) {
      let flags, size;
      [flags, p] = leb(bytes, p);
      if (flags === 2) [, p] = leb(bytes, p);               // memory index
      if (flags !== 1) { while (bytes[p] !== 0x0b) p++; p++; } // the offset expression (i32.const k; end)
      [size, p] = leb(bytes, p);
      out.push(bytes.subarray(p, p + size));
      p += size;
    }
  }
  return out;
}

/** seg without its runs of 8 or more zero bytes (memory packing stores no such run). */
function stored(seg) {
  const out = [];
  let run = 0;
  for (const c of seg) {
    if (c === 0) { run++; continue; }
    if (run && run < 8) for (; run; run--) out.push(0);
    run = 0;
    out.push(c);
  }
  if (run && run < 8) for (; run; run--) out.push(0);
  return Buffer.from(out);
}

/** src file -> its data as the module stores it (constants, tables, strings), from the objects. */
function dataFiles(objDir) {
  const data = new Map();
  for (const o of objects(objDir))
    data.set(relative(objDir, o).replace(/\.o$/, '.c'), Buffer.concat(dataSegments(readFileSync(o)).map(stored)));
  return data;
}

const layerOf = (file) => (/_tables\.c$/.test(file) ? 'tables' : LAYERS.includes(file.split('/')[0]) ? file.split('/')[0] : 'toolchain');

/** Rows of code and data bytes (and gzip cost) per layer, or per file (byFile). */
export function layerBytes(sizedWasm, objDir, byFile = false) {
  const bytes = readFileSync(sizedWasm);
  const { sizes, names, data, total } = functionSizes(bytes);
  const fnFile = functionFiles(objDir), dataOf = dataFiles(objDir);
  const keyOf = (file) => (byFile ? file : layerOf(file));
  const rows = new Map(byFile ? [] : [...LAYERS, 'tables', 'toolchain'].map((l) => [l, { code: 0, data: 0, gz: 0 }]));
  const row = (k) => rows.get(k) ?? rows.set(k, { code: 0, data: 0, gz: 0 }).get(k);
  const pieces = []; // [key, bytes]: every function body, then every file's data
  const code = sections(bytes).find((x) => x.id === 10);
  let [n, p] = leb(bytes, code.start);
  const firstIdx = Math.min(...sizes.keys());
  for (let i = 0; i < n; i++) {
    const [size, q] = leb(bytes, p);
    const name = names.get(firstIdx + i) ?? '';
    const file = fnFile.get(name);
    const key = file ? keyOf(file) : 'toolchain';
    row(key).code += size + (q - p);
    pieces.push([key, bytes.subarray(q, q + size)]);
    p = q + size;
  }
  let claimed = 0;
  for (const [file, d] of dataOf) {
    row(keyOf(file)).data += d.length;
    claimed += d.length;
    pieces.push([keyOf(file), d]);
  }
  row('toolchain').data += Math.max(0, data - claimed);
  const gz = (keep) => gzipSync(Buffer.concat(pieces.filter(keep).map((x) => x[1])), { level: 9 }).length;
  const all = gz(() => true);
  for (const [key, r] of rows) r.gz = r.code + r.data ? all - gz((x) => x[0] !== key) : 0;
  return { rows, total, data };
}

function main() {
  const argv = process.argv.slice(2);
  const jsonOut = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : null;
  const report = { builds: {} };
  console.log('## Size\n');
  console.log(`| build | bytes | gzip -9 | of the budget (${kb(BUDGET.raw)} / ${kb(BUDGET.gzip)} gz) |`);
  console.log('|---|---:|---:|---|');
  for (const b of BUILDS) {
    const p = join(ROOT, 'wasm', b);
    if (!existsSync(p)) continue;
    const bytes = readFileSync(p), gz = gzipSync(bytes, { level: 9 }).length;
    report.builds[b] = { bytes: bytes.length, gzip: gz };
    const within = b === 'mlrt-wasi.wasm' ? '(CLI: not shipped to browsers)' : `${(100 * bytes.length / BUDGET.raw).toFixed(0)}% / ${(100 * gz / BUDGET.gzip).toFixed(0)}%${bytes.length > BUDGET.raw || gz > BUDGET.gzip ? ' **over**' : ''}`;
    console.log(`| ${b} | ${bytes.length.toLocaleString('en-US')} | ${gz.toLocaleString('en-US')} | ${within} |`);
  }
  const sized = join(ROOT, 'build/size/mlrt.wasm');
  if (!existsSync(sized)) {
    console.log('\n(bytes per layer: run `make build/size/mlrt.wasm` first)');
  } else {
    const byFile = argv.includes('--files');
    const { rows, total } = layerBytes(sized, join(ROOT, 'build/wasm-simd'), byFile);
    console.log(`\nmlrt.wasm by ${byFile ? 'file' : 'layer'} (from build/size/mlrt.wasm, ${total.toLocaleString('en-US')} bytes with its names section):\n`);
    console.log(`| ${byFile ? 'file' : 'layer'} | code | data | total | gz |`);
    console.log('|---|---:|---:|---:|---:|');
    const list = [...rows];
    if (byFile) list.sort((a, b) => b[1].gz - a[1].gz);
    for (const [key, { code, data, gz }] of list) {
      report[byFile ? 'files' : 'layers'] ??= {};
      report[byFile ? 'files' : 'layers'][key] = { code, data, gz };
      console.log(`| ${key} | ${code.toLocaleString('en-US')} | ${data.toLocaleString('en-US')} | ${kb(code + data)} | ${kb(gz)} |`);
    }
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) main();
