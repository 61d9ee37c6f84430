// onnx-build.mjs — writes and reads the ONNX protobuf messages the tests need, independently of
// mlrt's C reader: a ModelProto builder (graphs of nodes with typed attributes, float and int64
// initializers, value infos with symbolic dims) and a TensorProto reader for ONNX's own test data.
// Field numbers follow onnx.proto.

const enc = new TextEncoder();

export class PB {
  constructor() { this.parts = []; this.len = 0; }
  raw(u8) { this.parts.push(u8); this.len += u8.length; return this; }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v)); // two's complement for negative int64
    const out = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n !== 0n) b |= 0x80;
      out.push(b);
    } while (n !== 0n);
    return this.raw(Uint8Array.from(out));
  }
  tag(field, wire) { return this.varint(field * 8 + wire); }
  int(field, v) { return this.tag(field, 0).varint(v); }
  bytes(field, u8) { return this.tag(field, 2).varint(u8.length).raw(u8); }
  string(field, s) { return this.bytes(field, enc.encode(s)); }
  msg(field, pb) { return this.bytes(field, pb instanceof PB ? pb.finish() : pb); }
  f32(field, v) { const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, v, true); return this.tag(field, 5).raw(b); }
  finish() {
    const out = new Uint8Array(this.len);
    let off = 0;
    for (const p of this.parts) { out.set(p, off); off += p.length; }
    return out;
  }
}

export const FLOAT = 1, INT64 = 7, DOUBLE = 11;

/** A TensorProto: float data (an array or Float32Array) or int64 (a BigInt64Array: see i64), in
 * raw_data, or with typed: true in float_data / int64_data (packed). */
export function tensor(name, dims, data, { typed = false } = {}) {
  const t = new PB();
  for (const d of dims) t.int(1, d);
  const ints = data instanceof BigInt64Array ? data : null;
  t.int(2, ints ? INT64 : FLOAT);
  t.string(8, name);
  if (ints) {
    if (typed) { const p = new PB(); for (const v of ints) p.varint(v); t.bytes(7, p.finish()); }
    else t.bytes(9, new Uint8Array(ints.buffer, ints.byteOffset, ints.byteLength).slice());
  } else {
    const f = Float32Array.from(data);
    if (typed) t.bytes(4, new Uint8Array(f.buffer).slice());
    else t.bytes(9, new Uint8Array(f.buffer).slice());
  }
  return t;
}

export const i64 = (values) => BigInt64Array.from(values, (v) => BigInt(v));

export function valueInfo(name, dims, elemType = FLOAT) {
  const shape = new PB();
  for (const d of dims) shape.msg(1, typeof d === 'string' ? new PB().string(2, d) : new PB().int(1, d));
  return new PB().string(1, name).msg(2, new PB().msg(1, new PB().int(1, elemType).msg(2, shape)));
}

/** attrs: { name: value } with value a number (INT if integral, else FLOAT), { f: x } for a FLOAT
 * that happens to be integral, a string, an array of numbers (INTS) or { floats: [...] }, or
 * { tensor: PB } . */
export function node(op, inputs, outputs, attrs = {}, name = '') {
  const n = new PB();
  for (const i of inputs) n.string(1, i);
  for (const o of outputs) n.string(2, o);
  if (name) n.string(3, name);
  n.string(4, op);
  for (const [k, v] of Object.entries(attrs)) {
    const a = new PB().string(1, k);
    if (typeof v === 'number' && Number.isInteger(v)) a.int(20, 2).int(3, v);
    else if (typeof v === 'number') a.int(20, 1).f32(2, v);
    else if (typeof v === 'string') a.int(20, 3).string(4, v);
    else if (Array.isArray(v)) { const p = new PB(); for (const x of v) p.varint(x); a.int(20, 7).bytes(8, p.finish()); }
    else if (v.f !== undefined) a.int(20, 1).f32(2, v.f);
    else if (v.floats) { const b = new Uint8Array(Float32Array.from(v.floats).buffer); a.int(20, 6).bytes(7, b); }
    else if (v.tensor) a.int(20, 4).msg(5, v.tensor);
    n.msg(5, a);
  }
  return n;
}

/** A ModelProto. g: { nodes: PB[], inits: PB[], inputs: PB[], outputs: PB[], name } */
export function model(g, { opset = 13, irVersion = 8, producer = 'mlrt-tests' } = {}) {
  const gr = new PB();
  for (const n of g.nodes) gr.msg(1, n);
  gr.string(2, g.name ?? 'g');
  for (const t of g.inits ?? []) gr.msg(5, t);
  for (const i of g.inputs) gr.msg(11, i);
  for (const o of g.outputs) gr.msg(12, o);
  const m = new PB();
  m.int(1, irVersion);
  m.string(2, producer);
  m.msg(7, gr);
  m.msg(8, new PB().string(1, '').int(2, opset));
  return m.finish();
}

// ------------------------------------------------------------------ reading

/** The fields of one message: [{ field, wire, value (number/bigint) | bytes (Uint8Array), start, end }]. */
export function fields(u8) {
  const out = [];
  let p = 0;
  const varint = () => {
    let v = 0n, s = 0n;
    for (;;) {
      if (p >= u8.length) throw new Error('truncated varint');
      const b = u8[p++];
      v |= BigInt(b & 0x7f) << s;
      if (!(b & 0x80)) return v;
      s += 7n;
    }
  };
  while (p < u8.length) {
    const start = p;
    const key = Number(varint());
    const field = key >>> 3, wire = key & 7;
    if (wire === 0) out.push({ field, wire, value: varint(), start, end: p });
    else if (wire === 2) { const n = Number(varint()); out.push({ field, wire, bytes: u8.subarray(p, p + n), start, end: p + n }); p += n; }
    else if (wire === 5) { out.push({ field, wire, bytes: u8.subarray(p, p + 4), start, end: p + 4 }); p += 4; }
    else if (wire === 1) { out.push({ field, wire, bytes: u8.subarray(p, p + 8), start, end: p + 8 }); p += 8; }
    else throw new Error(`wire type ${wire}`);
  }
  return out;
}

/** A TensorProto file (ONNX test data): { name, dims, dataType, data: Float32Array | BigInt64Array | null }. */
export function readTensor(u8) {
  const t = { name: '', dims: [], dataType: 0, data: null };
  let raw = null;
  const floats = [], ints = [], doubles = [];
  const dec = new TextDecoder();
  for (const f of fields(u8)) {
    if (f.field === 1) {
      if (f.wire === 0) t.dims.push(Number(f.value));
      else for (const x of fields(packedAsVarints(f.bytes))) t.dims.push(Number(x.value));
    } else if (f.field === 2) t.dataType = Number(f.value);
    else if (f.field === 8) t.name = dec.decode(f.bytes);
    else if (f.field === 9) raw = f.bytes;
    else if (f.field === 4) { const b = f.bytes.slice(); const v = new Float32Array(b.buffer); floats.push(...v); }
    else if (f.field === 7) {
      if (f.wire === 0) ints.push(BigInt.asIntN(64, f.value));
      else for (const x of fields(packedAsVarints(f.bytes))) ints.push(BigInt.asIntN(64, x.value));
    } else if (f.field === 10) { const b = f.bytes.slice(); doubles.push(...new Float64Array(b.buffer)); }
  }
  if (t.dataType === FLOAT) t.data = raw ? new Float32Array(raw.slice().buffer) : Float32Array.from(floats);
  else if (t.dataType === INT64) t.data = raw ? new BigInt64Array(raw.slice().buffer) : BigInt64Array.from(ints);
  else if (t.dataType === DOUBLE) t.data = raw ? new Float64Array(raw.slice().buffer) : Float64Array.from(doubles);
  return t;
}

// Packed varints re-keyed as field 1 varints, so that fields() can split them.
function packedAsVarints(bytes) {
  const out = [];
  for (let i = 0; i < bytes.length; i++) {
    if (i === 0 || !(bytes[i - 1] & 0x80)) out.push(0x08);
    out.push(bytes[i]);
  }
  return Uint8Array.from(out);
}

/** The model with the graph's initializers extended by `extra` (TensorProto bytes): ONNX node tests
 * feed weights as graph inputs; mlrt takes one input, so the others become initializers. */
export function withInitializers(modelBytes, extra) {
  const top = fields(modelBytes);
  const out = new PB();
  for (const f of top) {
    if (f.field === 7) {
      const g = new PB().raw(f.bytes);
      for (const t of extra) g.bytes(5, t);
      out.msg(7, g);
    } else out.raw(modelBytes.subarray(f.start, f.end));
  }
  return out.finish();
}

/** The model with only its graph's first output: for graphs run as rows (predict), before model.run. */
export function firstOutputOnly(modelBytes) {
  const out = new PB();
  for (const f of fields(modelBytes)) {
    if (f.field !== 7) { out.raw(modelBytes.subarray(f.start, f.end)); continue; }
    const g = new PB();
    let outputs = 0;
    for (const x of fields(f.bytes)) if (x.field !== 12 || outputs++ === 0) g.raw(f.bytes.subarray(x.start, x.end));
    out.msg(7, g);
  }
  return out.finish();
}

/** Graph input and output names of a model: { inputs: [{name, elemType}], outputs, inits: Set }. */
export function graphIO(modelBytes) {
  const dec = new TextDecoder();
  const g = fields(modelBytes).find((f) => f.field === 7);
  const res = { inputs: [], outputs: [], inits: new Set() };
  for (const f of fields(g.bytes)) {
    if (f.field === 5) res.inits.add(readTensor(f.bytes).name);
    if (f.field !== 11 && f.field !== 12) continue;
    const vi = fields(f.bytes);
    const name = dec.decode(vi.find((x) => x.field === 1).bytes);
    let elemType = 0;
    const type = vi.find((x) => x.field === 2);
    const tt = type && fields(type.bytes).find((x) => x.field === 1);
    if (tt) elemType = Number(fields(tt.bytes).find((x) => x.field === 1)?.value ?? 0);
    (f.field === 11 ? res.inputs : res.outputs).push({ name, elemType });
  }
  res.inputs = res.inputs.filter((i) => !res.inits.has(i.name));
  return res;
}
