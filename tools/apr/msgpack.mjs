// MessagePack encoder writing what rmp-serde's `to_vec_named` writes for aprender's metadata:
// structs and maps as maps with string keys (in the order given), integers in their smallest
// encoding, other numbers as float64 (serde_json floats), F32 values as float32 (f32 struct
// fields), strings as fixstr/str8/str16/str32, Uint8Array as bin. Browser-safe (no Node API).

/** A number that rmp-serde writes as float32 (an `f32` struct field). */
export class F32 {
  constructor(value) { this.value = value; }
}

/** Map entries written exactly in this order, keys possibly repeated (objects reorder integer-like keys). */
export class OrderedMap {
  constructor(entries) { this.entries = entries; }
}

const utf8 = new TextEncoder();

class Out {
  constructor() { this.buf = new Uint8Array(256); this.len = 0; }
  room(n) {
    if (this.len + n <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    bigger.set(this.buf.subarray(0, this.len));
    this.buf = bigger;
  }
  byte(b) { this.room(1); this.buf[this.len++] = b; }
  bytes(b) { this.room(b.length); this.buf.set(b, this.len); this.len += b.length; }
  // big-endian fixed-width field after a marker byte
  be(marker, width, write) {
    this.room(1 + width);
    this.buf[this.len] = marker;
    write(new DataView(this.buf.buffer, this.len + 1, width));
    this.len += 1 + width;
  }
  result() { return this.buf.slice(0, this.len); }
}

// Length prefixes: fix form (when the type has one), then 8-, 16-, 32-bit forms.
function length(out, n, fixBase, fixMax, m8, m16, m32) {
  if (fixBase !== null && n <= fixMax) out.byte(fixBase | n);
  else if (m8 !== null && n < 0x100) { out.byte(m8); out.byte(n); }
  else if (n < 0x10000) out.be(m16, 2, (d) => d.setUint16(0, n));
  else if (n <= 0xffffffff) out.be(m32, 4, (d) => d.setUint32(0, n));
  else throw new RangeError(`msgpack: ${n} items do not fit a 32-bit length`);
}

// rmp's write_uint / write_sint: the smallest form that holds the value.
function integer(out, v) {
  if (v >= 0n) {
    if (v < 0x80n) out.byte(Number(v));
    else if (v < 0x100n) { out.byte(0xcc); out.byte(Number(v)); }
    else if (v < 0x10000n) out.be(0xcd, 2, (d) => d.setUint16(0, Number(v)));
    else if (v < 0x100000000n) out.be(0xce, 4, (d) => d.setUint32(0, Number(v)));
    else if (v < 1n << 64n) out.be(0xcf, 8, (d) => d.setBigUint64(0, v));
    else throw new RangeError(`msgpack: integer ${v} does not fit 64 bits`);
  } else if (v >= -32n) out.byte(Number(v) & 0xff);
  else if (v >= -0x80n) { out.byte(0xd0); out.byte(Number(v) & 0xff); }
  else if (v >= -0x8000n) out.be(0xd1, 2, (d) => d.setInt16(0, Number(v)));
  else if (v >= -0x80000000n) out.be(0xd2, 4, (d) => d.setInt32(0, Number(v)));
  else if (v >= -(1n << 63n)) out.be(0xd3, 8, (d) => d.setBigInt64(0, v));
  else throw new RangeError(`msgpack: integer ${v} does not fit 64 bits`);
}

// A JS number is an integer for serde_json when it is integral, not -0 and fits u64/i64.
const isJsonInteger = (v) => Number.isInteger(v) && !Object.is(v, -0) && v >= -(2 ** 63) && v < 2 ** 64;

function value(out, v, depth) {
  if (depth > 128) throw new RangeError('msgpack: value nests deeper than 128 levels');
  if (v === null || v === undefined) out.byte(0xc0);
  else if (v === true || v === false) out.byte(v ? 0xc3 : 0xc2);
  else if (typeof v === 'bigint') integer(out, v);
  else if (typeof v === 'number') {
    if (isJsonInteger(v)) integer(out, BigInt(v));
    else out.be(0xcb, 8, (d) => d.setFloat64(0, v));
  } else if (v instanceof F32) out.be(0xca, 4, (d) => d.setFloat32(0, v.value));
  else if (typeof v === 'string') {
    const s = utf8.encode(v);
    length(out, s.length, 0xa0, 31, 0xd9, 0xda, 0xdb);
    out.bytes(s);
  } else if (v instanceof Uint8Array) {
    length(out, v.length, null, -1, 0xc4, 0xc5, 0xc6);
    out.bytes(v);
  } else if (Array.isArray(v)) {
    length(out, v.length, 0x90, 15, null, 0xdc, 0xdd);
    for (const x of v) value(out, x, depth + 1);
  } else if (typeof v === 'object') {
    const entries = v instanceof OrderedMap ? v.entries : v instanceof Map ? [...v] : Object.entries(v);
    length(out, entries.length, 0x80, 15, null, 0xde, 0xdf);
    for (const [k, x] of entries) {
      if (typeof k !== 'string') throw new TypeError(`msgpack: map keys must be strings, got ${typeof k}`);
      value(out, k, depth + 1);
      value(out, x, depth + 1);
    }
  } else throw new TypeError(`msgpack: cannot encode a ${typeof v}`);
}

/** MessagePack bytes of v (see the file comment for the type mapping). */
export function encodeMsgpack(v) {
  const out = new Out();
  value(out, v, 0);
  return out.result();
}
