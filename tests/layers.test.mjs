// The layer rule of src/ (README, "Architecture"; tools/check-layers.mjs): the real tree keeps it,
// and each kind of violation the check looks for is caught on a small tree made to break it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkIncludes, checkCalls, checkNames, checkExports, cycles, publicApi, wasmExports } from '../tools/check-layers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

test('src/ keeps the layer rule: includes, calls, no circles, public names, wasm exports', () => {
  const out = execFileSync('node', ['tools/check-layers.mjs'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(out, /^layers: ok/);
});

/** A throwaway src/ tree with an object tree beside it: files { 'base/a.c': text }. */
function tree(files) {
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-layers-'));
  const src = join(dir, 'src'), obj = join(dir, 'obj');
  writeFileSync((mkdirSync(src, { recursive: true }), join(src, 'mlrt.h')), 'int mlrt_run(void);\n');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(src, path.split('/')[0]), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  for (const path of Object.keys(files).filter((p) => p.endsWith('.c'))) {
    mkdirSync(join(obj, path.split('/')[0]), { recursive: true });
    execFileSync('cc', ['-c', '-I', src, join(src, path), '-o', join(obj, path.replace(/\.c$/, '.o'))]);
  }
  return { dir, src, obj, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('an include against the rule is named with its line', () => {
  const t = tree({ 'model/model.h': '#pragma once\n', 'kernels/k.c': '#include "../base/base.h"\n#include "../model/model.h"\nint mlrt__k(void) { return 1; }\n', 'base/base.h': '#pragma once\n' });
  try {
    const p = checkIncludes(t.src);
    assert.equal(p.length, 1, p.join('\n'));
    assert.match(p[0], /kernels\/k\.c:2: kernels includes \.\.\/model\/model\.h \(model\): kernels may use base/);
  } finally { t.done(); }
});

test('a call against the rule and a circle of calls are found in the objects', () => {
  const t = tree({
    'model/m.c': 'int mlrt__m(void) { return 2; }\n',
    'kernels/k.c': 'int mlrt__m(void);\nint mlrt__k(void) { return mlrt__m(); }\n',        // kernels -> model
    'formats/a.c': 'int mlrt__b(void);\nint mlrt__a(int n) { return n ? mlrt__b() : 0; }\n', // a <-> b
    'formats/b.c': 'int mlrt__a(int);\nint mlrt__b(void) { return mlrt__a(0); }\n',
  });
  try {
    const p = checkCalls(t.src, t.obj);
    assert.ok(p.some((s) => /kernels\/k\.c: kernels calls mlrt__m of model\/m\.c \(model\)/.test(s)), p.join('\n'));
    assert.ok(p.some((s) => /circle: formats\/a\.c -> formats\/b\.c/.test(s)), p.join('\n'));
    assert.equal(p.length, 2, p.join('\n'));
  } finally { t.done(); }
});

test('cycles: only components of more than one file', () => {
  const e = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]);
  assert.deepEqual(cycles(e), [['a', 'b', 'c']]);
  assert.deepEqual(cycles(new Map([['a', new Set(['b'])], ['b', new Set()]])), []);
});

test('a global symbol that is neither mlrt.h nor mlrt__ is refused, and so is a foreign wasm export', () => {
  const t = tree({ 'base/x.c': 'int helper(void) { return 1; }\nint mlrt__ok(void) { return 2; }\nint mlrt_run(void) { return 3; }\n' });
  try {
    const lib = join(t.dir, 'lib.a');
    execFileSync('ar', ['rcs', lib, join(t.obj, 'base/x.o')]);
    const api = publicApi(join(t.src, 'mlrt.h'));
    assert.deepEqual([...api], ['mlrt_run']);
    const p = checkNames(lib, api);
    assert.equal(p.length, 1, p.join('\n'));
    assert.match(p[0], /global symbol helper /);
    // a module exporting function "helper" and "mlrt_run": (module (func) (export "helper" (func 0)) (export "mlrt_run" (func 0)))
    const wasm = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0,
      7, 20, 2, 6, ...Buffer.from('helper'), 0, 0, 8, ...Buffer.from('mlrt_run'), 0, 0, 10, 4, 1, 2, 0, 11]);
    assert.deepEqual(wasmExports(wasm), ['helper', 'mlrt_run']);
    const file = join(t.dir, 'x.wasm');
    writeFileSync(file, wasm);
    assert.deepEqual(checkExports(file, api), [`${file}: exports helper, which is not in mlrt.h`]);
  } finally { t.done(); }
});
