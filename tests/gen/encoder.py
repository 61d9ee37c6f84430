#!/usr/bin/python3
"""encoder.py -- golden sentence embeddings for mlrt's BERT encoder (issue 21 section 4).

    /usr/bin/python3 tests/gen/encoder.py [OUT_DIR]        (default tests/encoder; ~2 min)
    /usr/bin/python3 tests/gen/encoder.py --only tiny      (the cases whose name starts with tiny)

The oracle: BertModel's forward written here in plain torch from ../shared/specs/bert-encoder.md
section 4 (embeddings word + type + position -> LayerNorm; post-norm layers with the additive mask
(1 - m) * finfo.min, softmax, erf GELU; masked mean or CLS pooling; v / max(|v|, 1e-12)), run in
float64 (the reference) and in float32 (what an f32 implementation gets), on random weights in the
real shapes drawn from a seed by the generator below -- the same algorithm, bit for bit, as
tools/encoder/weights.mjs, checked here through a SHA-256 of every tensor computed on both sides.
Texts are stripped (and lowercased where sentence_bert_config.json says do_lower_case) here, in
Python, as sentence-transformers does, then tokenized by the Rust `tokenizers` (npm 0.23.2) through
tools/encoder/inputs.mjs. Also the trained models/wordnet/ on 50 held-out queries.

Writes OUT_DIR/manifest.json, OUT_DIR/<case>.f32 and OUT_DIR/<case>.f64 (row-major [rows][dim],
little-endian), OUT_DIR/wordnet.json. See tests/encoder/README.md.
"""
import argparse
import hashlib
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
INPUTS_JS = os.path.join(ROOT, 'tools', 'encoder', 'inputs.mjs')

# ------------------------------------------------------------------ shapes and tensors (weights.mjs)

SHAPES = {
    'tiny': dict(hidden=32, layers=2, heads=4, ffn=64, vocab=30522, positions=64, types=2),
    'minilm-l6': dict(hidden=384, layers=6, heads=12, ffn=1536, vocab=30522, positions=512, types=2),
    'small-l12': dict(hidden=384, layers=12, heads=12, ffn=1536, vocab=30522, positions=512, types=2),
}
INIT = {'normal': (0.0, 0.02), 'ln_weight': (1.0, 0.05), 'bias': (0.0, 0.02)}


def tensor_specs(shape, extras=True, heads=False):
    s = SHAPES[shape]
    H, L, I, V, P, T = s['hidden'], s['layers'], s['ffn'], s['vocab'], s['positions'], s['types']
    out = []
    t = lambda name, dims, init: out.append((name, dims, init))
    t('embeddings.word_embeddings.weight', [V, H], 'normal')
    t('embeddings.position_embeddings.weight', [P, H], 'normal')
    t('embeddings.token_type_embeddings.weight', [T, H], 'normal')
    t('embeddings.LayerNorm.weight', [H], 'ln_weight')
    t('embeddings.LayerNorm.bias', [H], 'bias')
    for i in range(L):
        p = f'encoder.layer.{i}.'
        for m in ('query', 'key', 'value'):
            t(f'{p}attention.self.{m}.weight', [H, H], 'normal')
            t(f'{p}attention.self.{m}.bias', [H], 'bias')
        t(f'{p}attention.output.dense.weight', [H, H], 'normal')
        t(f'{p}attention.output.dense.bias', [H], 'bias')
        t(f'{p}attention.output.LayerNorm.weight', [H], 'ln_weight')
        t(f'{p}attention.output.LayerNorm.bias', [H], 'bias')
        t(f'{p}intermediate.dense.weight', [I, H], 'normal')
        t(f'{p}intermediate.dense.bias', [I], 'bias')
        t(f'{p}output.dense.weight', [H, I], 'normal')
        t(f'{p}output.dense.bias', [H], 'bias')
        t(f'{p}output.LayerNorm.weight', [H], 'ln_weight')
        t(f'{p}output.LayerNorm.bias', [H], 'bias')
    if extras:
        t('pooler.dense.weight', [H, H], 'normal')
        t('pooler.dense.bias', [H], 'bias')
        t('embeddings.position_ids', [1, P], 'arange')
    if heads:
        t('cls.predictions.bias', [V], 'bias')
        t('cls.predictions.transform.dense.weight', [H, H], 'normal')
        t('cls.predictions.transform.dense.bias', [H], 'bias')
        t('cls.predictions.transform.LayerNorm.weight', [H], 'ln_weight')
        t('cls.predictions.transform.LayerNorm.bias', [H], 'bias')
    return out

# ------------------------------------------------------------------ the generator (weights.mjs, in numpy)

U64 = (1 << 64) - 1
GAMMA = 0x9e3779b97f4a7c15
M1, M2 = 0xbf58476d1ce4e5b9, 0x94d049bb133111eb


def mix_int(z):
    z = ((z ^ (z >> 30)) * M1) & U64
    z = ((z ^ (z >> 27)) * M2) & U64
    return z ^ (z >> 31)


def mix_np(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode('utf-8'):
        h = ((h ^ b) * 0x100000001b3) & U64
    return h


def stream_key(name, seed):
    if name.startswith('bert.'):
        name = name[5:]
    return fnv1a64(name) ^ mix_int((seed + GAMMA) & U64)


LN2, SQRT_HALF, HALF_PI = 0.6931471805599453, 0.7071067811865476, 1.5707963267948966
LOG_C = [1 / (2 * k + 1) for k in range(13)]
SIN_C, COS_C = [1.0], [1.0]
for _k in range(1, 11):
    SIN_C.append(-SIN_C[_k - 1] / ((2 * _k) * (2 * _k + 1)))
    COS_C.append(-COS_C[_k - 1] / ((2 * _k - 1) * (2 * _k)))


def horner(coef, z):
    p = coef[-1]
    for c in reversed(coef[:-1]):
        p = p * z + c
    return p


def normals(key, n, mean, std):
    """f32(mean + std * z_i), z from Box-Muller on splitmix64's stream from `key` (see weights.mjs)."""
    pairs = (n + 1) // 2
    with np.errstate(over='ignore'):
        c = np.arange(1, 2 * pairs + 1, dtype=np.uint64)
        w = mix_np(np.uint64(key) + c * np.uint64(GAMMA))
    K = ((w[0::2] >> np.uint64(11)) + np.uint64(1)).astype(np.float64)
    u1 = K * 2.0 ** -53
    u2 = (w[1::2] >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    m, e = np.frexp(u1)
    e = e.astype(np.float64)
    small = m < SQRT_HALF
    m = np.where(small, 2 * m, m)
    e = np.where(small, e - 1, e)
    f = m - 1
    s = f / (2 + f)
    z = s * s
    r = np.sqrt(-2 * (e * LN2 + 2 * s * horner(LOG_C, z)))
    t = 4 * u2
    q = np.floor(t + 0.5)
    a = (t - q) * HALF_PI
    y = a * a
    sn = a * horner(SIN_C, y)
    cs = horner(COS_C, y)
    qq = q.astype(np.int64) & 3
    cv = np.select([qq == 0, qq == 1, qq == 2], [cs, -sn, -cs], sn)
    sv = np.select([qq == 0, qq == 1, qq == 2], [sn, cs, -sn], -cs)
    out = np.empty(2 * pairs, dtype=np.float64)
    out[0::2] = mean + std * (r * cv)
    out[1::2] = mean + std * (r * sv)
    return out[:n].astype(np.float32)


def round_to(a, dtype):
    """f32 values as a `dtype` file holds them (RNE), back in f32; and the file's bytes."""
    if dtype == 'F32':
        return a, a.astype('<f4').tobytes()
    if dtype == 'F16':
        h = a.astype(np.float16)
        return h.astype(np.float32), h.astype('<f2').tobytes()
    if dtype == 'BF16':
        u = a.view(np.uint32).astype(np.uint64)
        b = ((u + 0x7fff + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
        return (b.astype(np.uint32) << 16).view(np.float32), b.astype('<u2').tobytes()
    raise ValueError(dtype)


_drawn = {}


def make_weights(shape, seed, dtype='F32'):
    """{name: np.float32 array} (values after rounding to dtype) and the SHA-256 of the tensors'
    bytes in canonical order (weights.mjs weightsDigest)."""
    h = hashlib.sha256()
    out = {}
    for name, dims, init in tensor_specs(shape):
        n = int(np.prod(dims))
        if init == 'arange':
            h.update(np.arange(n, dtype='<i8').tobytes())
            continue
        k = (shape, seed, name)
        if k not in _drawn:
            mean, std = INIT[init]
            a = normals(stream_key(name, seed), n, mean, std).reshape(dims)
            if name == 'embeddings.word_embeddings.weight':
                a[0] = 0  # [PAD] row (padding_idx 0)
            _drawn[k] = a
        v, b = round_to(_drawn[k], dtype)
        h.update(b)
        out[name] = v
    return out, h.hexdigest()

# ------------------------------------------------------------------ the JS side


def node(*args, stdin=None):
    r = subprocess.run(['node', INPUTS_JS, *args], input=None if stdin is None else json.dumps(stdin).encode(),
                       capture_output=True, cwd=ROOT)
    if r.returncode:
        sys.exit(f'node {" ".join(args)} failed: {r.stderr.decode()}')
    return json.loads(r.stdout)


def st_tokenize(profile, texts, max_len, lower):
    """sentence-transformers: str.strip(), str.lower() if do_lower_case, then the fast tokenizer."""
    pre = [t.strip().lower() if lower else t.strip() for t in texts]
    return node('tokenize', profile, str(max_len), stdin=pre)

# ------------------------------------------------------------------ the forward pass (spec section 4.3)


def bert(W, cfg, batch, types, dt):
    """Last hidden states [n, T, H] and the mask [n, T] of a batch of id lists, right-padded."""
    H, A = cfg['hidden'], cfg['heads']
    d, eps = H // A, 1e-12
    n, T = len(batch), max(len(x) for x in batch)
    ids = torch.zeros(n, T, dtype=torch.long)
    tt = torch.zeros(n, T, dtype=torch.long)
    mask = torch.zeros(n, T, dtype=dt)
    for i, x in enumerate(batch):
        ids[i, :len(x)] = torch.tensor(x)
        mask[i, :len(x)] = 1
        if types is not None:
            tt[i, :len(x)] = torch.tensor(types[i])
    w = {k: torch.from_numpy(v).to(dt) for k, v in W.items()}
    lin = lambda x, p: F.linear(x, w[p + '.weight'], w[p + '.bias'])
    ln = lambda x, p: F.layer_norm(x, (H,), w[p + '.weight'], w[p + '.bias'], eps)
    x = w['embeddings.word_embeddings.weight'][ids] + w['embeddings.token_type_embeddings.weight'][tt]
    x = x + w['embeddings.position_embeddings.weight'][:T][None]
    x = ln(x, 'embeddings.LayerNorm')
    ext = (1.0 - mask)[:, None, None, :] * torch.finfo(dt).min
    heads = lambda t: t.view(n, T, A, d).transpose(1, 2)
    for i in range(cfg['layers']):
        p = f'encoder.layer.{i}.'
        q = heads(lin(x, p + 'attention.self.query'))
        k = heads(lin(x, p + 'attention.self.key'))
        v = heads(lin(x, p + 'attention.self.value'))
        s = q @ k.transpose(-1, -2) / math.sqrt(d) + ext
        c = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(n, T, H)
        x = ln(lin(c, p + 'attention.output.dense') + x, p + 'attention.output.LayerNorm')
        u = F.gelu(lin(x, p + 'intermediate.dense'))
        x = ln(lin(u, p + 'output.dense') + x, p + 'output.LayerNorm')
    return x, mask


def pool(x, mask, pooling, normalize):
    if pooling == 'mean':
        m = mask[..., None]
        v = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
    elif pooling == 'cls':
        v = x[:, 0]
    else:
        raise ValueError(pooling)
    return F.normalize(v, p=2, dim=1, eps=1e-12) if normalize else v


@torch.no_grad()
def embed(W, cfg, batches, pooling, normalize, dt):
    """batches: [(ids lists, type lists | None)] -> [rows, H] numpy in dt."""
    out = []
    for ids, types in batches:
        x, mask = bert(W, cfg, ids, types, dt)
        out.append(pool(x, mask, pooling, normalize))
    return torch.cat(out).numpy()

# ------------------------------------------------------------------ the plan


def plan(inputs):
    """The cases: name, folder (makeFolder options), inputs (a key of the manifest's inputs)."""
    ids_t, ids_b = 'ids-tiny', 'ids-big'
    C = []
    c = lambda name, inp, **folder: C.append({'name': name, 'inputs': inp, 'folder': folder})
    # tiny: every pooling x normalize in F32, the 16-bit files, another seed
    for pooling in ('mean', 'cls'):
        for norm in (True, False):
            c(f'tiny-f32-{pooling}-{"norm" if norm else "raw"}', [ids_t, 'texts:tiny'], profile='tiny', seed=1, dtype='F32', pooling=pooling, normalize=norm)
    c('tiny-f16-mean-norm', [ids_t, 'texts:tiny'], profile='tiny', seed=1, dtype='F16', pooling='mean', normalize=True)
    c('tiny-bf16-mean-norm', [ids_t, 'texts:tiny'], profile='tiny', seed=1, dtype='BF16', pooling='mean', normalize=True)
    c('tiny-seed7-f32-mean-norm', [ids_t], profile='tiny', seed=7, dtype='F32', pooling='mean', normalize=True)
    # MiniLM-L6 (max_seq_length 512 for the id batches: they hold a 512-token sequence, past all-MiniLM's 256)
    c('minilm-f32-mean-norm', ['texts:all-MiniLM-L6-v2'], profile='all-MiniLM-L6-v2', seed=6, dtype='F32', pooling='mean', normalize=True)
    c('minilm-f32-mean-norm-ids', [ids_b], profile='all-MiniLM-L6-v2', seed=6, dtype='F32', pooling='mean', normalize=True, maxSeqLength=512)
    c('minilm-f32-cls-raw-ids', [ids_b], profile='all-MiniLM-L6-v2', seed=6, dtype='F32', pooling='cls', normalize=False, maxSeqLength=512)
    c('minilm-f16-mean-norm-ids', [ids_b], profile='all-MiniLM-L6-v2', seed=6, dtype='F16', pooling='mean', normalize=True, maxSeqLength=512)
    c('minilm-bf16-mean-norm-ids', [ids_b], profile='all-MiniLM-L6-v2', seed=6, dtype='BF16', pooling='mean', normalize=True, maxSeqLength=512)
    # the 12-layer shape as bge (CLS, lowercased by sentence-transformers), e5 (mean), gte (F16, no Normalize)
    c('bge-f32-cls-norm', [ids_b, 'texts:bge-small-en-v1.5'], profile='bge-small-en-v1.5', seed=12, dtype='F32', pooling='cls', normalize=True)
    c('e5-f32-mean-norm', [ids_b], profile='e5-small-v2', seed=12, dtype='F32', pooling='mean', normalize=True)
    c('gte-f16-mean-raw', [ids_b], profile='gte-small', seed=12, dtype='F16', pooling='mean', normalize=False)
    return C


PROFILE_SHAPE = {'tiny': 'tiny', 'all-MiniLM-L6-v2': 'minilm-l6', 'bge-small-en-v1.5': 'small-l12',
                 'e5-small-v2': 'small-l12', 'gte-small': 'small-l12'}
PROFILE_ST = {'tiny': (64, False), 'all-MiniLM-L6-v2': (256, False), 'bge-small-en-v1.5': (512, True),
              'e5-small-v2': (512, False), 'gte-small': (512, False)}


def batches_of(inp):
    """Manifest input -> [(ids lists, type lists | None)] as the reference runs them."""
    if 'batches' in inp:
        return [(b['ids'], b.get('typeIds')) for b in inp['batches']]
    ids = inp['ids']  # texts: padded batches of 8 in the given order
    return [(ids[i:i + 8], None) for i in range(0, len(ids), 8)]


def stats(a32, a64):
    a = a32.astype(np.float64)
    d = np.abs(a - a64)
    rel = d / np.maximum(np.abs(a64), 1e-3)
    cos = (a * a64).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(a64, axis=1))
    return {'maxAbs': float(d.max()), 'maxRel': float(rel.max()), 'minCos': float(cos.min())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out', nargs='?', default=os.path.join(ROOT, 'tests', 'encoder'))
    ap.add_argument('--only', help='cases whose name starts with this')
    ap.add_argument('--no-wordnet', action='store_true')
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)

    fx = node('inputs')
    inputs = {
        'ids-tiny': {'positions': 64, 'batches': fx['ids']['tiny']},
        'ids-big': {'positions': 512, 'batches': fx['ids']['big']},
    }
    cases = [c for c in plan(inputs) if not args.only or c['name'].startswith(args.only)]
    for c in cases:
        for key in c['inputs']:
            if key.startswith('texts:') and key not in inputs:
                prof = key[6:]
                max_len, lower = PROFILE_ST[prof]
                inputs[key] = {'profile': prof, 'maxSeqLength': max_len, 'doLowerCase': lower,
                               'texts': fx['texts'], 'ids': st_tokenize(prof, fx['texts'], max_len, lower)}

    digests, manifest_cases = {}, []
    for c in cases:
        f = c['folder']
        shape = PROFILE_SHAPE[f['profile']]
        cfg = SHAPES[shape]
        W, digest = make_weights(shape, f['seed'], f['dtype'])
        dkey = f'{shape}/{f["seed"]}/{f["dtype"]}'
        if dkey not in digests:
            js = node('digest', shape, str(f['seed']), f['dtype'])
            if js != digest:
                sys.exit(f'weights differ between tools/encoder/weights.mjs and encoder.py for {dkey}: {js} vs {digest}')
            digests[dkey] = digest
        b = [x for key in c['inputs'] for x in batches_of(inputs[key])]
        e64 = embed(W, cfg, b, f['pooling'], f['normalize'], torch.float64)
        e32 = embed(W, cfg, b, f['pooling'], f['normalize'], torch.float32)
        # padding must not matter: every sequence of the id batches alone gives the same embedding
        alone = [([x], None if t is None else [t[j]]) for ids, t in b[:12] for j, x in enumerate(ids)]
        a64 = embed(W, cfg, alone, f['pooling'], f['normalize'], torch.float64)
        gap = float(np.abs(a64 - e64[:len(alone)]).max())
        if gap > 1e-12:
            sys.exit(f'{c["name"]}: a sequence alone differs from its padded batch by {gap}')
        e64.astype('<f8').tofile(os.path.join(args.out, c['name'] + '.f64'))
        e32.astype('<f4').tofile(os.path.join(args.out, c['name'] + '.f32'))
        st = stats(e32, e64)
        manifest_cases.append({**c, 'shape': shape, 'rows': int(e64.shape[0]), 'dim': int(e64.shape[1]),
                               'f64': c['name'] + '.f64', 'f32': c['name'] + '.f32', 'weightsSha256': digest,
                               'torchF32VsF64': st, 'batchVsAloneF64': gap})
        print(f'{c["name"]}: {e64.shape[0]} x {e64.shape[1]}, torch f32 vs f64 max|d| {st["maxAbs"]:.2e}, '
              f'max rel {st["maxRel"]:.2e}, min cos {st["minCos"]:.9f}', flush=True)

    used = {k for c in cases for k in c['inputs']}
    manifest = {
        'about': 'Golden sentence embeddings of random-weight BERT encoders (tests/gen/encoder.py); see README.md.',
        'generator': 'tests/gen/encoder.py', 'torch': torch.__version__,
        'rowOrder': 'for each input key of a case in order: batches in order, sequences in order (texts: one row per text)',
        'inputs': {k: v for k, v in inputs.items() if k in used},
        'weights': digests,
        'cases': manifest_cases,
    }
    with open(os.path.join(args.out, 'manifest.json'), 'w') as fh:
        json.dump(manifest, fh, separators=(',', ':'))
        fh.write('\n')
    if not args.no_wordnet and not args.only:
        wordnet(args.out)

# ------------------------------------------------------------------ models/wordnet


def read_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n).decode('utf-8'))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == '__metadata__':
            continue
        b, e = h['data_offsets']
        assert h['dtype'] == 'F32', (name, h['dtype'])
        out[name] = np.frombuffer(data[b:e], dtype='<f4').reshape(h['shape']).copy()
    return out


def wordnet(out_dir, count=50):
    mdir = os.path.join(ROOT, 'models', 'wordnet')
    cfgj = json.load(open(os.path.join(mdir, 'config.json')))
    stc = json.load(open(os.path.join(mdir, 'sentence_bert_config.json')))
    cfg = dict(hidden=cfgj['hidden_size'], heads=cfgj['num_attention_heads'], layers=cfgj['num_hidden_layers'])
    W = read_safetensors(os.path.join(mdir, 'model.safetensors'))
    rows = [json.loads(l) for l in open(os.path.join(mdir, 'heldout.jsonl'))]
    pick = [rows[i * len(rows) // count] for i in range(count)]
    texts = [r['definition'] for r in pick]
    ids = node('tokenize', os.path.join(mdir, 'tokenizer.json'), str(stc['max_seq_length']),
               stdin=[t.strip().lower() if stc['do_lower_case'] else t.strip() for t in texts])
    b = [(ids[i:i + 8], None) for i in range(0, len(ids), 8)]
    e64 = embed(W, cfg, b, 'mean', True, torch.float64)
    e32 = embed(W, cfg, b, 'mean', True, torch.float32)
    st = stats(e32, e64)
    f32s = lambda v: [float(np.float32(x)) for x in v]
    doc = {
        'about': 'models/wordnet/ (trained, F32) on 50 held-out definitions (heldout.jsonl rows i*5883//50): '
                 'mean pooling + Normalize, max_seq_length 64; embedding = torch f32, reference = torch float64 '
                 '(tests/gen/encoder.py).',
        'model': 'models/wordnet', 'dim': cfg['hidden'], 'torchF32VsF64': st,
        'queries': [{'synset': r['synset'], 'text': t, 'lemmas': r['lemmas'], 'ids': i,
                     'embedding': f32s(a), 'reference': [float(x) for x in r64]}
                    for r, t, i, a, r64 in zip(pick, texts, ids, e32, e64)],
    }
    with open(os.path.join(out_dir, 'wordnet.json'), 'w') as fh:
        json.dump(doc, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'wordnet: {len(texts)} x {cfg["hidden"]}, torch f32 vs f64 max|d| {st["maxAbs"]:.2e}, min cos {st["minCos"]:.9f}')


if __name__ == '__main__':
    main()
