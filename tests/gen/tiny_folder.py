"""tiny_folder.py -- what tests/gen/mpnet.py and tests/gen/distilbert.py share: the pieces of a tiny random-weight
sentence-transformers folder of a BERT-family encoder (uncased WordPiece), and of its goldens.

Not run on its own: the generators `import tiny_folder` (their own directory is on sys.path). node() runs a script
under node at the repository root; the rest follows the generators' sections: the word pieces, the tokenizer.json
frame and tokenizing through the Rust `tokenizers` (npm); weight names, drawing and safetensors; pieces of the
plain-torch forwards; texts, rows and batches; the embeddings, the folder's files and goldens.json.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def node(script, stdin):
    r = subprocess.run(['node', '-e', script], input=json.dumps(stdin).encode(), cwd=ROOT, capture_output=True)
    if r.returncode:
        sys.exit(f'node failed: {r.stderr.decode()}')
    return json.loads(r.stdout)


# ------------------------------------------------------------------ vocabulary and tokenizer.json

def wordpieces():
    """bert-base-uncased's ASCII single characters (ids 999..1995: punctuation, digits, a-z), its next 1,000
    entries (ids 1996..2995: the commonest words and ## pieces), ##a-##z; taken from tests/text/corpus.mjs."""
    bert = node("import('./tests/text/corpus.mjs').then(m => console.log(JSON.stringify(m.vocab)))", None)
    assert len(bert) == 30522 and bert[1996] == 'the'
    ascii1 = [s for s in bert[999:1996] if len(s) == 1 and '!' <= s <= '~']
    return ascii1 + bert[1996:2996] + ['##' + c for c in 'abcdefghijklmnopqrstuvwxyz']


def added_token(i, s, lstrip=False):
    return dict(id=i, content=s, single_word=False, lstrip=lstrip, rstrip=False, normalized=False, special=True)


def special(s, t=0):
    return {'SpecialToken': {'id': s, 'type_id': t}}


def sequence(s, t=0):
    return {'Sequence': {'id': s, 'type_id': t}}


def tokenizer_json(vocab, added, single, pair, specials):
    """An uncased WordPiece tokenizer.json over vocab ([UNK] the unknown piece): the added tokens `added`, a
    TemplateProcessing post-processor with the templates single and pair, which uses the tokens specials."""
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': added,
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing', 'single': single, 'pair': pair,
            'special_tokens': {s: {'id': s, 'ids': [vocab.index(s)], 'tokens': [s]} for s in specials}},
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


def tokenize(tok_file, texts, max_len):
    """The token ids of each text by the tokenizer.json tok_file (with its template), truncated to max_len."""
    return node(TOKENIZE_JS, {'file': tok_file, 'texts': texts, 'max': max_len})


# ------------------------------------------------------------------ weights and safetensors

def linear_specs(name, n_out, n_in, kind='lw'):
    """A Linear's [(name.weight, [n_out, n_in], kind), (name.bias, [n_out], 'b')]."""
    return [(f'{name}.weight', [n_out, n_in], kind), (f'{name}.bias', [n_out], 'b')]


def norm_specs(name, n):
    """A LayerNorm's [(name.weight, [n], 'lnw'), (name.bias, [n], 'b')]."""
    return [(f'{name}.weight', [n], 'lnw'), (f'{name}.bias', [n], 'b')]


def weight_specs(V, P, H, prefix, layers, layer, tail=()):
    """[(name, shape, kind)] in declaration order (the order of the draws): the embeddings (word [V, H], position
    [P, H], LayerNorm [H]), then layer(f'{prefix}{L}.') for each of the layers L, then tail."""
    out = [('embeddings.word_embeddings.weight', [V, H], 'w'), ('embeddings.position_embeddings.weight', [P, H], 'w')]
    out += norm_specs('embeddings.LayerNorm', H)
    for L in range(layers):
        out += layer(f'{prefix}{L}.')
    return out + list(tail)


INIT = {'w': (0.0, 0.02), 'lw': (0.0, 0.2), 'b': (0.0, 0.02), 'lnw': (1.0, 0.1)}   # kind -> (mean, std)


def draw_weights(specs, seed, **more_init):
    """{name: float32 array} for specs [(name, shape, kind)], drawn in their order from numpy default_rng(seed):
    mean + normal(0, std), (mean, std) = INIT[kind], or more_init[kind] for a family's own kinds."""
    rng = np.random.default_rng(seed)
    init = {**INIT, **more_init}
    return {n: (init[k][0] + rng.normal(0.0, init[k][1], size=s)).astype(np.float32) for n, s, k in specs}


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


# ------------------------------------------------------------------ pieces of the reference forwards

def torch_weights(W, dtype, eps):
    """(w, ln, lin): the weights W as torch tensors in dtype; ln(x, p) the LayerNorm p (p.weight, p.bias, eps)
    over x's last axis, lin(x, p) the Linear p (x p.weight^T + p.bias)."""
    w = {k: torch.from_numpy(v).to(dtype) for k, v in W.items()}
    ln = lambda x, p: torch.nn.functional.layer_norm(x, x.shape[-1:], w[p + '.weight'], w[p + '.bias'], eps)
    lin = lambda x, p: x @ w[p + '.weight'].T + w[p + '.bias']
    return w, ln, lin


def gelu(f):
    """erf GELU."""
    return 0.5 * f * (1.0 + torch.erf(f / 2 ** 0.5))


def mean_normalize(x, m):
    """Mean of x [B, T, H] over the tokens where m [B, T] (in x's dtype) is 1, then v / max(|v|, 1e-12)."""
    v = (x * m[:, :, None]).sum(1) / torch.clamp(m.sum(1, keepdim=True), min=1e-9)
    return v / torch.clamp(v.norm(dim=1, keepdim=True), min=1e-12)


# ------------------------------------------------------------------ inputs

def texts(greeting, mask):
    """The eight golden texts: a greeting first, the mask token of the family fifth."""
    return [
        greeting,
        'A man is eating food.',
        'The Café on Main Street opened in 2024 (☕ ★), and it was full.',
        'She said: "Was this the best time of their life?" -- he had no idea.',
        f'The {mask} of the city is very old.',
        ('Quantum chromodynamics, xylophones, perambulators, hippopotamuses, onomatopoeia, kaleidoscopes, '
         'juxtapositions and photosynthesizing chrysanthemums are uncommon words here, so they split into pieces.'),
        'WHAT ABOUT THE UPPER CASE? It should be lowercased by the normalizer; accents like naïve, résumé and Zürich are stripped.',
        ('After the war, the new government passed a law which would allow the people of the north to return to their '
         'homes; however, many of them had already moved to other cities, where they found work, married, and raised '
         'families. Historians still argue about whether this policy was a success, a failure, or something in between.'),
    ]


def row(rng, n, first, last, lo, hi):
    """first, n - 2 random ids in lo..hi-1, last (n = 1: first alone)."""
    return [first] + rng.integers(lo, hi, size=n - 2).tolist() + [last] if n > 1 else [first]


def batch(name, rows, pad_id, left=False, texts=None):
    """The rows padded with pad_id to the longest (on the left if left), their masks, and texts if given."""
    T = max(map(len, rows))
    pad = lambda r, v: ([v] * (T - len(r)) + r) if left else (r + [v] * (T - len(r)))
    b = {'name': name, 'ids': [pad(r, pad_id) for r in rows], 'mask': [pad([1] * len(r), 0) for r in rows]}
    if texts is not None:
        b['texts'] = texts
    return b


def text_batches(batch, texts, toks):
    """One batch per text: texts-i, the text's token ids toks[i] and the text."""
    return [batch(f'texts-{i}', [ids], texts=[t]) for i, (t, ids) in enumerate(zip(texts, toks))]


# ------------------------------------------------------------------ goldens

def embed(forward, W, b):
    """forward(W, ids, mask, dtype) of batch b in float64 and float32, kept as b['f64'] and b['f32'];
    returns ids, mask, e64, e32."""
    ids, mask = torch.tensor(b['ids']), torch.tensor(b['mask'])
    e64, e32 = forward(W, ids, mask, torch.float64), forward(W, ids, mask, torch.float32)
    b['f64'], b['f32'] = e64.tolist(), e32.tolist()
    return ids, mask, e64, e32


def alone_devs(forward, W, b, e64):
    """For each row of batch b: max |e64 of the row - the row's real tokens run alone, unpadded| (float64)."""
    alone = lambda ids: forward(W, torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long), torch.float64)[0]
    return [(e64[i] - alone([t for t, k in zip(r, mk) if k])).abs().max().item()
            for i, (r, mk) in enumerate(zip(b['ids'], b['mask']))]


def dump(path, obj, **kw):
    with open(path, 'w') as f:
        f.write(json.dumps(obj, ensure_ascii=False, **kw) + '\n')


def write_folder(folder, dim, max_len, weights, config, tokenizer, tokenizer_config):
    """folder/ as a sentence-transformers folder: config.json (keys sorted), tokenizer.json, tokenizer_config.json,
    modules.json (Transformer, Pooling, Normalize), 1_Pooling/config.json (masked mean of dim),
    sentence_bert_config.json (max_seq_length max_len) and model.safetensors; returns tokenizer.json's path."""
    os.makedirs(os.path.join(folder, '1_Pooling'), exist_ok=True)
    dump(os.path.join(folder, 'config.json'), config, indent=2, sort_keys=True)
    tok_file = os.path.join(folder, 'tokenizer.json')
    dump(tok_file, tokenizer)
    dump(os.path.join(folder, 'tokenizer_config.json'), tokenizer_config, indent=2)
    dump(os.path.join(folder, 'modules.json'), [
        {'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
        {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
        {'idx': 2, 'name': '2', 'path': '2_Normalize', 'type': 'sentence_transformers.models.Normalize'}], indent=2)
    dump(os.path.join(folder, '1_Pooling', 'config.json'), {
        'word_embedding_dimension': dim, 'pooling_mode_cls_token': False, 'pooling_mode_mean_tokens': True,
        'pooling_mode_max_tokens': False, 'pooling_mode_mean_sqrt_len_tokens': False}, indent=2)
    dump(os.path.join(folder, 'sentence_bert_config.json'), {'max_seq_length': max_len, 'do_lower_case': False}, indent=2)
    write_safetensors(os.path.join(folder, 'model.safetensors'), weights)
    return tok_file


def write_goldens(path, generator, dim, batches):
    """goldens.json: generator, folder "tiny", dim, and the batches, one line per batch key, one row per line."""
    rows = lambda v: '[\n      ' + ',\n      '.join(json.dumps(r, ensure_ascii=False) for r in v) + ']'
    body = ',\n'.join('    {' + ',\n     '.join(f'"{k}": {rows(v) if isinstance(v, list) else json.dumps(v)}' for k, v in b.items()) + '}'
                      for b in batches)
    with open(path, 'w') as f:
        f.write('{"generator": "%s", "folder": "tiny", "dim": %d, "batches": [\n%s\n]}\n' % (generator, dim, body))
