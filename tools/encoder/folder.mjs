// folder.mjs — a BERT sentence encoder's Hugging Face / sentence-transformers folder, in memory, from a
// seed: { 'model.safetensors': Uint8Array, 'config.json': ..., 'tokenizer.json': ..., ... } as the real
// repositories lay them out (all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2, gte-small), with random
// weights in the real shapes (weights.mjs) and the real bert-base-uncased tokenizer (tools/text/).
//
//   makeFolder('all-MiniLM-L6-v2')                          // the profile as published
//   makeFolder('bge-small-en-v1.5', { dtype: 'BF16', prefix: true, seed: 3 })
//   makeFolder('tiny', { pooling: 'cls', normalize: false, modules: false })
import { makeWeights, tensorSpecs, tensorBytes, writeSafetensors, shapeOf } from './weights.mjs';
import { bertUncasedVocab, bertTokenizerJson } from '../text/bert-vocab.mjs';

/**
 * The model repositories we imitate. shape: weights.mjs SHAPES; seed: the default seed; pooling,
 * normalize (a 2_Normalize module), maxSeqLength and doLowerCase (sentence_bert_config.json),
 * tokenizer: the tokenizer.json variant of tests/text/corpus.mjs (or 'tiny'), poolingKeys: 5 (the
 * older 1_Pooling/config.json these repositories carry) or 8 (sentence-transformers 3),
 * dtype of model.safetensors.
 * e5-small-v2 / gte-small: Normalize and dtype are our choices (the spec lists them as not
 * confirmed): e5 with Normalize in F32, gte without Normalize in F16, so the profiles cover both.
 */
export const PROFILES = {
  tiny: { shape: 'tiny', seed: 1, pooling: 'mean', normalize: true, maxSeqLength: 64, doLowerCase: false, tokenizer: 'tiny', poolingKeys: 8, dtype: 'F32' },
  'all-MiniLM-L6-v2': { shape: 'minilm-l6', seed: 6, pooling: 'mean', normalize: true, maxSeqLength: 256, doLowerCase: false, tokenizer: 'all-MiniLM-L6-v2', poolingKeys: 5, dtype: 'F32' },
  'bge-small-en-v1.5': { shape: 'small-l12', seed: 12, pooling: 'cls', normalize: true, maxSeqLength: 512, doLowerCase: true, tokenizer: 'bge-small-en-v1.5', poolingKeys: 5, dtype: 'F32' },
  'e5-small-v2': { shape: 'small-l12', seed: 12, pooling: 'mean', normalize: true, maxSeqLength: 512, doLowerCase: false, tokenizer: 'e5-small-v2', poolingKeys: 8, dtype: 'F32' },
  'gte-small': { shape: 'small-l12', seed: 12, pooling: 'mean', normalize: false, maxSeqLength: 512, doLowerCase: false, tokenizer: 'gte-small', poolingKeys: 8, dtype: 'F16' },
};

let vocabCache = null, variantCache = null;
export function vocab() { return (vocabCache ??= bertUncasedVocab()); }

/** The tokenizer.json object of a profile's tokenizer (the tokenizer tests' variants, shared). */
export async function tokenizerJson(name) {
  if (name === 'tiny') {
    return bertTokenizerJson(vocab(), { truncation: { direction: 'Right', max_length: 64, strategy: 'LongestFirst', stride: 0 } });
  }
  variantCache ??= (await import('../../tests/text/corpus.mjs')).variants();
  const j = variantCache[name];
  if (!j) throw new Error(`encoder folder: no tokenizer variant ${name}`);
  return j;
}

/** config.json as transformers writes it (sorted keys, 2-space indent) for a shape. */
export function configJson(shape, profileName = 'tiny') {
  const s = shapeOf(shape);
  const c = {
    architectures: ['BertModel'], attention_probs_dropout_prob: 0.1, classifier_dropout: null,
    hidden_act: 'gelu', hidden_dropout_prob: 0.1, hidden_size: s.hidden, initializer_range: 0.02,
    intermediate_size: s.ffn, layer_norm_eps: 1e-12, max_position_embeddings: s.positions, model_type: 'bert',
    num_attention_heads: s.heads, num_hidden_layers: s.layers, pad_token_id: 0, position_embedding_type: 'absolute',
    torch_dtype: 'float32', transformers_version: '4.39.1', type_vocab_size: s.types, use_cache: true, vocab_size: s.vocab,
  };
  if (profileName === 'all-MiniLM-L6-v2') { // the spec's copy of the repository's config.json
    c._name_or_path = 'sentence-transformers/all-MiniLM-L6-v2';
    c.gradient_checkpointing = false;
  } else if (profileName === 'bge-small-en-v1.5') {
    c._name_or_path = '/root/.cache/torch/sentence_transformers/BAAI_bge-small-en/';
    c.id2label = { 0: 'LABEL_0' };
    c.label2id = { LABEL_0: 0 };
    c.transformers_version = '4.30.0';
  } else if (profileName !== 'tiny') {
    c._name_or_path = profileName;
  }
  return JSON.stringify(Object.fromEntries(Object.entries(c).sort(([a], [b]) => (a < b ? -1 : 1))), null, 2) + '\n';
}

function poolingConfig(dim, pooling, keys) {
  const c = {
    word_embedding_dimension: dim,
    pooling_mode_cls_token: pooling === 'cls',
    pooling_mode_mean_tokens: pooling === 'mean',
    pooling_mode_max_tokens: pooling === 'max',
    pooling_mode_mean_sqrt_len_tokens: false,
  };
  if (keys === 8) Object.assign(c, { pooling_mode_weightedmean_tokens: false, pooling_mode_lasttoken: false, include_prompt: true });
  return c;
}

function modulesJson(normalize) {
  const m = [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  ];
  if (normalize) m.push({ idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' });
  return m;
}

/** Resolve a profile name (or shape name) and options into the full option set makeFolder uses. */
const BY_SHAPE = { tiny: 'tiny', 'minilm-l6': 'all-MiniLM-L6-v2', 'small-l12': 'e5-small-v2' };

export function folderOptions(profile = 'tiny', opts = {}) {
  const name = PROFILES[profile] ? profile : BY_SHAPE[profile];
  if (!name) throw new Error(`encoder folder: unknown profile or shape ${JSON.stringify(profile)} (${[...Object.keys(PROFILES), ...Object.keys(BY_SHAPE)].join(', ')})`);
  return { profile: name, ...PROFILES[name], prefix: false, modules: true, extras: true, vocabTxt: true, ...opts };
}

/**
 * The folder's files by their repository names. opts (all optional, the profile's by default):
 *   seed, dtype ('F32' | 'F16' | 'BF16'), pooling ('mean' | 'cls'), normalize, maxSeqLength, doLowerCase,
 *   prefix (true: `bert.`-prefixed names plus a task head cls.predictions.*, as a BertForMaskedLM
 *   checkpoint), extras (pooler.* and the int64 embeddings.position_ids; default true),
 *   modules (false: no modules.json, 1_Pooling/ or sentence_bert_config.json: sentence-transformers
 *   then means mean pooling and no Normalize), vocabTxt (vocab.txt too; default true),
 *   tokenizer (false: no tokenizer.json, vocab.txt only).
 */
export async function makeFolder(profile = 'tiny', opts = {}) {
  const o = folderOptions(profile, opts);
  const s = shapeOf(o.shape);
  const enc = new TextEncoder();
  const json = (v) => enc.encode(JSON.stringify(v, null, 2) + '\n');
  const w = makeWeights(o.shape, o.seed, o.dtype, { extras: o.extras, heads: o.prefix });
  const tensors = [];
  for (const { name } of tensorSpecs(o.shape, { extras: o.extras, heads: o.prefix })) {
    const t = w.get(name);
    const isInt = t.data instanceof BigInt64Array;
    const full = o.prefix && !name.startsWith('cls.') ? `bert.${name}` : name;
    tensors.push({ name: full, dtype: isInt ? 'I64' : o.dtype, dims: t.dims, bytes: tensorBytes(t.data, isInt ? 'I64' : o.dtype) });
  }
  const files = {
    'model.safetensors': writeSafetensors(tensors),
    'config.json': enc.encode(configJson(o.shape, o.profile)),
    'special_tokens_map.json': json({ cls_token: '[CLS]', mask_token: '[MASK]', pad_token: '[PAD]', sep_token: '[SEP]', unk_token: '[UNK]' }),
    'tokenizer_config.json': json({
      clean_up_tokenization_spaces: true, cls_token: '[CLS]', do_basic_tokenize: true, do_lower_case: true,
      mask_token: '[MASK]', model_max_length: 512, never_split: null, pad_token: '[PAD]', sep_token: '[SEP]',
      strip_accents: null, tokenize_chinese_chars: true, tokenizer_class: 'BertTokenizer', unk_token: '[UNK]',
    }),
  };
  if (o.tokenizer !== false) files['tokenizer.json'] = json(await tokenizerJson(o.tokenizer));
  if (o.vocabTxt) files['vocab.txt'] = enc.encode(vocab().join('\n') + '\n');
  if (o.modules) {
    files['modules.json'] = json(modulesJson(o.normalize));
    files['1_Pooling/config.json'] = json(poolingConfig(s.hidden, o.pooling, o.poolingKeys));
    files['sentence_bert_config.json'] = json({ max_seq_length: o.maxSeqLength, do_lower_case: o.doLowerCase });
  }
  return files;
}

/** What a folder's sentence-transformers files say: { pooling, normalize, maxSeqLength } (for checks). */
export function folderSemantics(profile, opts = {}) {
  const o = folderOptions(profile, opts);
  if (!o.modules) return { pooling: 'mean', normalize: false, maxSeqLength: Math.min(shapeOf(o.shape).positions, 512) };
  return { pooling: o.pooling, normalize: o.normalize, maxSeqLength: o.maxSeqLength };
}
