// tools/apr/encoder.mjs — a BERT-family encoder folder (config.json + model.safetensors) as an aprender
// .apr v2 file, the way `apr import --arch bert` writes one (../shared/specs/bert-encoder.md §5.1): tensor
// names verbatim, metadata model_type "Bert" with the sizes of config.json, F32 (or 16-bit passed
// through), and with quantize 'q8' the dense layers' weights as APR_Q8 (one f32 scale per tensor),
// biases, norms and small tables staying F32. embeddings 'q8' quantizes the word embeddings too.
// The tokenizer and sentence-transformers files are not embedded (aprender does not for BERT): they stay
// beside the .apr. `embedding` ({ pooling: 'cls+mean', normalize, max_seq_length, do_lower_case }: the
// folder's settings as loadEncoder read them) goes into the metadata as mlrt's own key mlrt_embedding,
// which loadEncoder applies when no sentence-transformers files are given with the .apr.
import { DTYPES, writeAprV2, tensorOf } from './writer.mjs';

const fail = (msg) => { throw new Error(`encoder: ${msg}`); };
const SAFETENSORS_DTYPES = { F32: [DTYPES.F32, 4], F16: [DTYPES.F16, 2], BF16: [DTYPES.BF16, 2], I64: [DTYPES.I64, 8],
  I32: [DTYPES.I32, 4], F64: [DTYPES.F64, 8] };

/** The tensors of a SafeTensors file: [{ name, dtype (SafeTensors name), shape, bytes }] in file order. */
export function readSafetensors(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 8) fail('model.safetensors is shorter than its 8-byte header length');
  const n = Number(dv.getBigUint64(0, true));
  if (8 + n > bytes.length) fail('model.safetensors: the header runs past the file');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const data = bytes.subarray(8 + n);
  return Object.entries(header).filter(([k]) => k !== '__metadata__').map(([name, t]) => {
    const [b, e] = t.data_offsets;
    if (!(0 <= b && b <= e && e <= data.length)) fail(`model.safetensors: tensor '${name}' lies outside the data`);
    return { name, dtype: t.dtype, shape: t.shape, bytes: data.subarray(b, e) };
  }).sort((a, b) => a.bytes.byteOffset - b.bytes.byteOffset);
}

/** A tensor's values as f32 (F32, F16, BF16). */
function f32Values(t) {
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength), n = t.bytes.length / SAFETENSORS_DTYPES[t.dtype][1];
  const out = new Float32Array(n), u = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    if (t.dtype === 'F32') out[i] = dv.getFloat32(4 * i, true);
    else if (t.dtype === 'BF16') u[i] = dv.getUint16(2 * i, true) << 16;
    else if (t.dtype === 'F16') {
      const h = dv.getUint16(2 * i, true), s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
      out[i] = e === 31 ? (m ? NaN : s * Infinity) : e ? s * 2 ** (e - 15) * (1 + m / 1024) : s * 2 ** -14 * (m / 1024);
    } else fail(`tensor '${t.name}' is ${t.dtype}: not a float`);
  }
  return out;
}

/**
 * files: { 'config.json': bytes or text, 'model.safetensors': bytes }; options: { quantize: 'q8' | undefined,
 * embeddings: 'q8' | 'f32' (default f32), name }. Returns the .apr v2 bytes and what was written.
 */
export function encoderToApr(files, { quantize, embeddings = 'f32', name = 'encoder', embedding } = {}) {
  const text = (b) => (typeof b === 'string' ? b : new TextDecoder().decode(b));
  if (!files['config.json'] || !files['model.safetensors']) fail('the folder needs config.json and model.safetensors');
  const cfg = JSON.parse(text(files['config.json']));
  if (!['bert', 'mpnet', 'distilbert'].includes(cfg.model_type)) fail(`config.json: model_type '${cfg.model_type}' is not bert, mpnet or distilbert`);
  const mpnet = cfg.model_type === 'mpnet', distil = cfg.model_type === 'distilbert';
  const arch = { bert: 'Bert', mpnet: 'MPNet', distilbert: 'DistilBert' }[cfg.model_type];
  if (quantize && quantize !== 'q8') fail(`--quantize ${quantize}: encoders are written as f32 or q8`);
  const tensors = readSafetensors(files['model.safetensors']);
  const out = [], shapes = {};
  let params = 0, quantized = 0;
  for (const t of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    shapes[t.name] = t.shape;
    const dense = t.shape.length === 2 && /(^|\.)(encoder|transformer)\.layer\.\d+\./.test(t.name);
    const word = /(^|\.)embeddings\.word_embeddings\.weight$/.test(t.name);
    if (!SAFETENSORS_DTYPES[t.dtype]) fail(`tensor '${t.name}': dtype ${t.dtype} is not written`);
    if (t.dtype === 'I64' || t.dtype === 'I32') { // embeddings.position_ids: copied, unused
      out.push({ name: t.name, dtype: SAFETENSORS_DTYPES[t.dtype][0], shape: t.shape, data: t.bytes.slice() });
      continue;
    }
    params += count;
    const q = (quantize === 'q8' && dense) || (word && embeddings === 'q8') ? 'q8' : undefined;
    if (!q && (t.dtype === 'F16' || t.dtype === 'BF16')) { // 16-bit passed through, as apr import does
      out.push({ name: t.name, dtype: SAFETENSORS_DTYPES[t.dtype][0], shape: t.shape, data: t.bytes.slice() });
      continue;
    }
    out.push(tensorOf(t.name, t.shape, f32Values(t), q));
    quantized += q ? 1 : 0;
  }
  const metadata = {
    // (MPNet, DistilBERT: mlrt's own architectures "mpnet" and "distilbert", which apr import does not write; the
    // defaults are their config classes')
    model_type: arch, name, param_count: params, architecture: cfg.model_type, hf_architecture: (cfg.architectures ?? [`${arch}Model`])[0],
    hf_model_type: cfg.model_type, hidden_size: distil ? cfg.dim ?? 768 : cfg.hidden_size ?? 768,
    num_layers: distil ? cfg.n_layers ?? 6 : cfg.num_hidden_layers ?? 12, num_heads: distil ? cfg.n_heads ?? 12 : cfg.num_attention_heads ?? 12,
    num_kv_heads: distil ? cfg.n_heads ?? 12 : cfg.num_attention_heads ?? 12, vocab_size: cfg.vocab_size ?? (mpnet ? 30527 : 30522),
    intermediate_size: distil ? cfg.hidden_dim ?? 3072 : cfg.intermediate_size ?? 3072,
    max_position_embeddings: cfg.max_position_embeddings ?? (mpnet ? 514 : 512), rms_norm_eps: cfg.layer_norm_eps ?? 1e-12,
    ...(mpnet ? { relative_attention_num_buckets: cfg.relative_attention_num_buckets ?? 32 } : {}),
    ...(quantize === 'q8' ? { quantization: { quant_type: 'int8', bits: 8, block_size: null, symmetric: true } } : {}),
    tensor_shapes: shapes,
    // mlrt's own key: sentence-transformers' settings of the folder (modules.json, 1_Pooling/config.json,
    // sentence_bert_config.json), which loadEncoder applies when those files are not beside the .apr
    ...(embedding ? { mlrt_embedding: embedding } : {}),
  };
  return { bytes: writeAprV2({ metadata, tensors: out }), tensors: out.length, quantized, architecture: metadata.architecture };
}
