#!/usr/bin/python3
"""tests/gen/encoder_c.py OUT_DIR — small random BERT encoders and their embeddings, for tests/c/test_encoder.c.

The reference is a PyTorch forward pass written from the spec (../shared/specs/bert-encoder.md §4.3, §4.4:
BertModel's embeddings, post-norm layers with the additive mask torch.finfo(float32).min, exact erf GELU,
then sentence-transformers' pooling and Normalize), run in float64 on the float32 (or f16 / bf16) weights.
Weights follow BERT's initialization (normal, std 0.02); biases and LayerNorm parameters get a small random
spread too, so that a swapped bias or scale shows. Committed with its output (torch is no `make test`
dependency): /usr/bin/python3 tests/gen/encoder_c.py tests/c/encoder

Writes OUT_DIR/{tiny,prefixed}/ (config.json, model*.safetensors, tokenizer.json for tiny) and
OUT_DIR/expected.json: the token batches and, per weights file and pooling, the expected embeddings."""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

torch.manual_seed(21)
RNG = np.random.default_rng(21)


def safetensors(path, tensors):
    """tensors: list of (name, dtype name, numpy array of raw values already in that dtype's bytes)."""
    header, data, off = {}, bytearray(), 0
    for name, dt, arr in tensors:
        raw = arr.tobytes()
        header[name] = {'dtype': dt, 'shape': list(arr.shape), 'data_offsets': [off, off + len(raw)]}
        data += raw
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + bytes(data))


def bf16_bits(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def make_weights(cfg, prefix=''):
    H, I, V, P, T, L = (cfg[k] for k in ('hidden_size', 'intermediate_size', 'vocab_size', 'max_position_embeddings',
                                          'type_vocab_size', 'num_hidden_layers'))
    w = {}
    n = lambda *s: (RNG.standard_normal(s) * 0.02).astype(np.float32)
    w['embeddings.word_embeddings.weight'] = n(V, H)
    w['embeddings.position_embeddings.weight'] = n(P, H)
    w['embeddings.token_type_embeddings.weight'] = n(T, H)

    def ln(name):
        w[name + '.weight'] = (1 + RNG.standard_normal(H) * 0.1).astype(np.float32)
        w[name + '.bias'] = n(H)

    ln('embeddings.LayerNorm')
    for l in range(L):
        p = 'encoder.layer.%d.' % l
        for name, o, i in (('attention.self.query', H, H), ('attention.self.key', H, H), ('attention.self.value', H, H),
                           ('attention.output.dense', H, H), ('intermediate.dense', I, H), ('output.dense', H, I)):
            w[p + name + '.weight'] = n(o, i)
            w[p + name + '.bias'] = n(o)
        ln(p + 'attention.output.LayerNorm')
        ln(p + 'output.LayerNorm')
    return w


def forward(w, cfg, ids, mask, types):
    """last_hidden_state [B, T, H] in float64."""
    t = lambda name: torch.tensor(w[name], dtype=torch.float64)
    H, A, eps = cfg['hidden_size'], cfg['num_attention_heads'], cfg['layer_norm_eps']
    d = H // A
    ids, mask, types = torch.tensor(ids), torch.tensor(mask), torch.tensor(types)
    B, T = ids.shape
    e = t('embeddings.word_embeddings.weight')[ids] + t('embeddings.token_type_embeddings.weight')[types]
    e = e + t('embeddings.position_embeddings.weight')[torch.arange(T)]
    ln = lambda x, name: torch.nn.functional.layer_norm(x, (H,), t(name + '.weight'), t(name + '.bias'), eps)
    h = ln(e, 'embeddings.LayerNorm')
    ext = (1.0 - mask[:, None, None, :].double()) * torch.finfo(torch.float32).min
    lin = lambda x, name: x @ t(name + '.weight').T + t(name + '.bias')
    for l in range(cfg['num_hidden_layers']):
        p = 'encoder.layer.%d.' % l
        heads = lambda x: x.view(B, T, A, d).permute(0, 2, 1, 3)
        q, k, v = (heads(lin(h, p + 'attention.self.' + s)) for s in ('query', 'key', 'value'))
        s = q @ k.transpose(-1, -2) / math.sqrt(d) + ext
        ctx = (torch.softmax(s, -1) @ v).permute(0, 2, 1, 3).reshape(B, T, H)
        h = ln(lin(ctx, p + 'attention.output.dense') + h, p + 'attention.output.LayerNorm')
        u = torch.nn.functional.gelu(lin(h, p + 'intermediate.dense'))
        h = ln(lin(u, p + 'output.dense') + h, p + 'output.LayerNorm')
    return h


def pool(h, mask, modes, normalize):
    """sentence-transformers' Pooling (models/Pooling.py), modes concatenated in its order, then Normalize."""
    m = torch.tensor(mask).double().unsqueeze(-1)
    out = []
    B, T, H = h.shape
    for mode in ('cls', 'max', 'mean', 'mean_sqrt_len_tokens', 'weightedmean', 'lasttoken'):
        if mode not in modes:
            continue
        if mode == 'cls':
            out.append(h[:, 0])
        elif mode == 'max':
            out.append(torch.where(m > 0, h, torch.full_like(h, -1e9)).max(1).values)
        elif mode in ('mean', 'mean_sqrt_len_tokens'):
            s, c = (h * m).sum(1), m.sum(1).clamp(min=1e-9)
            out.append(s / c if mode == 'mean' else s / torch.sqrt(c))
        elif mode == 'weightedmean':
            wt = torch.arange(1, T + 1, dtype=torch.float64)[None, :, None] * m
            out.append((h * wt).sum(1) / wt.sum(1).clamp(min=1e-9))
        else:
            idx = torch.tensor([max(i for i in range(T) if mask[b][i]) for b in range(B)])
            out.append(h[torch.arange(B), idx])
    v = torch.cat(out, 1)
    if normalize:
        v = v / v.norm(dim=1, keepdim=True).clamp(min=1e-12)
    return v


POOLINGS = {  # name: (modes, normalize) — the C test writes the matching modules.json / 1_Pooling/config.json
    'mean_norm': (['mean'], True), 'mean': (['mean'], False), 'cls_norm': (['cls'], True), 'max': (['max'], False),
    'mean_sqrt': (['mean_sqrt_len_tokens'], False), 'weighted': (['weightedmean'], False), 'last': (['lasttoken'], False),
    'cls_mean': (['cls', 'mean'], True),
}


def batch(cfg, lengths, width, pair=False):
    V, B = cfg['vocab_size'], len(lengths)
    ids = RNG.integers(5, V, size=(B, width)).tolist()
    mask = [[1 if t < n else 0 for t in range(width)] for n in lengths]
    types = [[1 if pair and r == 0 and n // 2 <= t < n else 0 for t, _ in enumerate(range(width))] for r, n in enumerate(lengths)]
    for r, n in enumerate(lengths):
        ids[r][0] = 2  # [CLS]
        ids[r][n - 1] = 3  # [SEP]
        for t in range(n, width):
            ids[r][t] = 0  # [PAD]
    return {'ids': ids, 'mask': mask, 'types': types}


def main(out):
    cases = {}
    tiny = {'architectures': ['BertModel'], 'model_type': 'bert', 'hidden_size': 32, 'num_hidden_layers': 2,
            'num_attention_heads': 4, 'intermediate_size': 64, 'hidden_act': 'gelu', 'max_position_embeddings': 16,
            'type_vocab_size': 2, 'vocab_size': 40, 'layer_norm_eps': 1e-12, 'position_embedding_type': 'absolute',
            'hidden_dropout_prob': 0.1, 'attention_probs_dropout_prob': 0.1, 'initializer_range': 0.02,
            'pad_token_id': 0, 'torch_dtype': 'float32', 'transformers_version': '4.41.0', 'use_cache': True}
    # d = 6 (not a multiple of 4), an FFN of 20 (not of 8), the "bert." prefix, legacy LayerNorm names and
    # tensors the encoder does not use
    odd = {'model_type': 'bert', 'hidden_size': 12, 'num_hidden_layers': 1, 'num_attention_heads': 2,
           'intermediate_size': 20, 'hidden_act': 'gelu', 'max_position_embeddings': 12, 'type_vocab_size': 3,
           'vocab_size': 30, 'layer_norm_eps': 1e-5}
    batches = {'tiny': [batch(tiny, [10, 6, 3], 10, pair=True), batch(tiny, [16, 1, 16, 9], 16)],
               'odd': [batch(odd, [12, 5], 12, pair=True), batch(odd, [1, 2, 3], 3)]}
    for name, cfg in (('tiny', tiny), ('odd', odd)):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'config.json'), 'w') as f:
            json.dump(cfg, f, indent=2)
        w = make_weights(cfg)
        variants = {'f32': w}
        files = {'f32': 'model.safetensors'}
        if name == 'tiny':
            variants['f16'] = {k: v.astype(np.float16).astype(np.float32) for k, v in w.items()}
            variants['bf16'] = {k: bf16_value(bf16_bits(v)) for k, v in w.items()}
            files.update({'f16': 'model.f16.safetensors', 'bf16': 'model.bf16.safetensors'})
            safetensors(os.path.join(d, files['f32']), [(k, 'F32', v) for k, v in w.items()])
            safetensors(os.path.join(d, files['f16']), [(k, 'F16', v.astype(np.float16)) for k, v in w.items()])
            safetensors(os.path.join(d, files['bf16']), [(k, 'BF16', bf16_bits(v)) for k, v in w.items()])
        else:
            named = []
            for k, v in w.items():
                k = 'bert.' + k
                if 'LayerNorm' in k:
                    k = k.replace('.weight', '.gamma').replace('.bias', '.beta')
                named.append((k, 'F32', v))
            named += [('bert.pooler.dense.weight', 'F32', (RNG.standard_normal((12, 12)) * 0.02).astype(np.float32)),
                      ('bert.pooler.dense.bias', 'F32', np.zeros(12, np.float32)),
                      ('bert.embeddings.position_ids', 'I64', np.arange(12, dtype=np.int64).reshape(1, 12)),
                      ('cls.predictions.bias', 'F32', np.zeros(30, np.float32))]
            safetensors(os.path.join(d, files['f32']), named)
        for dt, wv in variants.items():
            for bi, b in enumerate(batches[name]):
                h = forward(wv, cfg, b['ids'], b['mask'], b['types'])
                for pname, (modes, norm) in POOLINGS.items():
                    v = pool(h, b['mask'], modes, norm)
                    cases['%s/%s/%d/%s' % (name, dt, bi, pname)] = [float(x) for x in v.flatten()]
    with open(os.path.join(out, 'expected.json'), 'w') as f:
        json.dump({'batches': batches, 'files': {'tiny': files, 'odd': {'f32': 'model.safetensors'}}, 'expected': cases}, f)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'tests/c/encoder')
