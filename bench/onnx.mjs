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
