// onnx.mjs — the same BERT sentence encoder as an ONNX graph, written here (our own minimal ModelProto
// writer), for onnxruntime-web: the benchmark's peer and a second oracle for the big shapes.
//
//   bertToOnnx(weights, config, { pooling, normalize })   weights: Map canonical name -> { dims, data }
//   encoderOnnx('all-MiniLM-L6-v2', { dtype: 'F16' })     the random-weight folder's model as ONNX
//   folderToOnnx(files)                                   a HF folder { 'model.safetensors', 'config.json', ... }
//   ortHidden(files, maxLength)                           its last hidden states per text, by onnxruntime-web
//
// Inputs input_ids, attention_mask, token_type_ids: int64 [batch, sequence]; output
// sentence_embedding: float [batch, hidden] (optionally token_embeddings [batch, sequence, hidden]).
// Opset 17 (LayerNormalization; `layerNorm: 'decomposed'` writes ReduceMean/Sub/Pow/Sqrt/Div instead).
// The graph is the spec's forward pass op for op (../shared/specs/bert-encoder.md §4.3, §4.4), as
// torch.onnx writes a BertModel: Linear = MatMul by the transposed weight + Add, scores / sqrt(d) +
// (1 − mask)·f32min, Softmax, erf GELU, mean pooling = Σ m·h / max(Σ m, 1e-9), v / max(‖v‖, 1e-12).
import { createRequire } from 'node:module';
import { makeWeights, readSafetensors, shapeOf } from './weights.mjs';
import { folderOptions } from './folder.mjs';
import { encoderFeeds } from './feeds.mjs';

// ------------------------------------------------------------------ protobuf (wire format)

const utf8 = new TextEncoder();

class PB {
  constructor() { this.parts = []; this.len = 0; }
  raw(u8) { this.parts.push(u8); this.len += u8.length; return this; }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v));
    const out = [];
    do { let b = Number(n & 0x7fn); n >>= 7n; if (n) b |= 0x80; out.push(b); } while (n);
    return this.raw(Uint8Array.from(out));
  }
  tag(field, wire) { return this.varint(field * 8 + wire); }
  int(field, v) { return this.tag(field, 0).varint(v); }
  f32(field, v) { const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, v, true); return this.tag(field, 5).raw(b); }
  bytes(field, u8) { return this.tag(field, 2).varint(u8.length).raw(u8); }
  string(field, s) { return this.bytes(field, utf8.encode(s)); }
  msg(field, pb) { // nested message: its parts are spliced in, not copied
    this.tag(field, 2).varint(pb.len);
    for (const p of pb.parts) this.raw(p);
    return this;
  }
  finish() {
    const out = new Uint8Array(this.len);
    let off = 0;
    for (const p of this.parts) { out.set(p, off); off += p.length; }
    return out;
  }
}

const FLOAT = 1, INT8 = 3, INT64 = 7; // TensorProto.DataType
const A_FLOAT = 1, A_INT = 2, A_INTS = 7; // AttributeProto.AttributeType

/** TensorProto: dims, data_type, name, raw_data (Float32Array or BigInt64Array, little-endian). */
function tensorProto(name, dims, data) {
  const t = new PB();
  for (const d of dims) t.int(1, d);
  t.int(2, data instanceof BigInt64Array ? INT64 : data instanceof Int8Array ? INT8 : FLOAT);
  t.string(8, name);
  t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return t;
}

function valueInfo(name, elemType, dims) {
  const shape = new PB();
  for (const d of dims) shape.msg(1, typeof d === 'string' ? new PB().string(2, d) : new PB().int(1, d));
  return new PB().string(1, name).msg(2, new PB().msg(1, new PB().int(1, elemType).msg(2, shape)));
}

function attribute(name, v) {
  const a = new PB().string(1, name);
  if (Array.isArray(v)) { for (const x of v) a.int(8, x); a.int(20, A_INTS); }
  else if (typeof v === 'number') { a.int(3, v); a.int(20, A_INT); } // integers; floats as { float: v }
  else { a.f32(2, v.float); a.int(20, A_FLOAT); }
  return a;
}

/** A graph under construction: nodes, initializers, and fresh value names. */
class Graph {
  constructor() { this.nodes = []; this.inits = []; this.n = 0; }
  init(name, dims, data) { this.inits.push(tensorProto(name, dims, data)); return name; }
  op(type, inputs, attrs = {}, name = `${type.toLowerCase()}_${this.n++}`) {
    const out = name;
    const node = new PB();
    for (const i of inputs) node.string(1, i);
    node.string(2, out).string(3, `${out}_node`).string(4, type);
    for (const [k, v] of Object.entries(attrs)) node.msg(5, attribute(k, v));
    this.nodes.push(node);
    return out;
  }
}

const f32 = (v) => Float32Array.of(v);
const i64 = (...v) => BigInt64Array.from(v, BigInt);

/** The weight [out, in] transposed to [in, out] (MatMul's right operand). */
function transposed({ dims: [o, i], data }) {
  const t = new Float32Array(o * i);
  for (let r = 0; r < o; r++) for (let c = 0; c < i; c++) t[c * o + r] = data[r * i + c];
  return t;
}

/**
 * The ONNX ModelProto bytes. weights: Map canonical name (no `bert.` prefix) -> { dims, data: Float32Array };
 * config: { hidden, heads, layers, ffn?, eps? (1e-12) }; opts: pooling 'mean' | 'cls', normalize,
 * layerNorm 'op' | 'decomposed', tokenEmbeddings (also output the last hidden state),
 * quantize 'q8': every Linear as onnxruntime's quantize_dynamic writes it (weights int8 per tensor,
 * symmetric, scale max|w|/127; activations DynamicQuantizeLinear uint8; MatMulInteger, Cast, Mul by
 * the two scales), embeddings, LayerNorms and biases f32.
 */
export function bertToOnnx(weights, config, { pooling = 'mean', normalize = true, layerNorm = 'op', tokenEmbeddings = false, quantize = null } = {}) {
  const { hidden: H, heads: A, layers: L } = config;
  const eps = config.eps ?? 1e-12, d = H / A;
  const g = new Graph();
  const W = (name) => {
    const t = weights.get(name) ?? weights.get(`bert.${name}`);
    if (!t) throw new Error(`bertToOnnx: no tensor ${name}`);
    return t;
  };
  const param = (name) => { const t = W(name); return g.init(name, t.dims, t.data); };
  const linearT = (name) => { const t = W(`${name}.weight`); return g.init(`${name}.weight_T`, [t.dims[1], t.dims[0]], transposed(t)); };
  const one = g.init('one', [], f32(1)), min = g.init('f32_min', [], f32(-3.4028234663852886e38));
  const sqrtD = g.init('sqrt_head_dim', [], f32(Math.sqrt(d))), sqrt2 = g.init('sqrt_2', [], f32(Math.SQRT2)), half = g.init('half', [], f32(0.5));
  const shapeHeads = g.init('shape_heads', [4], i64(0, 0, A, d)), shapeHidden = g.init('shape_hidden', [3], i64(0, 0, H));

  const layerNormOf = (x, p) => {
    if (layerNorm === 'op') return g.op('LayerNormalization', [x, param(`${p}.weight`), param(`${p}.bias`)], { axis: -1, epsilon: { float: eps } });
    // decomposed: (x − μ) / sqrt(mean((x − μ)²) + eps) · γ + β
    const mu = g.op('ReduceMean', [x], { axes: [-1], keepdims: 1 });
    const c = g.op('Sub', [x, mu]);
    const v = g.op('ReduceMean', [g.op('Mul', [c, c])], { axes: [-1], keepdims: 1 });
    const s = g.op('Sqrt', [g.op('Add', [v, g.init(`${p}.eps`, [], f32(eps))])]);
    return g.op('Add', [g.op('Mul', [g.op('Div', [c, s]), param(`${p}.weight`)]), param(`${p}.bias`)]);
  };
  const linearQ8 = (x, p) => {
    const t = W(`${p}.weight`), wt = transposed(t);
    let m = 0;
    for (const v of wt) m = Math.max(m, Math.abs(v));
    const scale = Math.fround(m > 0 ? m / 127 : 1), q = new Int8Array(wt.length);
    for (let k = 0; k < wt.length; k++) q[k] = Math.max(-127, Math.min(127, Math.round(wt[k] / scale)));
    const wq = g.init(`${p}.weight_T_q8`, [t.dims[1], t.dims[0]], q);
    const [xq, xs, xz] = ['q', 's', 'z'].map((k) => `${p}.x_${k}`);
    const node = new PB();
    node.string(1, x).string(2, xq).string(2, xs).string(2, xz).string(3, `${p}.dql_node`).string(4, 'DynamicQuantizeLinear');
    g.nodes.push(node);
    const mm = g.op('MatMulInteger', [xq, wq, xz, g.init(`${p}.w_zero`, [], Int8Array.of(0))]);
    const scaled = g.op('Mul', [g.op('Cast', [mm], { to: FLOAT }), g.op('Mul', [xs, g.init(`${p}.w_scale`, [], f32(scale))])]);
    return g.op('Add', [scaled, param(`${p}.bias`)]);
  };
  const linear = quantize === 'q8' ? linearQ8 : (x, p) => g.op('Add', [g.op('MatMul', [x, linearT(p)]), param(`${p}.bias`)]);

  // embeddings: (word[ids] + type[types]) + position[0..T), LayerNorm
  const seqLen = g.op('Slice', [g.op('Shape', ['input_ids']), g.init('i1', [1], i64(1)), g.init('i2', [1], i64(2))]); // [T]
  const pos = g.op('Slice', [param('embeddings.position_embeddings.weight'), g.init('i0', [1], i64(0)), seqLen, g.init('axis0', [1], i64(0))]);
  let x = g.op('Add', [g.op('Gather', [param('embeddings.word_embeddings.weight'), 'input_ids']),
    g.op('Gather', [param('embeddings.token_type_embeddings.weight'), 'token_type_ids'])]);
  x = layerNormOf(g.op('Add', [x, pos]), 'embeddings.LayerNorm');

  // the additive mask [B, 1, 1, T]
  const maskF = g.op('Cast', ['attention_mask'], { to: FLOAT });
  const ext = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', [one, maskF]), min]), g.init('axes_1_2', [2], i64(1, 2))]);

  for (let i = 0; i < L; i++) {
    const p = `encoder.layer.${i}`;
    const heads = (t, perm) => g.op('Transpose', [g.op('Reshape', [t, shapeHeads])], { perm });
    const q = heads(linear(x, `${p}.attention.self.query`), [0, 2, 1, 3]);
    const k = heads(linear(x, `${p}.attention.self.key`), [0, 2, 3, 1]);
    const v = heads(linear(x, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), sqrtD]), ext]);
    const ctx = g.op('MatMul', [g.op('Softmax', [scores], { axis: -1 }), v]);
    const merged = g.op('Reshape', [g.op('Transpose', [ctx], { perm: [0, 2, 1, 3] }), shapeHidden]);
    x = layerNormOf(g.op('Add', [linear(merged, `${p}.attention.output.dense`), x]), `${p}.attention.output.LayerNorm`);
    const u = linear(x, `${p}.intermediate.dense`);
    const gelu = g.op('Mul', [g.op('Mul', [u, g.op('Add', [g.op('Erf', [g.op('Div', [u, sqrt2])]), one])]), half]);
    x = layerNormOf(g.op('Add', [linear(gelu, `${p}.output.dense`), x]), `${p}.output.LayerNorm`);
  }
  const hiddenOut = tokenEmbeddings ? g.op('Identity', [x], {}, 'token_embeddings') : null;

  let v;
  if (pooling === 'mean') {
    const m3 = g.op('Unsqueeze', [maskF, g.init('axes_2', [1], i64(2))]);
    const axis1 = g.init('axes_1', [1], i64(1));
    const sum = g.op('ReduceSum', [g.op('Mul', [x, m3]), axis1], { keepdims: 0 });
    const cnt = g.op('Max', [g.op('ReduceSum', [m3, axis1], { keepdims: 0 }), g.init('eps_count', [], f32(1e-9))]);
    v = g.op('Div', [sum, cnt]);
  } else if (pooling === 'cls') {
    v = g.op('Gather', [x, g.init('zero', [], i64(0))], { axis: 1 });
  } else throw new Error(`bertToOnnx: pooling ${pooling} is not mean or cls`);
  if (normalize) {
    const norm = g.op('Sqrt', [g.op('ReduceSum', [g.op('Mul', [v, v]), g.init('axes_1b', [1], i64(1))], { keepdims: 1 })]);
    v = g.op('Div', [v, g.op('Max', [norm, g.init('eps_norm', [], f32(1e-12))])]);
  }
  g.op('Identity', [v], {}, 'sentence_embedding');

  const graph = new PB();
  for (const n of g.nodes) graph.msg(1, n);
  graph.string(2, 'bert_sentence_encoder');
  for (const t of g.inits) graph.msg(5, t);
  for (const name of ['input_ids', 'attention_mask', 'token_type_ids']) graph.msg(11, valueInfo(name, INT64, ['batch', 'sequence']));
  graph.msg(12, valueInfo('sentence_embedding', FLOAT, ['batch', H]));
  if (hiddenOut) graph.msg(12, valueInfo(hiddenOut, FLOAT, ['batch', 'sequence', H]));
  const model = new PB();
  model.int(1, 8); // ir_version
  model.string(2, 'mlrt tools/encoder/onnx.mjs');
  model.msg(7, graph);
  model.msg(8, new PB().string(1, '').int(2, 17)); // opset_import
  return model.finish();
}

/** The random-weight encoder of a folder profile (folder.mjs options) as ONNX. */
export function encoderOnnx(profile = 'tiny', opts = {}, onnxOpts = {}) {
  const o = folderOptions(profile, opts);
  const s = shapeOf(o.shape);
  const w = makeWeights(o.shape, o.seed, o.dtype, { extras: false });
  return bertToOnnx(w, s, { pooling: o.pooling, normalize: o.normalize, ...onnxOpts });
}

/** A Hugging Face / sentence-transformers folder (file name -> bytes) as ONNX: config.json for the
 * shape, modules.json and 1_Pooling/config.json for the pooling and Normalize (mean, none without them). */
export function folderToOnnx(files, onnxOpts = {}) {
  const txt = (n) => (files[n] ? JSON.parse(new TextDecoder().decode(files[n])) : null);
  const c = txt('config.json');
  const modules = txt('modules.json');
  const pool = txt('1_Pooling/config.json');
  const pooling = pool?.pooling_mode_cls_token ? 'cls' : 'mean';
  const normalize = !!modules?.some((m) => m.type.endsWith('.Normalize'));
  const w = readSafetensors(files['model.safetensors']);
  return bertToOnnx(w, { hidden: c.hidden_size, heads: c.num_attention_heads, layers: c.num_hidden_layers, eps: c.layer_norm_eps },
    { pooling, normalize, ...onnxOpts });
}

/**
 * onnxruntime-web (wasm) on encoder ONNX bytes: { embed(ids, typeIds?) -> Float32Array [n, dim], release() }
 * with ids an array of token-id arrays, right-padded here to the longest (attention 0, id 0, type 0).
 */
export async function ortEncoder(bytes, { threads = 1 } = {}) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  return {
    session,
    async embed(ids, typeIds = null) {
      return (await session.run(encoderFeeds(ort.Tensor, ids, typeIds))).sentence_embedding.data;
    },
    release: () => session.release(),
  };
}

/**
 * A folder's last hidden states, one text at a time, for references written on top of them (prompts left
 * out of the pooling, Dense modules): ids(text) tokenizes with npm `tokenizers` (the folder's
 * tokenizer.json, cut at maxLength, no padding); states(ids) -> Float32Array [T][hidden] from
 * onnxruntime-web (mask all ones, types 0); release().
 */
export async function ortHidden(files, maxLength) {
  const { Tokenizer } = createRequire(import.meta.url)('tokenizers');
  const tok = Tokenizer.fromString(new TextDecoder().decode(files['tokenizer.json']));
  tok.setTruncation(maxLength);
  tok.disablePadding();
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(folderToOnnx(files, { tokenEmbeddings: true }), { executionProviders: ['wasm'] });
  return {
    ids: async (text) => Array.from((await tok.encode(text)).getIds()),
    async states(ids) {
      const i64 = (f) => new ort.Tensor('int64', BigInt64Array.from(ids, (v) => BigInt(f(v))), [1, ids.length]);
      return (await session.run({ input_ids: i64((v) => v), attention_mask: i64(() => 1), token_type_ids: i64(() => 0) })).token_embeddings.data;
    },
    release: () => session.release(),
  };
}
