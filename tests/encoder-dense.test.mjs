// sentence-transformers' Dense modules (issue 21): modules.json's Transformer, Pooling, Dense...,
// Normalize, each Dense in a folder of its own with config.json ({in_features, out_features, bias,
// activation_function}) and model.safetensors ("linear.weight" [out][in], "linear.bias" [out]), as
// LaBSE ships one (768 -> 768, Tanh). Checked against an independent reference: onnxruntime-web's last
// hidden states of the same weights (tools/encoder/onnx.mjs), pooled, then each Dense in float64
// (Math.tanh, ...) and the L2 norm, all written here from sentence-transformers' definitions.
import { test } from 'node:test';
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { assertSameBits, writeFolder } from './helpers.mjs';
import { makeFolder } from '../tools/encoder/folder.mjs';
import { ortHidden } from '../tools/encoder/onnx.mjs';
import { writeSafetensors } from '../tools/encoder/weights.mjs';

const { createRuntime, MlrtError } = await import('../wasm/mlrt.mjs');
const te = new TextEncoder(), td = new TextDecoder();
const rt = await createRuntime({ relaxed: false });
const scalar = await createRuntime({ simd: false });
const sameBits = (got, want, what) => assertSameBits(assert, got, want, what);
const json = (o) => te.encode(JSON.stringify(o));
const base = await makeFolder('tiny'); // hidden 32, mean pooling, Normalize
const TEXTS = ['how do magnets work', 'A cat sat on the mat.', 'x', 'the quick brown fox jumps over the lazy dog again and again'];
const ACT = { tanh: 'torch.nn.modules.activation.Tanh', identity: 'torch.nn.modules.linear.Identity',
  relu: 'torch.nn.modules.activation.ReLU', sigmoid: 'torch.nn.modules.activation.Sigmoid' };
const F = { tanh: Math.tanh, identity: (x) => x, relu: (x) => Math.max(x, 0), sigmoid: (x) => 1 / (1 + Math.exp(-x)) };

// Deterministic weights (a xorshift stream scaled to about N(0, 1/in)), as Float32Array.
function weights(seed, n, scale) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return ((s / 4294967296) * 2 - 1) * scale;
  });
}
const f32bytes = (a) => new Uint8Array(a.buffer.slice(0));

// A Dense module: { config, w [out][in], b [out] | null } and its files under dir.
function dense(dir, seed, inF, outF, act, bias = true, { dtype = 'F32', cfg = {}, names = ['linear.weight', 'linear.bias'] } = {}) {
  const w = weights(seed, outF * inF, Math.sqrt(3 / inF)), b = bias ? weights(seed + 1, outF, 0.5) : null;
  const t16 = (a) => { // F16 bits of a (round to nearest even), and the values they hold
    const out = new Uint16Array(a.length), dv = new DataView(new ArrayBuffer(4));
    for (let i = 0; i < a.length; i++) {
      dv.setFloat32(0, a[i]);
      const x = dv.getUint32(0), sign = (x >>> 16) & 0x8000, e = ((x >>> 23) & 0xff) - 127 + 15, m = x & 0x7fffff;
      let h = e <= 0 ? 0 : e >= 31 ? 0x7c00 : (e << 10) | (m >>> 13);
      if (e > 0 && e < 31 && ((m & 0x1fff) > 0x1000 || ((m & 0x1fff) === 0x1000 && (h & 1)))) h++;
      out[i] = sign | h;
    }
    return out;
  };
  const tensor = (name, a, dims) => (dtype === 'F16' ? { name, dtype, dims, bytes: new Uint8Array(t16(a).buffer) } : { name, dtype, dims, bytes: f32bytes(a) });
  const tensors = [tensor(names[0], w, [outF, inF])];
  if (b) tensors.push(tensor(names[1], b, [outF]));
  const files = {
    [`${dir}/config.json`]: json({ in_features: inF, out_features: outF, bias, activation_function: ACT[act], ...cfg }),
    [`${dir}/model.safetensors`]: writeSafetensors(tensors),
  };
  return { files, w, b, inF, outF, act };
}

const modules = (...mods) => json([
  { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
  { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  ...mods.map((m, i) => ({ idx: i + 2, name: String(i + 2), path: m, type: `sentence_transformers.models.${m.replace(/^\d+_/, '')}` })),
]);

// The reference: ORT hidden states -> masked mean -> each Dense in float64 -> L2 norm when normalize.
async function reference(files, texts, denses, normalize) {
  const ort = await ortHidden(files, 64);
  const out = [];
  for (const t of texts) {
    const ids = await ort.ids(t), T = ids.length;
    const h = await ort.states(ids), H = h.length / T;
    let x = new Float64Array(H);
    for (let j = 0; j < T; j++) for (let c = 0; c < H; c++) x[c] += h[j * H + c] / T;
    for (const d of denses) {
      const y = new Float64Array(d.outF);
      for (let o = 0; o < d.outF; o++) {
        let acc = d.b ? d.b[o] : 0;
        for (let i = 0; i < d.inF; i++) acc += d.w[o * d.inF + i] * x[i];
        y[o] = F[d.act](acc);
      }
      x = y;
    }
    const norm = normalize ? Math.max(Math.hypot(...x), 1e-12) : 1;
    out.push(...x.map((v) => v / norm));
  }
  await ort.release();
  return Float64Array.from(out);
}

test('Dense modules after the pooling (Tanh with bias, then Identity without, then Normalize) match the reference', async () => {
  const d1 = dense('2_Dense', 7, 32, 24, 'tanh'), d2 = dense('3_Dense', 9, 24, 16, 'identity', false);
  const files = { ...base, ...d1.files, ...d2.files, 'modules.json': modules('2_Dense', '3_Dense', '4_Normalize') };
  const enc = rt.loadEncoder(files);
  assert.equal(enc.info.dim, 16);
  assert.deepEqual(enc.info.dense, [{ in: 32, out: 24, bias: true, activation: 'tanh' }, { in: 24, out: 16, bias: false, activation: 'identity' }]);
  assert.equal(enc.info.outputs[0].shape[1], 16);
  const got = enc.embed(TEXTS), want = await reference(files, TEXTS, [d1, d2], true);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= 1e-5, `max |Δ| ${worst}`);
  // a text alone, the scalar build, embedTokens: the same bits
  for (let i = 0; i < TEXTS.length; i++) sameBits(enc.embed(TEXTS[i]), got.subarray(i * 16, (i + 1) * 16), `text ${i} alone`);
  const s = scalar.loadEncoder(files);
  sameBits(s.embed(TEXTS), got, 'the scalar build');
  s.free(), enc.free();
});

test('a Dense config as sentence-transformers 5 saves it (module_input_name, module_output_name) loads the same', () => {
  const d = dense('2_Dense', 7, 32, 24, 'tanh'), mods = modules('2_Dense', '3_Normalize');
  const plain = rt.loadEncoder({ ...base, ...d.files, 'modules.json': mods });
  for (const extra of [{ module_input_name: 'sentence_embedding', module_output_name: 'sentence_embedding' }, { module_input_name: 'sentence_embedding', module_output_name: null }]) {
    const files = { ...base, ...d.files, 'modules.json': mods,
      '2_Dense/config.json': json({ in_features: 32, out_features: 24, bias: true, activation_function: ACT.tanh, ...extra }) };
    const enc = rt.loadEncoder(files);
    sameBits(enc.embed(TEXTS), plain.embed(TEXTS), JSON.stringify(extra));
    enc.free();
  }
  // without activation_function, Dense's default: Tanh
  const noAct = rt.loadEncoder({ ...base, ...d.files, 'modules.json': mods, '2_Dense/config.json': json({ in_features: 32, out_features: 24 }) });
  assert.equal(noAct.info.dense[0].activation, 'tanh');
  sameBits(noAct.embed(TEXTS), plain.embed(TEXTS), 'no activation_function: Tanh');
  noAct.free();
  plain.free();
});

test('each activation sentence-transformers names (Tanh, Identity, ReLU, Sigmoid), F16 weights, no Normalize', async () => {
  for (const act of ['relu', 'sigmoid']) {
    const d = dense('2_Dense', 11, 32, 40, act, true, { dtype: 'F16' });
    // the reference runs on the values the F16 bits hold
    const dv = new DataView(d.files['2_Dense/model.safetensors'].buffer);
    const hdr = Number(dv.getBigUint64(0, true)), meta = JSON.parse(td.decode(d.files['2_Dense/model.safetensors'].subarray(8, 8 + hdr)));
    const f16 = (name, n) => Float32Array.from({ length: n }, (_, i) => {
      const h = dv.getUint16(8 + hdr + meta[name].data_offsets[0] + 2 * i, true), e = (h >> 10) & 31, m = h & 1023;
      return (h & 0x8000 ? -1 : 1) * (e ? 2 ** (e - 15) * (1 + m / 1024) : 2 ** -14 * (m / 1024));
    });
    d.w = f16('linear.weight', 40 * 32), d.b = f16('linear.bias', 40);
    const files = { ...base, ...d.files, 'modules.json': modules('2_Dense') };
    const enc = rt.loadEncoder(files);
    assert.deepEqual([enc.info.dim, enc.info.normalize, enc.info.dense[0].activation], [40, false, act]);
    const got = enc.embed(TEXTS), want = await reference(files, TEXTS, [d], false);
    let worst = 0;
    for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
    assert.ok(worst <= 1e-5, `${act}: max |Δ| ${worst}`);
    if (act === 'relu') assert.ok(got.some((v) => v === 0) && got.some((v) => v > 0), 'relu clips');
    enc.free();
  }
});

test('malformed Dense modules are refused, naming the file and the field', () => {
  const d = dense('2_Dense', 7, 32, 24, 'tanh');
  const folder = (over, mods = modules('2_Dense', '3_Normalize')) => ({ ...base, ...d.files, 'modules.json': mods, ...over });
  const bad = (files, code, re, what) => assert.throws(() => rt.loadEncoder(files),
    (e) => e instanceof MlrtError && e.code === code && re.test(e.message), `${what}: ${code} ${re}`);
  const cfg = (o) => ({ '2_Dense/config.json': json({ in_features: 32, out_features: 24, bias: true, activation_function: ACT.tanh, ...o }) });
  bad(folder(cfg({ in_features: 30 })), 'BAD_DIMENSIONS', /2_Dense\/config\.json: in_features is 30 but the embedding before it has 32 floats/, 'in_features');
  bad(folder(cfg({ activation_function: 'torch.nn.modules.activation.GELU' })), 'UNSUPPORTED', /activation_function 'torch\.nn\.modules\.activation\.GELU'/, 'GELU');
  bad(folder(cfg({ out_features: 0 })), 'BAD_DIMENSIONS', /out_features is 0/, 'out_features 0');
  bad(folder(cfg({ out_features: 25 })), 'BAD_DIMENSIONS', /tensor 'linear\.weight' is not \[25, 32\]/, 'shape');
  bad(folder(cfg({ bias: 'yes' })), 'BAD_HEADER', /bias: expected true or false/, 'bias type');
  bad(folder(cfg({ activation_function: null })), 'BAD_HEADER', /activation_function: expected a string, got null/, 'activation null');
  bad(folder(cfg({ dropout: 0.1 })), 'BAD_HEADER', /2_Dense\/config\.json: unknown key 'dropout'/, 'unknown key');
  bad(folder(cfg({ module_input_name: 'token_embeddings' })), 'UNSUPPORTED', /module_input_name 'token_embeddings': mlrt runs Dense modules on the sentence embedding/, 'token_embeddings');
  bad(folder(cfg({ module_output_name: 'dense_out' })), 'UNSUPPORTED', /module_output_name 'dense_out'/, 'another output');
  bad(folder({ '2_Dense/config.json': json({ out_features: 24 }) }), 'BAD_HEADER', /'in_features' is missing/, 'no in_features');
  const noConfig = folder({});
  delete noConfig['2_Dense/config.json'];
  bad(noConfig, 'INVALID_ARGUMENT', /Dense module in '2_Dense\/' but no 2_Dense\/config\.json/, 'no config');
  const noWeights = folder({});
  delete noWeights['2_Dense/model.safetensors'];
  bad(noWeights, 'INVALID_ARGUMENT', /no 2_Dense\/model\.safetensors was given/, 'no weights');
  bad({ ...noWeights, '2_Dense/pytorch_model.bin': new Uint8Array(8) }, 'UNSUPPORTED', /pytorch_model\.bin is not read/, 'pytorch_model.bin');
  const noBias = dense('2_Dense', 7, 32, 24, 'tanh', false);
  bad(folder({ ...noBias.files, ...cfg({}) }), 'NOT_A_MODEL', /tensor 'linear\.bias' is missing/, 'bias missing');
  const named = dense('2_Dense', 7, 32, 24, 'tanh', true, { names: ['weight', 'bias'] });
  bad(folder(named.files), 'NOT_A_MODEL', /tensor 'linear\.weight' is missing/, 'other names');
  const nan = dense('2_Dense', 7, 32, 24, 'tanh');
  const st = nan.files['2_Dense/model.safetensors'], hdr = Number(new DataView(st.buffer).getBigUint64(0, true));
  new DataView(st.buffer).setFloat32(8 + hdr + 4 * 100, NaN, true);
  bad(folder(nan.files), 'NON_FINITE', /2_Dense\/linear\.(weight|bias)/, 'NaN');
  bad(folder({ '2_Dense/model.safetensors': st.subarray(0, st.length - 3) }), 'TRUNCATED', /^loadEncoder: 2_Dense\/model\.safetensors: safetensors: /, 'truncated');
  bad(folder({}, modules('2_Dense', '3_Normalize', '4_Dense')), 'UNSUPPORTED', /expected Transformer, Pooling\[, Dense\.\.\.\]\[, Normalize\] in that order/, 'Dense after Normalize');
  bad(folder({}, json([{ idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '', type: 'sentence_transformers.models.Dense' }])), 'BAD_HEADER', /module 2 \(Dense\): the path is empty/, 'empty path');
});

test('Dense modules on threads give the one-thread bits; mlrt convert refuses such a folder', async () => {
  const d1 = dense('2_Dense', 7, 32, 24, 'tanh');
  const files = { ...base, ...d1.files, 'modules.json': modules('2_Dense', '3_Normalize') };
  const texts = [...TEXTS, ...TEXTS.map((t) => `${t} again`)];
  const want = rt.loadEncoder(files).embed(texts);
  if (existsSync(new URL('../wasm/mlrt-threads.wasm', import.meta.url))) {
    const two = await createRuntime({ threads: 2 });
    const before = two.threadPool.completed.rows, enc = two.loadEncoder(files);
    sameBits(enc.embed(texts), want, 'two threads');
    assert.ok(two.threadPool.completed.rows > before, 'the workers ran rows');
    enc.free();
    two.dispose?.();
  }
  const { mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(join(tmpdir(), 'mlrt-dense-'));
  writeFolder(dir, files);
  const cli = new URL('../tools/mlrt.mjs', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [cli, 'convert', dir, join(dir, 'out.apr')], { encoding: 'utf8' });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /has Dense modules after its pooling, which an \.apr does not hold/);
  const e = spawnSync(process.execPath, [cli, 'embed', dir, '--text', TEXTS[0], '--output', 'f32']);
  assert.equal(e.status, 0, String(e.stderr));
  sameBits(new Float32Array(e.stdout.buffer.slice(e.stdout.byteOffset, e.stdout.byteOffset + e.stdout.length)), want.subarray(0, 24), 'mlrt embed');
  assert.match(spawnSync(process.execPath, [cli, 'inspect', dir], { encoding: 'utf8' }).stdout, /24 floats: mean pooling, Dense 32 -> 24 tanh, L2-normalized/);
});
