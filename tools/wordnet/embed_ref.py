#!/usr/bin/python3
"""embed_ref.py -- reference (oracle) embeddings for models/wordnet/, from its files alone.

Reads config.json, model.safetensors (parsed by hand: u64 LE header length, JSON header, raw data),
sentence_bert_config.json and tokenizer.json, tokenizes with the npm `tokenizers` package (the Rust
HF tokenizers, via node) and runs transformers' BertModel forward in plain torch (f32), then mean
pooling over the attention mask and L2 normalization, as sentence-transformers does. It shares no code
with train.py, so it also cross-checks the export.

    /usr/bin/python3 tools/wordnet/embed_ref.py "a small boat pulled by a larger one" tugboat
    /usr/bin/python3 tools/wordnet/embed_ref.py --samples      # writes build/wordnet/ref-embeddings.json
    /usr/bin/python3 tools/wordnet/embed_ref.py --search "a small boat pulled by a larger one"

Options: --model DIR (default models/wordnet), --q8 (APR Q8 round trip of every 2-D weight first),
--ids JSON (embed these token-id lists instead of tokenizing). Takes a few seconds (--search: ~1 min,
it embeds all lemmas).

build/wordnet/ref-embeddings.json: { model, max_seq_length, samples: [{ text, ids, embedding (f32),
embedding_q8, last_hidden_state (f32, [len][hidden]) }] }, plus ref-embeddings.f32 (the f32
embeddings, row-major [n][hidden], little-endian) for byte-level comparison.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))

SAMPLES = [
    'a small boat pulled by a larger one',
    'tugboat',
    'tow',
    'draw air into, and expel out of, the lungs',
    'breathe',
    'an automotive vehicle suitable for hauling',
    'truck',
    'the act of reading a text aloud in front of an audience',
    'a person who makes bread and cakes',
    'feeling or showing great happiness',
    'ice cream',
    'New York City',
    'to move quickly on foot',
    'a large wild cat with a mane',
    "(usually followed by `to') having the necessary means or skill or know-how or authority to do something",
    'Café au lait, naïve résumé!',
    'UNBELIEVABLE hyperventilation, 1,234.5 kg',
    '',
    'x',
    ' '.join(['the quick brown fox jumps over the lazy dog'] * 9),  # > 64 tokens: truncated
]


def read_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n).decode('utf-8'))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == '__metadata__':
            continue
        dt = {'F32': '<f4', 'F16': '<f2', 'BF16': None}[h['dtype']]
        b, e = h['data_offsets']
        a = np.frombuffer(data[b:e], dtype=dt).reshape(h['shape']).astype(np.float32)
        out[name] = torch.from_numpy(a.copy())
    return out


def q8(w):
    """APR Q8 round trip: scale = f32(max|w|/127), q = round half away(w/scale) clamped to +-127."""
    a = w.numpy().astype(np.float32)
    m = float(np.abs(a).max())
    s = np.float32(1.0) if m == 0 else np.float32(np.float64(np.float32(m)) / 127.0)
    x = (a / s).astype(np.float64)
    qv = np.clip(np.sign(x) * np.floor(np.abs(x) + 0.5), -127, 127)
    return torch.from_numpy((qv.astype(np.float32) * s).astype(np.float32))


def tokenize(texts, model_dir, max_len):
    js = r"""
const { createRequire } = require('node:module');
const rq = createRequire(process.argv[1] + '/package.json');
const { Tokenizer } = rq('tokenizers');
const fs = require('node:fs');
(async () => {
  const texts = JSON.parse(fs.readFileSync(0, 'utf8'));
  const t = Tokenizer.fromFile(process.argv[2]);
  const out = [];
  for (const s of texts) out.push(Array.from((await t.encode(s)).getIds()));
  process.stdout.write(JSON.stringify(out));
})();
"""
    base = os.environ.get('TOKENIZERS_FROM', ROOT)  # a directory whose node_modules has `tokenizers`
    r = subprocess.run(['node', '-e', js, base, os.path.join(model_dir, 'tokenizer.json')],
                       input=json.dumps(texts).encode(), capture_output=True, check=True)
    ids = json.loads(r.stdout)
    # sentence-transformers truncates to max_seq_length (the tokenizer keeps [SEP] last)
    return [x if len(x) <= max_len else x[:max_len - 1] + [x[-1]] for x in ids]


class Model:
    def __init__(self, model_dir, use_q8=False):
        self.cfg = json.load(open(os.path.join(model_dir, 'config.json')))
        self.max_len = json.load(open(os.path.join(model_dir, 'sentence_bert_config.json')))['max_seq_length']
        self.w = read_safetensors(os.path.join(model_dir, 'model.safetensors'))
        if use_q8:
            self.w = {k: (q8(v) if v.dim() == 2 else v) for k, v in self.w.items()}

    def forward(self, ids_list):
        """Returns (embeddings [n, H], last hidden states list of [len, H])."""
        c, w = self.cfg, self.w
        H, nh = c['hidden_size'], c['num_attention_heads']
        hd, eps = H // nh, c['layer_norm_eps']
        n = len(ids_list)
        L = max(len(x) for x in ids_list)
        ids = torch.zeros(n, L, dtype=torch.long)
        mask = torch.zeros(n, L)
        for i, x in enumerate(ids_list):
            ids[i, :len(x)] = torch.tensor(x)
            mask[i, :len(x)] = 1
        lin = lambda x, p: x @ w[p + '.weight'].T + w[p + '.bias']
        ln = lambda x, p: torch.nn.functional.layer_norm(x, (H,), w[p + '.weight'], w[p + '.bias'], eps)
        x = w['embeddings.word_embeddings.weight'][ids] + w['embeddings.token_type_embeddings.weight'][0]
        x = x + w['embeddings.position_embeddings.weight'][:L][None]
        x = ln(x, 'embeddings.LayerNorm')
        ext = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
        for i in range(c['num_hidden_layers']):
            p = f'encoder.layer.{i}.'
            heads = lambda t: t.view(n, L, nh, hd).transpose(1, 2)
            q = heads(lin(x, p + 'attention.self.query'))
            k = heads(lin(x, p + 'attention.self.key'))
            v = heads(lin(x, p + 'attention.self.value'))
            s = q @ k.transpose(-1, -2) / math.sqrt(hd) + ext
            a = torch.softmax(s, dim=-1) @ v
            a = a.transpose(1, 2).reshape(n, L, H)
            x = ln(lin(a, p + 'attention.output.dense') + x, p + 'attention.output.LayerNorm')
            f = lin(x, p + 'intermediate.dense')
            f = 0.5 * f * (1.0 + torch.erf(f / math.sqrt(2.0)))
            x = ln(lin(f, p + 'output.dense') + x, p + 'output.LayerNorm')
        m = mask[..., None]
        pooled = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return emb, [x[i, :len(t)] for i, t in enumerate(ids_list)]

    @torch.no_grad()
    def embed_ids(self, ids_list, batch=512):
        order = sorted(range(len(ids_list)), key=lambda i: len(ids_list[i]))
        out = torch.zeros(len(ids_list), self.cfg['hidden_size'])
        for b in range(0, len(order), batch):
            idx = order[b:b + batch]
            out[idx] = self.forward([ids_list[i] for i in idx])[0]
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('texts', nargs='*')
    ap.add_argument('--model', default=os.path.join(ROOT, 'models', 'wordnet'))
    ap.add_argument('--q8', action='store_true')
    ap.add_argument('--ids')
    ap.add_argument('--samples', action='store_true')
    ap.add_argument('--search', action='store_true', help='rank lemmas.txt for each text')
    ap.add_argument('--out', default=os.path.join(ROOT, 'build', 'wordnet', 'ref-embeddings'))
    args = ap.parse_args()
    torch.set_num_threads(2)
    model = Model(args.model, args.q8)
    if args.samples:
        texts = SAMPLES
        ids = tokenize(texts, args.model, model.max_len)
        with torch.no_grad():
            emb, hid = model.forward(ids)
            emb8, _ = Model(args.model, True).forward(ids)
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        ref = {'model': os.path.relpath(args.model, ROOT), 'max_seq_length': model.max_len,
               'note': 'f32 torch forward of tools/wordnet/embed_ref.py; embedding_q8 = APR Q8 round trip of every 2-D weight',
               'samples': [{'text': t, 'ids': i, 'embedding': e.tolist(), 'embedding_q8': e8.tolist(),
                            'last_hidden_state': h.tolist()} for t, i, e, e8, h in zip(texts, ids, emb, emb8, hid)]}
        json.dump(ref, open(args.out + '.json', 'w'))
        emb.numpy().astype('<f4').tofile(args.out + '.f32')
        sims = emb @ emb.T
        print(f'wrote {args.out}.json and .f32 ({len(texts)} x {emb.shape[1]})')
        print('cos(description, tugboat) =', round(float(sims[0, 1]), 4), ' cos(description, truck) =', round(float(sims[0, 6]), 4))
        return
    if args.ids:
        ids = json.load(open(args.ids))
        texts = [None] * len(ids)
    else:
        texts = args.texts
        ids = tokenize(texts, args.model, model.max_len)
    with torch.no_grad():
        emb, _ = model.forward(ids)
    if args.search:
        lemmas = open(os.path.join(args.model, 'lemmas.txt')).read().split('\n')[:-1]
        lem = model.embed_ids(tokenize(lemmas, args.model, model.max_len))
        for t, e in zip(texts, emb):
            top = torch.topk(lem @ e, 10)
            print(t, '->', ', '.join(f'{lemmas[i]} ({v:.3f})' for v, i in zip(top.values.tolist(), top.indices.tolist())))
        return
    for t, i, e in zip(texts, ids, emb):
        print(json.dumps({'text': t, 'ids': i, 'embedding': [round(v, 7) for v in e.tolist()]}))


if __name__ == '__main__':
    main()
