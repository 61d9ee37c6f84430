#!/usr/bin/python3
"""distilbert.py -- a tiny random-weight DistilBERT sentence-transformers folder and its golden embeddings.

    /usr/bin/python3 tests/gen/distilbert.py       (from the repository root; a few seconds)

Writes, deterministically (same bytes every run):
  tests/distilbert/tiny/  config.json (DistilBERT's own key names: dim, hidden_dim, n_heads, n_layers, ...),
                      model.safetensors (F32, written by hand, tensors in name order, the names Hugging
                      Face's DistilBertModel saves, no prefix), tokenizer.json (a BERT uncased WordPiece
                      tokenizer as distilbert-base-uncased's, V = 1,075 pieces: [PAD] [UNK] [CLS] [SEP]
                      [MASK], then bert-base-uncased's ASCII single characters, its commonest 1,000 words
                      and ## pieces, ##a-##z, taken from tests/text/corpus.mjs), tokenizer_config.json,
                      modules.json, sentence_bert_config.json, 1_Pooling/config.json (masked mean, then
                      Normalize)
  tests/distilbert/goldens.json   token-id batches (and texts), with their embeddings in float64 (the
                      reference) and float32

Weights, drawn in declaration order from numpy default_rng(8): word and position embeddings normal(0, 0.02);
the layers' matrices (q_lin k_lin v_lin out_lin, ffn.lin1, ffn.lin2) normal(0, 0.2) -- larger than HF's
0.02 init, else attention and FFN barely move the residual; all biases normal(0, 0.02), LayerNorm weights
1 + normal(0, 0.1), LayerNorm biases normal(0, 0.02). Row 0 ([PAD]) of the word embeddings is left random.
Token ids of the id batches come from default_rng(12), never special ids except [CLS], [SEP], [PAD].

The oracle is DistilBertModel's forward written here in plain torch: x = LayerNorm(word[ids] + pos[0..T-1])
(no token types, sinusoidal_pos_embds false), post-norm layers with q scaled by 1/sqrt(d) before q k^T,
masked keys filled with finfo.min, erf GELU, all LayerNorm eps 1e-12; then masked mean pooling and
v / max(|v|, 1e-12); run in float64 and in float32. Positions are the plain row indices 0..T-1 also in
LEFT-padded rows (HF does not shift them): a row left-padded by k tokens puts its real tokens at
positions k..T-1, so its embedding differs from the same row run alone -- the `left` goldens record that,
as HF computes it. Texts are tokenized by the Rust `tokenizers` (npm 0.23.2, through node).
torch is only for making these fixtures: never a test dependency.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'tests', 'distilbert')
DIR = os.path.join(OUT, 'tiny')
H, F, P, HEADS, LAYERS, EPS, MAXLEN = 32, 64, 128, 4, 2, 1e-12, 128
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']


def node(script, stdin):
    r = subprocess.run(['node', '-e', script], input=json.dumps(stdin).encode(), cwd=ROOT, capture_output=True)
    if r.returncode:
        sys.exit(f'node failed: {r.stderr.decode()}')
    return json.loads(r.stdout)


# ------------------------------------------------------------------ vocabulary and tokenizer.json

def vocabulary():
    """The five specials, bert-base-uncased's ASCII single characters (ids 999..1995: punctuation, digits,
    a-z), its next 1,000 entries (ids 1996..2995: the commonest words and ## pieces), ##a-##z."""
    bert = node("import('./tests/text/corpus.mjs').then(m => console.log(JSON.stringify(m.vocab)))", None)
    assert len(bert) == 30522 and bert[1996] == 'the'
    ascii1 = [s for s in bert[999:1996] if len(s) == 1 and '!' <= s <= '~']
    pieces = SPECIALS + ascii1 + bert[1996:2996] + ['##' + c for c in 'abcdefghijklmnopqrstuvwxyz']
    return list(dict.fromkeys(pieces))


def tokenizer_json(vocab):
    added = lambda i, s: dict(id=i, content=s, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)
    tok = lambda s, t=0: {'SpecialToken': {'id': s, 'type_id': t}}
    seq = lambda s, t=0: {'Sequence': {'id': s, 'type_id': t}}
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(i, s) for i, s in enumerate(SPECIALS)],
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [tok('[CLS]'), seq('A'), tok('[SEP]')],
            'pair': [tok('[CLS]'), seq('A'), tok('[SEP]'), seq('B', 1), tok('[SEP]', 1)],
            'special_tokens': {s: {'id': s, 'ids': [vocab.index(s)], 'tokens': [s]} for s in ('[CLS]', '[SEP]')}},
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
        p = f'transformer.layer.{L}.'
        for m in ('q_lin', 'k_lin', 'v_lin', 'out_lin'):
            out += [(f'{p}attention.{m}.weight', [H, H], 'lw'), (f'{p}attention.{m}.bias', [H], 'b')]
        out += [(f'{p}sa_layer_norm.weight', [H], 'lnw'), (f'{p}sa_layer_norm.bias', [H], 'b'),
                (f'{p}ffn.lin1.weight', [F, H], 'lw'), (f'{p}ffn.lin1.bias', [F], 'b'),
                (f'{p}ffn.lin2.weight', [H, F], 'lw'), (f'{p}ffn.lin2.bias', [H], 'b'),
                (f'{p}output_layer_norm.weight', [H], 'lnw'), (f'{p}output_layer_norm.bias', [H], 'b')]
    return out


def make_weights(V):
    rng = np.random.default_rng(8)
    init = {'w': (0.0, 0.02), 'lw': (0.0, 0.2), 'b': (0.0, 0.02), 'lnw': (1.0, 0.1)}
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

def forward(W, ids, mask, dtype):
    """Sentence embeddings [B, H] of ids [B, T] with attention mask [B, T], in dtype."""
    w = {k: torch.from_numpy(v).to(dtype) for k, v in W.items()}
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (H,), w[p + '.weight'], w[p + '.bias'], EPS)
    lin = lambda x, p: x @ w[p + '.weight'].T + w[p + '.bias']
    B, T = ids.shape
    d = H // HEADS
    x = ln(w['embeddings.word_embeddings.weight'][ids] + w['embeddings.position_embeddings.weight'][torch.arange(T)],
           'embeddings.LayerNorm')
    keep = (mask != 0)[:, None, None, :]                                                 # [B, 1, 1, T]
    heads = lambda t: t.view(B, T, HEADS, d).transpose(1, 2)
    for L in range(LAYERS):
        p = f'transformer.layer.{L}.'
        q, k, v = (heads(lin(x, f'{p}attention.{n}')) for n in ('q_lin', 'k_lin', 'v_lin'))
        scores = (q / d ** 0.5) @ k.transpose(-1, -2)
        scores = scores.masked_fill(~keep, torch.finfo(dtype).min)
        c = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, H)
        sa = ln(lin(c, f'{p}attention.out_lin') + x, f'{p}sa_layer_norm')
        f = lin(sa, f'{p}ffn.lin1')
        f = 0.5 * f * (1.0 + torch.erf(f / 2 ** 0.5))
        x = ln(lin(f, f'{p}ffn.lin2') + sa, f'{p}output_layer_norm')
    m = mask.to(dtype)
    v = (x * m[:, :, None]).sum(1) / torch.clamp(m.sum(1, keepdim=True), min=1e-9)
    return v / torch.clamp(v.norm(dim=1, keepdim=True), min=1e-12)


# ------------------------------------------------------------------ inputs

TEXTS = [
    'Good morning.',
    'A man is eating food.',
    'The Café on Main Street opened in 2024 (☕ ★), and it was full.',
    'She said: "Was this the best time of their life?" -- he had no idea.',
    'The [MASK] of the city is very old.',
    ('Quantum chromodynamics, xylophones, perambulators, hippopotamuses, onomatopoeia, kaleidoscopes, '
     'juxtapositions and photosynthesizing chrysanthemums are uncommon words here, so they split into pieces.'),
    'WHAT ABOUT THE UPPER CASE? It should be lowercased by the normalizer; accents like naïve, résumé and Zürich are stripped.',
    ('After the war, the new government passed a law which would allow the people of the north to return to their '
     'homes; however, many of them had already moved to other cities, where they found work, married, and raised '
     'families. Historians still argue about whether this policy was a success, a failure, or something in between.'),
]


def row(rng, n, V):
    """[CLS], n - 2 random pieces (never a special id), [SEP]."""
    return [CLS] + rng.integers(MASK + 1, V, size=n - 2).tolist() + [SEP]


def batch(name, rows, left=False, texts=None):
    T = max(map(len, rows))
    pad = lambda r, v: ([v] * (T - len(r)) + r) if left else (r + [v] * (T - len(r)))
    b = {'name': name, 'ids': [pad(r, PAD) for r in rows], 'mask': [pad([1] * len(r), 0) for r in rows]}
    if texts is not None:
        b['texts'] = texts
    return b


def inputs(V, tok_file):
    rng = np.random.default_rng(12)
    out = [batch(f'single-{n}', [row(rng, n, V)]) for n in (2, 6, 31, 77, 128)]
    out.append(batch('padded', [row(rng, n, V) for n in (3, 17, 60, 128)]))
    out.append(batch('left', [row(rng, n, V) for n in (5, 12, 40)], left=True))
    toks = node(TOKENIZE_JS, {'file': tok_file, 'texts': TEXTS, 'max': MAXLEN})
    for ids in toks:
        assert ids[0] == CLS and ids[-1] == SEP and len(ids) <= MAXLEN and CLS not in ids[1:] and SEP not in ids[:-1], ids
    assert MASK in toks[4], toks[4]                     # the literal [MASK] is the added token, not split
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
        'activation': 'gelu', 'architectures': ['DistilBertModel'], 'attention_dropout': 0.1, 'dim': H, 'dropout': 0.1,
        'hidden_dim': F, 'initializer_range': 0.02, 'max_position_embeddings': P, 'model_type': 'distilbert',
        'n_heads': HEADS, 'n_layers': LAYERS, 'pad_token_id': PAD, 'qa_dropout': 0.1, 'seq_classif_dropout': 0.2,
        'sinusoidal_pos_embds': False, 'tie_weights_': True, 'torch_dtype': 'float32', 'transformers_version': '4.41.0',
        'vocab_size': V}, indent=2, sort_keys=True)
    tok_file = os.path.join(DIR, 'tokenizer.json')
    dump(tok_file, tokenizer_json(vocab))
    dump(os.path.join(DIR, 'tokenizer_config.json'), {
        'do_lower_case': True, 'model_max_length': 512, 'tokenizer_class': 'DistilBertTokenizer', 'cls_token': '[CLS]',
        'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]', 'mask_token': '[MASK]'}, indent=2)
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
        if b['name'] in ('padded', 'left'):                   # each row alone, unpadded
            devs = [(e64[i] - alone([t for t, k in zip(r, mk) if k])).abs().max().item()
                    for i, (r, mk) in enumerate(zip(b['ids'], b['mask']))]
            if b['name'] == 'padded':                         # (a) right padding changes nothing
                assert max(devs) < 1e-12, devs
            else:                                             # (b) left padding shifts the positions
                assert min(devs[:-1]) > 1e-3 and devs[-1] < 1e-12, devs
            extra += '  batched vs alone ' + ' '.join(f'{x:.2e}' for x in devs)
        if 'texts' in b:
            extra += f'  {len(b["ids"][0])} tokens, {b["ids"][0].count(UNK)} [UNK]'
        dev = (e32.double() - e64).abs().max().item()
        assert dev < 1e-6, (b['name'], dev)
        print(f'{b["name"]:12s} max|f32-f64| {dev:.2e}{extra}')
    texts = torch.tensor([b['f64'][0] for b in batches if 'texts' in b], dtype=torch.float64)
    dist = torch.cdist(texts, texts) + torch.eye(len(texts)) * 9
    assert dist.min().item() > 1e-2, dist.min().item()           # (c) distinct texts, distinct embeddings
    print(f'texts: min pairwise |e_i - e_j| {dist.min().item():.3f}, max cosine {(texts @ texts.T - torch.eye(len(texts)) * 9).max().item():.3f}')
    # one line per batch key, one row per line
    rows = lambda v: '[\n      ' + ',\n      '.join(json.dumps(r, ensure_ascii=False) for r in v) + ']'
    body = ',\n'.join('    {' + ',\n     '.join(f'"{k}": {rows(v) if isinstance(v, list) else json.dumps(v)}' for k, v in b.items()) + '}'
                      for b in batches)
    with open(os.path.join(OUT, 'goldens.json'), 'w') as f:
        f.write('{"generator": "tests/gen/distilbert.py", "folder": "tiny", "dim": %d, "batches": [\n%s\n]}\n' % (H, body))


if __name__ == '__main__':
    main()
