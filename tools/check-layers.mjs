#!/usr/bin/env node
// check-layers.mjs — enforces the layer rule of src/ (README, "Architecture"):
//
//   base     uses nothing of mlrt's but mlrt.h
//   codecs   uses base                       ir       uses base
//   formats  uses codecs, ir, base           kernels  uses base
//   model    uses kernels, ir, base          api      uses anything
//
// and checks, on the sources and on the objects `make` built (build/obj/):
//   1. includes: every #include "..." of a src/ file names a header of its own layer or of one it may use;
//   2. calls: every symbol a src/ object uses from another src/ object is defined in its own layer or
//      one it may use (nm: a file's undefined symbols, resolved to the file that defines them);
//   3. no circles: no two src/ files call each other, directly or through others (the file graph
//      of 2. has no cycle);
//   4. names: libmlrt.a defines, as global symbols, only mlrt.h's functions and `mlrt__` internals;
//   5. exports: the wasm builds export only mlrt.h's functions (and the toolchain's runtime
//      entries listed in RUNTIME_EXPORTS).
// Prints each violation with the file, the line or symbol, and the rule; exits 1 if there is any.
//
//   node tools/check-layers.mjs [--src DIR] [--obj DIR] [--lib FILE] [--wasm FILE ...]
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join, dirname, relative, resolve } from 'node:path';

export const LAYERS = {
  base: [],
  codecs: ['base'],
  ir: ['base'],
  formats: ['codecs', 'ir', 'base'],
  kernels: ['base'],
  model: ['kernels', 'ir', 'base'],
  api: ['model', 'formats', 'kernels', 'ir', 'codecs', 'base'],
};

// Exports the toolchains add to a standalone wasm module besides mlrt.h's functions: the memory,
// the reactor's initializer, the function table, and (threaded build) what workers need to set up
// their stacks and thread-local storage.
export const RUNTIME_EXPORTS = new Set(['memory', '_initialize', '__indirect_function_table', '__errno_location',
  'stackSave', 'stackRestore', 'stackAlloc', '__wasm_init_tls', '__tls_size', '__tls_align', '__wasm_call_ctors',
  '__stack_pointer', 'emscripten_stack_get_current', '__heap_base', '__data_end']);

/** The layer of a path under src/ ('public' for mlrt.h), or null. */
export function layerOf(srcRoot, file) {
  const rel = relative(srcRoot, file).split(/[\\/]/);
  if (rel.length === 1 && rel[0] === 'mlrt.h') return 'public';
  return rel.length > 1 && LAYERS[rel[0]] ? rel[0] : null;
}

const mayUse = (from, to) => from === to || to === 'public' || LAYERS[from]?.includes(to);

function walk(dir, out = []) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.[ch]$/.test(e)) out.push(p);
  }
  return out;
}

/** Rule 1: includes. */
export function checkIncludes(srcRoot) {
  const problems = [];
  for (const file of walk(srcRoot)) {
    const from = layerOf(srcRoot, file);
    if (!from) {
      if (!file.endsWith('mlrt.h')) problems.push(`${relative(srcRoot, file)}: not in a layer (base codecs ir formats kernels model api)`);
      continue;
    }
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      const m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
      if (!m) return;
      const target = resolve(dirname(file), m[1]);
      const to = layerOf(srcRoot, target);
      if (!existsSync(target)) problems.push(`${relative(srcRoot, file)}:${i + 1}: includes ${m[1]}, which does not exist`);
      else if (!to) problems.push(`${relative(srcRoot, file)}:${i + 1}: includes ${m[1]}, outside the layers`);
      else if (!mayUse(from, to)) problems.push(`${relative(srcRoot, file)}:${i + 1}: ${from} includes ${m[1]} (${to}): ${from} may use ${LAYERS[from].join(', ') || 'only mlrt.h'}`);
    });
  }
  return problems;
}

/** nm's defined and undefined symbols of one object. */
function symbols(obj) {
  const out = execFileSync('nm', ['-P', obj], { encoding: 'utf8' });
  const defined = [], undefinedSyms = [];
  for (const line of out.split('\n')) {
    const [name, type] = line.trim().split(/\s+/);
    if (!name || !type) continue;
    if (type === 'U') undefinedSyms.push(name);
    else if (/[TDBRCVW]/.test(type)) defined.push(name); // global definitions (uppercase)
  }
  return { defined, undefinedSyms };
}

/** Rules 2 and 3: calls between the objects of src/ files (objRoot mirrors src/). */
export function checkCalls(srcRoot, objRoot) {
  const problems = [];
  const files = [];
  (function find(dir) {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) find(p);
      else if (e.endsWith('.o')) files.push(p);
    }
  })(objRoot);
  const owner = new Map(); // symbol -> src file
  const uses = new Map();  // src file -> undefined symbols
  for (const o of files) {
    const src = join(srcRoot, relative(objRoot, o)).replace(/\.o$/, '.c');
    if (!existsSync(src)) continue; // a stale object
    const { defined, undefinedSyms } = symbols(o);
    for (const s of defined) owner.set(s, src);
    uses.set(src, undefinedSyms);
  }
  const edges = new Map(); // src file -> Set of src files it calls
  for (const [file, syms] of uses) {
    const from = layerOf(srcRoot, file);
    const to = new Set();
    for (const s of syms) {
      const def = owner.get(s);
      if (!def || def === file) continue;
      to.add(def);
      const target = layerOf(srcRoot, def);
      if (!mayUse(from, target)) {
        problems.push(`${relative(srcRoot, file)}: ${from} calls ${s} of ${relative(srcRoot, def)} (${target}): ${from} may use ${LAYERS[from].join(', ') || 'only mlrt.h'}`);
      }
    }
    edges.set(file, to);
  }
  for (const cycle of cycles(edges)) problems.push(`files call each other in a circle: ${cycle.map((f) => relative(srcRoot, f)).join(' -> ')}`);
  return problems;
}

/** The strongly connected components of more than one node (Tarjan), each as a list. */
export function cycles(edges) {
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), out = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); on.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The functions mlrt.h declares. */
export function publicApi(header) {
  const text = readFileSync(header, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const names = new Set();
  for (const m of text.matchAll(/\b(mlrt_[a-z0-9_]+)\s*\(/g)) names.add(m[1]);
  return names;
}

/** Rule 4: the library's global symbols. */
export function checkNames(lib, api) {
  const problems = [];
  const out = execFileSync('nm', ['-P', '--defined-only', '-g', lib], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const [name, type] = line.trim().split(/\s+/);
    if (!name || !type || name.endsWith(':')) continue;
    if (!api.has(name) && !name.startsWith('mlrt__')) problems.push(`${lib}: global symbol ${name} is neither mlrt.h's API nor an mlrt__ internal`);
  }
  return problems;
}

/** A wasm binary's export names, read from its export section (no compile: the relaxed-SIMD build
 * does not compile on engines without relaxed SIMD). */
export function wasmExports(bytes) {
  let p = 8;
  const leb = () => { let v = 0, shift = 0, b; do { b = bytes[p++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return v; };
  const names = [];
  while (p < bytes.length) {
    const id = bytes[p++], size = leb(), end = p + size;
    if (id === 7) {
      for (let n = leb(); n > 0; n--) {
        const len = leb();
        names.push(new TextDecoder().decode(bytes.subarray(p, p + len)));
        p += len + 1; // the name, then the kind byte
        leb();        // the index
      }
    }
    p = end;
  }
  return names;
}

/** Rule 5: a wasm module's exports. */
export function checkExports(wasm, api) {
  return wasmExports(readFileSync(wasm))
    .filter((name) => !api.has(name) && !RUNTIME_EXPORTS.has(name))
    .map((name) => `${wasm}: exports ${name}, which is not in mlrt.h`);
}

function main(argv) {
  const arg = (name, def) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : def; };
  const srcRoot = resolve(arg('--src', 'src'));
  const objRoot = resolve(arg('--obj', 'build/obj'));
  const lib = arg('--lib', 'build/libmlrt.a');
  const wasms = argv.flatMap((a, i) => (argv[i - 1] === '--wasm' ? [a] : []));
  const wasmList = wasms.length ? wasms : ['wasm/mlrt.wasm', 'wasm/mlrt-scalar.wasm', 'wasm/mlrt-relaxed.wasm', 'wasm/mlrt-threads.wasm'].filter(existsSync);
  const api = publicApi(join(srcRoot, 'mlrt.h'));
  const problems = [
    ...checkIncludes(srcRoot),
    ...(existsSync(objRoot) ? checkCalls(srcRoot, objRoot) : [`${objRoot}: no objects (make build/libmlrt.a first)`]),
    ...(existsSync(lib) ? checkNames(lib, api) : []),
    ...wasmList.flatMap((w) => checkExports(w, api)),
  ];
  for (const p of problems) console.error(`layers: ${p}`);
  if (problems.length) {
    console.error(`layers: ${problems.length} violation(s) of the rule in README.md, "Architecture"`);
    process.exit(1);
  }
  console.log(`layers: ok (${walk(srcRoot).length} files; includes, calls, circles, names, ${wasmList.length} wasm export lists)`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
