// A tiny protobuf writer for exactly the ONNX messages the benchmark needs:
// ModelProto → GraphProto (NodeProto, TensorProto initializers with raw_data,
// ValueInfoProto with a symbolic batch dimension). Field numbers follow onnx.proto.

const enc = new TextEncoder();

class PB {
  constructor() { this.parts = []; this.len = 0; }
  _push(u8) { this.parts.push(u8); this.len += u8.length; return this; }
  _varint(v) {
    // Non-negative integers up to 2^53 (enough for every field here).
    let n = BigInt(v);
    if (n < 0n) n += 1n << 64n; // two's complement for negative int64
    const out = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n !== 0n) b |= 0x80;
      out.push(b);
    } while (n !== 0n);
    return this._push(Uint8Array.from(out));
  }
  _tag(field, wire) { return this._varint((field << 3) | wire); }
  int(field, v) { return this._tag(field, 0)._varint(v); }
  bytes(field, u8) { return this._tag(field, 2)._varint(u8.length)._push(u8); }
  string(field, s) { return this.bytes(field, enc.encode(s)); }
  msg(field, pb) { return this.bytes(field, pb.finish()); }
  finish() {
    const out = new Uint8Array(this.len);
    let off = 0;
    for (const p of this.parts) { out.set(p, off); off += p.length; }
    return out;
  }
}

const FLOAT = 1; // TensorProto.DataType.FLOAT
const ATTR_INT = 2; // AttributeProto.AttributeType.INT

function tensor(name, dims, f32) {
  const t = new PB();
  for (const d of dims) t.int(1, d);             // dims (repeated int64, unpacked)
  t.int(2, FLOAT);                               // data_type
  t.string(8, name);                             // name
  const raw = new Uint8Array(f32.length * 4);    // raw_data: little-endian f32
  const dv = new DataView(raw.buffer);
  for (let k = 0; k < f32.length; k++) dv.setFloat32(k * 4, f32[k], true);
  t.bytes(9, raw);
  return t;
}

function valueInfo(name, dims) {
  const shape = new PB();
  for (const d of dims) {
    const dim = new PB();
    if (typeof d === 'string') dim.string(2, d); // dim_param
    else dim.int(1, d);                          // dim_value
    shape.msg(1, dim);
  }
  const tt = new PB().int(1, FLOAT).msg(2, shape); // TypeProto.Tensor {elem_type, shape}
  const type = new PB().msg(1, tt);                // TypeProto {tensor_type}
  return new PB().string(1, name).msg(2, type);    // ValueInfoProto {name, type}
}

function node(op, inputs, outputs, name, attrs = {}) {
  const n = new PB();
  for (const i of inputs) n.string(1, i);
  for (const o of outputs) n.string(2, o);
  n.string(3, name);
  n.string(4, op);
  for (const [k, v] of Object.entries(attrs)) {
    n.msg(5, new PB().string(1, k).int(20, ATTR_INT).int(3, v)); // AttributeProto {name, type, i}
  }
  return n;
}

/**
 * ONNX model for y = softmax(relu(x·W1 + b1)·W2 + b2), x: [batch, I] float.
 * Input "input", output "probs" ([batch, O]); the batch dimension is symbolic ("batch").
 */
export function mlpToOnnx(w, { opset = 13, irVersion = 8 } = {}) {
  const { I, H, O } = w;
  const g = new PB();
  g.msg(1, node('MatMul', ['input', 'W1'], ['h_mm'], 'fc1_matmul'));
  g.msg(1, node('Add', ['h_mm', 'b1'], ['h_pre'], 'fc1_add'));
  g.msg(1, node('Relu', ['h_pre'], ['h'], 'fc1_relu'));
  g.msg(1, node('MatMul', ['h', 'W2'], ['z_mm'], 'fc2_matmul'));
  g.msg(1, node('Add', ['z_mm', 'b2'], ['logits'], 'fc2_add'));
  g.msg(1, node('Softmax', ['logits'], ['probs'], 'softmax', { axis: -1 }));
  g.string(2, 'mlp_784_512_10');
  g.msg(5, tensor('W1', [I, H], w.W1));
  g.msg(5, tensor('b1', [H], w.b1));
  g.msg(5, tensor('W2', [H, O], w.W2));
  g.msg(5, tensor('b2', [O], w.b2));
  g.msg(11, valueInfo('input', ['batch', I]));
  g.msg(12, valueInfo('probs', ['batch', O]));

  const m = new PB();
  m.int(1, irVersion);                            // ir_version
  m.string(2, 'mlrt-bench');                      // producer_name
  m.string(3, '0.1.0');                           // producer_version
  m.msg(7, g);                                    // graph
  m.msg(8, new PB().string(1, '').int(2, opset)); // opset_import {domain: "", version}
  return m.finish();
}

// ------------------------------------------------------------------ ONNX-ML tree ensembles

const ATTR_FLOATS = 6, ATTR_INTS = 7, ATTR_STRINGS = 8, ATTR_STRING = 3, INT64 = 7;

function packedInts(values) {
  const p = new PB();
  for (const v of values) p._varint(v);
  return p.finish();
}
function packedFloats(values) {
  const raw = new Uint8Array(values.length * 4), dv = new DataView(raw.buffer);
  values.forEach((v, k) => dv.setFloat32(4 * k, v, true));
  return raw;
}
function attr(name, type, write) {
  const a = new PB().string(1, name).int(20, type);
  write(a);
  return a;
}

/**
 * ONNX-ML TreeEnsembleClassifier for a forest of trees in pre-order ({ feature[], threshold[],
 * left[], right[], leaf[] } per tree, left = -1 at leaves): BRANCH_LEQ splits (x <= t goes to the
 * true branch), each leaf votes 1/trees for its class, so "probabilities" are vote shares.
 * Input "input" [batch, F] float; outputs "label" [batch] int64 and "probabilities" [batch, C].
 */
export function forestToOnnx(trees, nFeatures, classes) {
  const ids = [], nodeIds = [], feats = [], vals = [], modes = [], trueIds = [], falseIds = [];
  const cTree = [], cNode = [], cId = [], cW = [];
  const classIndex = new Map(classes.map((c, i) => [c, i]));
  trees.forEach((t, ti) => {
    for (let n = 0; n < t.left.length; n++) {
      const leaf = t.left[n] < 0;
      ids.push(ti); nodeIds.push(n); feats.push(leaf ? 0 : t.feature[n]); vals.push(leaf ? 0 : t.threshold[n]);
      modes.push(leaf ? 'LEAF' : 'BRANCH_LEQ'); trueIds.push(leaf ? 0 : t.left[n]); falseIds.push(leaf ? 0 : t.right[n]);
      if (leaf) { cTree.push(ti); cNode.push(n); cId.push(classIndex.get(t.leaf[n])); cW.push(1 / trees.length); }
    }
  });
  const n = new PB();
  n.string(1, 'input'); n.string(2, 'label'); n.string(2, 'probabilities');
  n.string(3, 'forest'); n.string(4, 'TreeEnsembleClassifier'); n.string(7, 'ai.onnx.ml');
  const ints = (name, v) => n.msg(5, attr(name, ATTR_INTS, (a) => a.bytes(8, packedInts(v))));
  const floats = (name, v) => n.msg(5, attr(name, ATTR_FLOATS, (a) => a.bytes(7, packedFloats(v))));
  ints('nodes_treeids', ids); ints('nodes_nodeids', nodeIds); ints('nodes_featureids', feats);
  floats('nodes_values', vals);
  n.msg(5, attr('nodes_modes', ATTR_STRINGS, (a) => { for (const m of modes) a.string(9, m); }));
  ints('nodes_truenodeids', trueIds); ints('nodes_falsenodeids', falseIds);
  ints('class_treeids', cTree); ints('class_nodeids', cNode); ints('class_ids', cId); floats('class_weights', cW);
  ints('classlabels_int64s', classes);
  n.msg(5, attr('post_transform', ATTR_STRING, (a) => a.string(4, 'NONE')));
  const g = new PB();
  g.msg(1, n);
  g.string(2, 'forest');
  g.msg(11, valueInfo('input', ['batch', nFeatures]));
  const shape = (dims) => { const s = new PB(); for (const d of dims) s.msg(1, typeof d === 'string' ? new PB().string(2, d) : new PB().int(1, d)); return s; };
  g.msg(12, new PB().string(1, 'label').msg(2, new PB().msg(1, new PB().int(1, INT64).msg(2, shape(['batch'])))));
  g.msg(12, new PB().string(1, 'probabilities').msg(2, new PB().msg(1, new PB().int(1, FLOAT).msg(2, shape(['batch', classes.length])))));
  const m = new PB();
  m.int(1, 8);
  m.string(2, 'mlrt-bench');
  m.msg(7, g);
  m.msg(8, new PB().string(1, '').int(2, 15));
  m.msg(8, new PB().string(1, 'ai.onnx.ml').int(2, 3));
  return m.finish();
}
