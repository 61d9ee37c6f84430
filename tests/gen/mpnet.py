#!/usr/bin/python3
"""mpnet.py -- a tiny random-weight MPNet sentence-transformers folder and its golden embeddings.

    /usr/bin/python3 tests/gen/mpnet.py            (from the repository root; a few seconds)

Writes, deterministically (same bytes every run):
  tests/mpnet/tiny/   config.json, model.safetensors (F32, written by hand, tensors in name order, the
                      names Hugging Face's MPNetModel saves), tokenizer.json (an MPNet WordPiece
                      tokenizer, V = 1,076 pieces, on bert-base-uncased's vocabulary, taken from
                      tests/text/corpus.mjs), tokenizer_config.json, modules.json,
                      sentence_bert_config.json, 1_Pooling/config.json (masked mean, then Normalize)
  tests/mpnet/goldens.json   token-id batches (and texts), with their embeddings in float64 (the
                      reference) and float32

Weights, drawn in declaration order from numpy default_rng(7): embeddings and the pooler normal(0, 0.02);
the encoder layers' matrices (attn q k v o, intermediate, output) normal(0, 0.2) -- larger than HF's
0.02 init, else attention and FFN add ~1% to the residual and the position bias moves the embedding by
only ~1e-3; all biases normal(0, 0.02), LayerNorm weights 1 + normal(0, 0.1), LayerNorm biases
normal(0, 0.02), encoder.relative_attention_bias.weight normal(0, 0.5) (so the position bias matters).
Row 1 (padding_idx) of the word and position embeddings is left random, not zeroed as HF initialises it.
Token ids of the id batches come from default_rng(11), never special ids except <s>, </s>, <pad>.

The oracle is MPNetModel's forward written here in plain torch (position ids cumsum(ids != 1) + 1,
no token types, the T5-style relative position bias in 32 buckets shared by all layers, post-norm
layers with the additive mask (1 - m) * finfo.min, erf GELU), then masked mean pooling and
v / max(|v|, 1e-12); run in float64 and in float32. Texts are tokenized by the Rust `tokenizers`
(npm 0.23.2, through node). torch is only for making these fixtures: never a test dependency.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'tests', 'mpnet')
DIR = os.path.join(OUT, 'tiny')
H, I, P, HEADS, LAYERS, BUCKETS, EPS, MAXLEN = 32, 64, 130, 4, 2, 32, 1e-5, 128
BOS, PAD, EOS, UNK = 0, 1, 2, 3


def node(script, stdin):
    r = subprocess.run(['node', '-e', script], input=json.dumps(stdin).encode(), cwd=ROOT, capture_output=True)
    if r.returncode:
        sys.exit(f'node failed: {r.stderr.decode()}')
    return json.loads(r.stdout)


# ------------------------------------------------------------------ vocabulary and tokenizer.json

def vocabulary():
    """<s> <pad> </s> <unk> [UNK], bert-base-uncased's ASCII single characters (ids 999..1995: punctuation,
    digits, a-z), its next 1,000 entries (ids 1996..2995: the commonest words and ## pieces), ##a-##z, <mask>."""
    bert = node("import('./tests/text/corpus.mjs').then(m => console.log(JSON.stringify(m.vocab)))", None)
    assert len(bert) == 30522 and bert[1996] == 'the'
    ascii1 = [s for s in bert[999:1996] if len(s) == 1 and '!' <= s <= '~']
    pieces = ['<s>', '<pad>', '</s>', '<unk>', '[UNK]'] + ascii1 + bert[1996:2996] + ['##' + c for c in 'abcdefghijklmnopqrstuvwxyz']
    out = list(dict.fromkeys(pieces))
    return out + ['<mask>']


def tokenizer_json(vocab):
    added = lambda i, s: dict(id=i, content=s, single_word=False, lstrip=(s == '<mask>'), rstrip=False, normalized=False, special=True)
    tok = lambda s: {'SpecialToken': {'id': s, 'type_id': 0}}
    seq = lambda s: {'Sequence': {'id': s, 'type_id': 0}}
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(i, vocab[i]) for i in (0, 1, 2, 3, len(vocab) - 1)],
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [tok('<s>'), seq('A'), tok('</s>')],
            'pair': [tok('<s>'), seq('A'), tok('</s>'), tok('</s>'), seq('B'), tok('</s>')],
            'special_tokens': {s: {'id': s, 'ids': [vocab.index(s)], 'tokens': [s]} for s in ('<s>', '</s>')}},
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##', 'max_input_chars_per_word': 100,
                  'vocab': {s: i for i, s in enumerate(vocab)}},
    }


TOKENIZE_JS = """
const { Tokenizer } = require('./node_modules/tokenizers');
let s = ''; process.stdin.on('data', (d) => s += d).on('end', async () => {
  const { file, texts, max } = JSON.parse(s), t = Tokenizer.fromFile(file), out = [];
  if (max) t.setTruncation(max);
  for (const x of texts) out.push(Array.from((await t.encode(x)).getIds()));
  console.log(JSON.stringify(out));
});"""


# ------------------------------------------------------------------ weights and safetensors

def weight_specs(V):
    """[(name, shape, init)] in declaration order (the order of the draws)."""
    out = [('embeddings.word_embeddings.weight', [V, H], 'w'), ('embeddings.position_embeddings.weight', [P, H], 'w'),
           ('embeddings.LayerNorm.weight', [H], 'lnw'), ('embeddings.LayerNorm.bias', [H], 'b')]
    for L in range(LAYERS):
        p = f'encoder.layer.{L}.'
        for m in 'qkvo':
            out += [(f'{p}attention.attn.{m}.weight', [H, H], 'lw'), (f'{p}attention.attn.{m}.bias', [H], 'b')]
        out += [(f'{p}attention.LayerNorm.weight', [H], 'lnw'), (f'{p}attention.LayerNorm.bias', [H], 'b'),
                (f'{p}intermediate.dense.weight', [I, H], 'lw'), (f'{p}intermediate.dense.bias', [I], 'b'),
                (f'{p}output.dense.weight', [H, I], 'lw'), (f'{p}output.dense.bias', [H], 'b'),
                (f'{p}output.LayerNorm.weight', [H], 'lnw'), (f'{p}output.LayerNorm.bias', [H], 'b')]
    out += [('encoder.relative_attention_bias.weight', [BUCKETS, HEADS], 'rel'),
            ('pooler.dense.weight', [H, H], 'w'), ('pooler.dense.bias', [H], 'b')]
    return out


def make_weights(V):
    rng = np.random.default_rng(7)
    init = {'w': (0.0, 0.02), 'lw': (0.0, 0.2), 'b': (0.0, 0.02), 'lnw': (1.0, 0.1), 'rel': (0.0, 0.5)}
    return {n: (init[k][0] + rng.normal(0.0, init[k][1], size=s)).astype(np.float32) for n, s, k in weight_specs(V)}


def write_safetensors(path, weights):
    header, blobs, at = {'__metadata__': {'format': 'pt'}}, [], 0
    for name in sorted(weights):
        b = weights[name].astype('<f4').tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(weights[name].shape), 'data_offsets': [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


# ------------------------------------------------------------------ the reference forward

THRESHOLDS = [8, 12, 16, 23, 32, 46, 64, 91]   # n >= THRESHOLDS[k] -> bucket 8 + k (HF's float log, verified)


def bucket(rp):
    n = -rp
    ret = 16 if n < 0 else 0
    n = abs(n)
    return ret + (n if n < 8 else 7 + sum(n >= t for t in THRESHOLDS))


def position_ids(ids):
    m = (ids != PAD).long()
    return torch.cumsum(m, dim=1) * m + PAD


def forward(W, ids, mask, dtype, use_bias=True):
    """Sentence embeddings [B, H] of ids [B, T] with attention mask [B, T], in dtype."""
    w = {k: torch.from_numpy(v).to(dtype) for k, v in W.items()}
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (H,), w[p + '.weight'], w[p + '.bias'], EPS)
    lin = lambda x, p: x @ w[p + '.weight'].T + w[p + '.bias']
    B, T = ids.shape
    d = H // HEADS
    x = ln(w['embeddings.word_embeddings.weight'][ids] + w['embeddings.position_embeddings.weight'][position_ids(ids)], 'embeddings.LayerNorm')
    rel = torch.tensor([[bucket(j - i) for j in range(T)] for i in range(T)])
    bias = w['encoder.relative_attention_bias.weight'][rel].permute(2, 0, 1)[None]        # [1, heads, T, T]
    if not use_bias:
        bias = torch.zeros_like(bias)
    m = mask.to(dtype)
    add = (1.0 - m)[:, None, None, :] * torch.finfo(dtype).min
    heads = lambda t: t.view(B, T, HEADS, d).transpose(1, 2)
    for L in range(LAYERS):
        p = f'encoder.layer.{L}.'
        q, k, v = (heads(lin(x, f'{p}attention.attn.{n}')) for n in 'qkv')
        scores = q @ k.transpose(-1, -2) / d ** 0.5 + bias + add
        c = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, H)
        a = ln(lin(c, f'{p}attention.attn.o') + x, f'{p}attention.LayerNorm')
        f = lin(a, f'{p}intermediate.dense')
        f = 0.5 * f * (1.0 + torch.erf(f / 2 ** 0.5))
        x = ln(lin(f, f'{p}output.dense') + a, f'{p}output.LayerNorm')
    v = (x * m[:, :, None]).sum(1) / torch.clamp(m.sum(1, keepdim=True), min=1e-9)
    return v / torch.clamp(v.norm(dim=1, keepdim=True), min=1e-12)


# ------------------------------------------------------------------ inputs

TEXTS = [
    'Hello world!',
    'A man is eating food.',
    'The Café on Main Street opened in 2024 (☕ ★), and it was full.',
    'She said: "Was this the best time of their life?" -- he had no idea.',
    'The <mask> of the city is very old.',
    ('Quantum chromodynamics, xylophones, perambulators, hippopotamuses, onomatopoeia, kaleidoscopes, '
     'juxtapositions and photosynthesizing chrysanthemums are uncommon words here, so they split into pieces.'),
    'WHAT ABOUT THE UPPER CASE? It should be lowercased by the normalizer; accents like naïve, résumé and Zürich are stripped.',
    ('After the war, the new government passed a law which would allow the people of the north to return to their '
     'homes; however, many of them had already moved to other cities, where they found work, married, and raised '
     'families. Historians still argue about whether this policy was a success, a failure, or something in between.'),
]


def row(rng, n, V):
    """<s>, n - 2 random pieces (never a special id), </s>."""
    return [BOS] + rng.integers(4, V - 1, size=n - 2).tolist() + [EOS] if n > 1 else [BOS]


def batch(name, rows, left=False, texts=None):
    T = max(map(len, rows))
    pad = lambda r, v: ([v] * (T - len(r)) + r) if left else (r + [v] * (T - len(r)))
    b = {'name': name, 'ids': [pad(r, PAD) for r in rows], 'mask': [pad([1] * len(r), 0) for r in rows]}
    if texts is not None:
        b['texts'] = texts
    return b


def inputs(V, tok_file):
    rng = np.random.default_rng(11)
    out = [batch(f'single-{n}', [row(rng, n, V)]) for n in (2, 5, 17, 40, 100, 128)]
    out.append(batch('padded', [row(rng, n, V) for n in (3, 9, 33, 64, 120)]))
    out.append(batch('left', [row(rng, n, V) for n in (7, 20, 50)], left=True))
    inner = [row(rng, 12, V), row(rng, 30, V)]
    inner[0][6] = PAD
    inner[1][10] = inner[1][11] = inner[1][25] = PAD
    out.append(batch('inner_pad', inner))
    toks = node(TOKENIZE_JS, {'file': tok_file, 'texts': [t.strip() for t in TEXTS], 'max': MAXLEN})
    out += [batch(f'texts-{i}', [ids], texts=[t]) for i, (t, ids) in enumerate(zip(TEXTS, toks))]
    return out


# ------------------------------------------------------------------ main

def dump(path, obj, **kw):
    with open(path, 'w') as f:
        f.write(json.dumps(obj, ensure_ascii=False, **kw) + '\n')


def main():
    torch.set_num_threads(1)
    os.makedirs(os.path.join(DIR, '1_Pooling'), exist_ok=True)
    vocab = vocabulary()
    V = len(vocab)
    dump(os.path.join(DIR, 'config.json'), {
        'architectures': ['MPNetModel'], 'attention_probs_dropout_prob': 0.1, 'bos_token_id': BOS, 'eos_token_id': EOS,
        'hidden_act': 'gelu', 'hidden_dropout_prob': 0.1, 'hidden_size': H, 'initializer_range': 0.02,
        'intermediate_size': I, 'layer_norm_eps': EPS, 'max_position_embeddings': P, 'model_type': 'mpnet',
        'num_attention_heads': HEADS, 'num_hidden_layers': LAYERS, 'pad_token_id': PAD,
        'relative_attention_num_buckets': BUCKETS, 'torch_dtype': 'float32', 'transformers_version': '4.41.0',
        'vocab_size': V}, indent=2, sort_keys=True)
    tok_file = os.path.join(DIR, 'tokenizer.json')
    dump(tok_file, tokenizer_json(vocab))
    dump(os.path.join(DIR, 'tokenizer_config.json'), {
        'do_lower_case': True, 'model_max_length': 512, 'tokenizer_class': 'MPNetTokenizer', 'bos_token': '<s>',
        'eos_token': '</s>', 'unk_token': '[UNK]', 'sep_token': '</s>', 'pad_token': '<pad>', 'cls_token': '<s>',
        'mask_token': '<mask>'}, indent=2)
    dump(os.path.join(DIR, 'modules.json'), [
        {'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
        {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
        {'idx': 2, 'name': '2', 'path': '2_Normalize', 'type': 'sentence_transformers.models.Normalize'}], indent=2)
    dump(os.path.join(DIR, '1_Pooling', 'config.json'), {
        'word_embedding_dimension': H, 'pooling_mode_cls_token': False, 'pooling_mode_mean_tokens': True,
        'pooling_mode_max_tokens': False, 'pooling_mode_mean_sqrt_len_tokens': False}, indent=2)
    dump(os.path.join(DIR, 'sentence_bert_config.json'), {'max_seq_length': MAXLEN, 'do_lower_case': False}, indent=2)
    W = make_weights(V)
    write_safetensors(os.path.join(DIR, 'model.safetensors'), W)

    batches = inputs(V, tok_file)
    alone = lambda ids: forward(W, torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long), torch.float64)[0]
    for b in batches:
        ids, mask = torch.tensor(b['ids']), torch.tensor(b['mask'])
        e64, e32 = forward(W, ids, mask, torch.float64), forward(W, ids, mask, torch.float32)
        b['f64'], b['f32'] = e64.tolist(), e32.tolist()
        extra = ''
        if b['name'] in ('padded', 'left', 'inner_pad'):     # (b) each row alone, unpadded
            dev = max((e64[i] - alone([t for t, k in zip(r, mk) if k])).abs().max().item()
                      for i, (r, mk) in enumerate(zip(b['ids'], b['mask'])))
            assert dev < 1e-12, (b['name'], dev)
            extra += f'  batched vs alone {dev:.2e}'
        if b['name'] == 'single-128':                         # (a) the relative position bias matters
            dev = (forward(W, ids, mask, torch.float64, False) - e64).abs().max().item()
            assert dev > 1e-2, dev
            extra += f'  bias zeroed differs by {dev:.3e}'
        if b['name'] == 'inner_pad':                          # (c) position ids of real <pad> tokens
            extra += '\n    position ids: ' + '; '.join(' '.join(map(str, p[:len(r)])) for p, r in zip(position_ids(ids).tolist(), b['ids']))
        if 'texts' in b:
            extra += f'  {len(b["ids"][0])} tokens'
        assert (e32.double() - e64).abs().max().item() < 1e-6
        print(f'{b["name"]:12s} max|f32-f64| {(e32.double() - e64).abs().max().item():.2e}{extra}')
    # one line per batch key, one row per line
    rows = lambda v: '[\n      ' + ',\n      '.join(json.dumps(r, ensure_ascii=False) for r in v) + ']'
    body = ',\n'.join('    {' + ',\n     '.join(f'"{k}": {rows(v) if isinstance(v, list) else json.dumps(v)}' for k, v in b.items()) + '}'
                      for b in batches)
    with open(os.path.join(OUT, 'goldens.json'), 'w') as f:
        f.write('{"generator": "tests/gen/mpnet.py", "folder": "tiny", "dim": %d, "batches": [\n%s\n]}\n' % (H, body))


if __name__ == '__main__':
    main()
