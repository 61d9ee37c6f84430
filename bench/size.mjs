#!/usr/bin/env node
// size.mjs — where mlrt.wasm's bytes go. Prints, in one Markdown report:
//   1. each build's size, raw and gzipped (-9), against the budget (256 KB, 100 KB gzipped);
//   2. mlrt.wasm's bytes per layer of src/ (base, codecs, ir, formats, kernels, model, api), code and
//      data apart, with the Unicode tables (base/unicode_tables.c) as a line of their own.
//
// Code: build/size/mlrt.wasm is mlrt.wasm linked and optimised the same way but keeping its
// function names (--profiling-funcs, wasm-opt --debuginfo); each function's body size comes from
// its code section, and its file from the objects' symbols (llvm-nm: static functions included).
// Data: each object's data symbols with their sizes (llvm-nm -S). What no file claims (the libc and
// allocator, the toolchain's glue) is "toolchain".
//
//   make build/size/mlrt.wasm && node bench/size.mjs [--json FILE]
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

/** function name -> src file (e.g. 'kernels/dense.c'), from the objects' symbols (llvm-nm). */
function functionFiles(objDir) {
  const fnFile = new Map();
  for (const o of objects(objDir)) {
    const file = relative(objDir, o).replace(/\.o$/, '.c');
    for (const line of execFileSync('llvm-nm-14', ['--defined-only', o], { encoding: 'utf8' }).split('\n')) {
      const [, type, name] = line.trim().split(/\s+/);
      if (!type || !/[Tt]/.test(type)) continue;
      const prev = fnFile.get(name);
      fnFile.set(name, prev !== undefined && prev !== file ? null : file); // null: the name is in more than one file
    }
  }
  return fnFile;
}

/** src file -> bytes of its data segments (constants, tables, strings), from the objects (wasm-objdump). */
function dataFiles(objDir) {
  const bytes = new Map();
  for (const o of objects(objDir)) {
    const out = execFileSync('wasm-objdump', ['-x', o], { encoding: 'utf8' }); // (-j Data fails on objects without data)
    let n = 0;
    for (const m of out.matchAll(/segment\[\d+\].* size=(\d+)/g)) n += Number(m[1]);
    bytes.set(relative(objDir, o).replace(/\.o$/, '.c'), n);
  }
  return bytes;
}

export function layerBytes(sizedWasm, objDir) {
  const { sizes, names, data, total } = functionSizes(readFileSync(sizedWasm));
  const fnFile = functionFiles(objDir), dataBytes = dataFiles(objDir);
  const rows = new Map([...LAYERS, 'tables', 'toolchain'].map((l) => [l, { code: 0, data: 0 }]));
  for (const [idx, size] of sizes) {
    const name = names.get(idx) ?? '';
    const file = fnFile.get(name) ?? fnFile.get(name.replace(/\.\d+$/, '')); // (a duplicate static name gets a suffix)
    const layer = file ? file.split('/')[0] : 'toolchain';
    rows.get(LAYERS.includes(layer) ? layer : 'toolchain').code += size;
  }
  let claimed = 0;
  for (const [file, bytes] of dataBytes) {
    const layer = /_tables\.c$/.test(file) ? 'tables' : file.split('/')[0];
    if (!rows.has(layer)) continue;
    rows.get(layer).data += bytes;
    claimed += bytes;
  }
  rows.get('toolchain').data += Math.max(0, data - claimed);
  return { rows, total, data };
}

function main() {
  const argv = process.argv.slice(2);
  const jsonOut = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : null;
  const report = { builds: {}, layers: {} };
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
    const { rows, total } = layerBytes(sized, join(ROOT, 'build/wasm-simd'));
    console.log(`\nmlrt.wasm by layer (from build/size/mlrt.wasm, ${total.toLocaleString('en-US')} bytes with its names section):\n`);
    console.log('| layer | code | data | total |');
    console.log('|---|---:|---:|---:|');
    for (const [layer, { code, data }] of rows) {
      report.layers[layer] = { code, data };
      console.log(`| ${layer} | ${code.toLocaleString('en-US')} | ${data.toLocaleString('en-US')} | ${kb(code + data)} |`);
    }
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) main();
