// encoder-builds.test.mjs — the encoder gives the same bits in the SIMD128, scalar and threaded wasm
// builds (and natively: tests/c/test_encoder.c checks the same outputs against tests/c/encoder/bits.f32,
// which this test checks too), and the relaxed-SIMD build stays within the last bits. Through the raw
// exports (mlrt_load_files, mlrt_run), on tests/c/encoder's tiny models and pooling modes, in f32, f16,
// bf16 and Q8 (an .apr v2 written by `mlrt convert`'s tools/apr/encoder.mjs: within 0.999 cosine of f32).
import v8 from 'node:v8';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { encoderToApr } from '../tools/apr/encoder.mjs';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // Node 20: before any wasm is compiled (as tests/relaxed.test.mjs)
const ROOT = new URL('../', import.meta.url).pathname;
const DIR = `${ROOT}tests/c/encoder/`;
const expected = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8'));

/** A build's raw exports, with helpers for files and int64 id tensors. */
async function open(file) {
  const path = `${ROOT}wasm/${file}`;
  if (!existsSync(path)) return null;
  const module = await WebAssembly.compile(readFileSync(path)).catch(() => null); // relaxed: not every engine
  if (!module) return null;
  const imports = {};
  let memory;
  for (const { module: m, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind === 'memory') {
      memory = new WebAssembly.Memory({ initial: 256, maximum: 32768, shared: true });
      (imports[m] ??= {})[name] = memory;
    } else {
      (imports[m] ??= {})[name] = name === 'emscripten_resize_heap'
        ? (req) => { const need = Math.ceil(((req >>> 0) - memory.buffer.byteLength) / 65536); if (need > 0) memory.grow(need); return 1; }
        : name === 'emscripten_memcpy_big' ? (d, s, n) => { new Uint8Array(memory.buffer).copyWithin(d, s, s + n); return d; } : () => {};
    }
  }
  const { exports: x } = await WebAssembly.instantiate(module, imports);
  if (x.__wasm_init_tls) { // the threaded build on the main thread: its stack and thread-local storage
    x.__wasm_call_ctors?.();
  }
  x._initialize?.();
  const mem = () => new Uint8Array((x.memory ?? memory).buffer);
  const dv = () => new DataView((x.memory ?? memory).buffer);
  const put = (bytes) => { const p = x.mlrt_alloc(bytes.length || 1); mem().set(bytes, p); return p; };
  const cstr = (s) => put(new TextEncoder().encode(s + '\0'));
  const err = x.mlrt_alloc(324);
  const message = () => { const m = mem(); let e = err + 4; while (m[e]) e++; return new TextDecoder().decode(m.subarray(err + 4, e)); };
  return {
    load(files) {
      const names = Object.keys(files), list = x.mlrt_alloc(12 * names.length);
      names.forEach((n, i) => {
        const b = typeof files[n] === 'string' ? new TextEncoder().encode(files[n]) : files[n];
        const np = cstr(n), bp = put(b), d = dv();
        d.setUint32(list + 12 * i, np, true); d.setUint32(list + 12 * i + 4, bp, true); d.setUint32(list + 12 * i + 8, b.length, true);
      });
      const m = x.mlrt_load_files(list, names.length, 0, err);
      assert.ok(m, `${file}: ${message()}`);
      return m;
    },
    run(model, batch) {
      const { ids, mask, types } = batch, rows = ids.length, width = ids[0].length;
      const t = x.mlrt_alloc(3 * 88), names = ['input_ids', 'attention_mask', 'token_type_ids'].map(cstr);
      const data = [ids, mask, types].map((a) => {
        const p = x.mlrt_alloc(rows * width * 8), d = dv();
        a.flat().forEach((v, i) => d.setBigInt64(p + 8 * i, BigInt(v), true));
        return p;
      });
      const d = dv();
      for (let k = 0; k < 3; k++) {
        const at = t + 88 * k;
        d.setUint32(at, names[k], true); d.setUint32(at + 4, 13 /* MLRT_I64 */, true); d.setUint32(at + 8, 2, true);
        d.setBigInt64(at + 16, BigInt(rows), true); d.setBigInt64(at + 24, BigInt(width), true); d.setUint32(at + 80, data[k], true);
      }
      assert.equal(x.mlrt_run(model, t, 3, err), 0, `${file}: ${message()}`);
      const out = x.mlrt_output(model, 0), od = dv();
      const n = Number(od.getBigInt64(out + 16, true) * od.getBigInt64(out + 24, true));
      return new Float32Array(mem().slice(od.getUint32(out + 80, true), od.getUint32(out + 80, true) + 4 * n).buffer);
    },
  };
}

const POOLINGS = {
  mean_norm: ['"pooling_mode_mean_tokens":true', true], cls_norm: ['"pooling_mode_cls_token":true,"pooling_mode_mean_tokens":false', true],
  max: ['"pooling_mode_max_tokens":true,"pooling_mode_mean_tokens":false', false],
  weighted: ['"pooling_mode_weightedmean_tokens":true,"pooling_mode_mean_tokens":false', false],
};
function folder(name, weights, pooling, hidden) {
  const [flags, norm] = POOLINGS[pooling];
  return {
    'model.safetensors': readFileSync(`${DIR}${name}/${weights}`), 'config.json': readFileSync(`${DIR}${name}/config.json`),
    'modules.json': `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}${norm ? ',{"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}' : ''}]`,
    '1_Pooling/config.json': `{"word_embedding_dimension":${hidden},${flags}}`,
  };
}

/** tiny as an .apr v2 with APR_Q8 dense weights and word embeddings (mlrt convert's writer). */
function tinyQ8(pooling) {
  const f = folder('tiny', 'model.safetensors', pooling, 32);
  const apr = encoderToApr({ 'config.json': f['config.json'], 'model.safetensors': f['model.safetensors'] }, { quantize: 'q8', embeddings: 'q8' });
  delete f['model.safetensors'];
  return { ...f, 'model.apr': apr.bytes };
}

/** Every case's outputs in one build: [{ key, values }]. */
async function outputs(file) {
  const b = await open(file);
  if (!b) return null;
  const out = [];
  for (const p of Object.keys(POOLINGS)) {
    const m = b.load(tinyQ8(p));
    expected.batches.tiny.forEach((batch, i) => out.push({ key: `tiny/q8/${i}/${p}`, q8: true, values: b.run(m, batch) }));
  }
  for (const [name, hidden, weights] of [['tiny', 32, ['model.safetensors', 'model.f16.safetensors', 'model.bf16.safetensors']], ['odd', 12, ['model.safetensors']]]) {
    for (const w of weights) {
      for (const p of Object.keys(POOLINGS)) {
        const m = b.load(folder(name, w, p, hidden));
        expected.batches[name].forEach((batch, i) => out.push({ key: `${name}/${w.split('.').slice(1, -1).join('') || 'f32'}/${i}/${p}`, values: b.run(m, batch) }));
      }
    }
  }
  return out;
}

/** The smallest cosine between rows of `dim` of a and b. */
function cosines(a, b, dim) {
  let worst = 1;
  for (let r = 0; r < a.length / dim; r++) {
    let ab = 0, aa = 0, bb = 0;
    for (let k = r * dim; k < (r + 1) * dim; k++) { ab += a[k] * b[k]; aa += a[k] * a[k]; bb += b[k] * b[k]; }
    worst = Math.min(worst, ab / Math.sqrt(aa * bb));
  }
  return worst;
}

const close = (got, want, tol) => {
  let scale = 1e-6;
  for (const v of want) scale = Math.max(scale, Math.abs(v));
  return got.every((v, i) => Math.abs(v - want[i]) <= tol * scale);
};

test('encoder: SIMD128, scalar and threaded builds give the same bits; all within 1e-5 of PyTorch', async () => {
  const simd = await outputs('mlrt.wasm');
  assert.ok(simd, 'wasm/mlrt.wasm is built');
  for (const { key, values, q8 } of simd) {
    const want = expected.expected[key.replace('/q8/', '/f32/')];
    assert.ok(want, key);
    if (!q8) assert.ok(close(values, want, 1e-5), `${key}: off by more than 1e-5`);
    else assert.ok(cosines(values, want, 32) >= 0.999, `${key}: Q8 cosine ${cosines(values, want, 32)}`);
  }
  for (const file of ['mlrt-scalar.wasm', 'mlrt-threads.wasm']) {
    const other = await outputs(file);
    if (!other) continue;
    other.forEach(({ key, values }, i) => assert.deepEqual(Buffer.from(values.buffer), Buffer.from(simd[i].values.buffer), `${file} ${key}`));
  }
  const bits = `${DIR}bits.f32`; // the native build's outputs (tests/c/test_encoder.c writes and checks them)
  if (existsSync(bits)) {
    const all = new Float32Array(readFileSync(bits).buffer.slice(0)), f32 = simd.filter((o) => !o.q8);
    const mine = new Float32Array(f32.reduce((n, o) => n + o.values.length, 0));
    let at = 0;
    for (const o of f32) { mine.set(o.values, at); at += o.values.length; }
    assert.deepEqual(Buffer.from(mine.buffer), Buffer.from(all.buffer), 'the native build\'s bits (tests/c/encoder/bits.f32)');
  }
});

test('encoder: the relaxed-SIMD build stays within the last bits', async (t) => {
  const relaxed = await outputs('mlrt-relaxed.wasm');
  if (!relaxed) return t.skip('no relaxed SIMD in this engine (node --experimental-wasm-relaxed-simd)');
  const simd = await outputs('mlrt.wasm');
  relaxed.forEach(({ key, values, q8 }, i) => assert.ok(q8 ? cosines(values, simd[i].values, 32) >= 0.999 : close(values, simd[i].values, 1e-6),
    `${key}: relaxed differs by more than ${q8 ? 'a cosine of 0.999 (Q8: 7-bit activations)' : '1e-6'}`));
});
