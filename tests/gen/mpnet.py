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
What it shares with tests/gen/distilbert.py is in tests/gen/tiny_folder.py: the word pieces after the
specials, the tokenizer.json frame, the embeddings' and Linear/LayerNorm weight names, the drawing and the
safetensors, forward helpers (LayerNorm, GELU, the pooling), the texts (all but the first and the mask
token's), rows and batches, and writing the folder's files and goldens.json.
"""
import functools
import os

import numpy as np
import torch

import tiny_folder

OUT = os.path.join(tiny_folder.ROOT, 'tests', 'mpnet')
DIR = os.path.join(OUT, 'tiny')
H, I, P, HEADS, LAYERS, BUCKETS, EPS, MAXLEN = 32, 64, 130, 4, 2, 32, 1e-5, 128
BOS, PAD, EOS, UNK = 0, 1, 2, 3


# ------------------------------------------------------------------ vocabulary and tokenizer.json

def vocabulary():
    """<s> <pad> </s> <unk> [UNK], bert-base-uncased's ASCII single characters (ids 999..1995: punctuation,
    digits, a-z), its next 1,000 entries (ids 1996..2995: the commonest words and ## pieces), ##a-##z, <mask>."""
    return list(dict.fromkeys(['<s>', '<pad>', '</s>', '<unk>', '[UNK]'] + tiny_folder.wordpieces())) + ['<mask>']


def tokenizer_json(vocab):
    tok, seq = tiny_folder.special, tiny_folder.sequence
    return tiny_folder.tokenizer_json(
        vocab, [tiny_folder.added_token(i, vocab[i], lstrip=(vocab[i] == '<mask>')) for i in (0, 1, 2, 3, len(vocab) - 1)],
        single=[tok('<s>'), seq('A'), tok('</s>')],
        pair=[tok('<s>'), seq('A'), tok('</s>'), tok('</s>'), seq('B'), tok('</s>')],
        specials=('<s>', '</s>'))


# ------------------------------------------------------------------ weights

def layer_specs(p):
    """One encoder layer's [(name, shape, kind)] in declaration order, p the prefix of its names."""
    lin, norm = tiny_folder.linear_specs, tiny_folder.norm_specs
    return ([s for m in 'qkvo' for s in lin(f'{p}attention.attn.{m}', H, H)] + norm(f'{p}attention.LayerNorm', H)
            + lin(f'{p}intermediate.dense', I, H) + lin(f'{p}output.dense', H, I) + norm(f'{p}output.LayerNorm', H))


def weight_specs(V):
    """MPNetModel's [(name, shape, kind)] in declaration order (the order of the draws): the embeddings, the
    layers, the relative position bias table (kind 'rel'), the pooler."""
    tail = [('encoder.relative_attention_bias.weight', [BUCKETS, HEADS], 'rel')] + tiny_folder.linear_specs('pooler.dense', H, H, 'w')
    return tiny_folder.weight_specs(V, P, H, 'encoder.layer.', LAYERS, layer_specs, tail)


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
    w, ln, lin = tiny_folder.torch_weights(W, dtype, EPS)
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
        f = tiny_folder.gelu(lin(a, f'{p}intermediate.dense'))
        x = ln(lin(f, f'{p}output.dense') + a, f'{p}output.LayerNorm')
    return tiny_folder.mean_normalize(x, m)


# ------------------------------------------------------------------ inputs

TEXTS = tiny_folder.texts('Hello world!', '<mask>')


def row(rng, n, V):
    """<s>, n - 2 random pieces (never a special id), </s>."""
    return tiny_folder.row(rng, n, BOS, EOS, 4, V - 1)


batch = functools.partial(tiny_folder.batch, pad_id=PAD)


def inputs(V, tok_file):
    rng = np.random.default_rng(11)
    out = [batch(f'single-{n}', [row(rng, n, V)]) for n in (2, 5, 17, 40, 100, 128)]
    out.append(batch('padded', [row(rng, n, V) for n in (3, 9, 33, 64, 120)]))
    out.append(batch('left', [row(rng, n, V) for n in (7, 20, 50)], left=True))
    inner = [row(rng, 12, V), row(rng, 30, V)]
    inner[0][6] = PAD
    inner[1][10] = inner[1][11] = inner[1][25] = PAD
    out.append(batch('inner_pad', inner))
    toks = tiny_folder.tokenize(tok_file, [t.strip() for t in TEXTS], MAXLEN)
    return out + tiny_folder.text_batches(batch, TEXTS, toks)


# ------------------------------------------------------------------ main

def main():
    torch.set_num_threads(1)
    vocab = vocabulary()
    V = len(vocab)
    W = tiny_folder.draw_weights(weight_specs(V), 7, rel=(0.0, 0.5))
    config = {
        'architectures': ['MPNetModel'], 'attention_probs_dropout_prob': 0.1, 'bos_token_id': BOS, 'eos_token_id': EOS,
        'hidden_act': 'gelu', 'hidden_dropout_prob': 0.1, 'hidden_size': H, 'initializer_range': 0.02,
        'intermediate_size': I, 'layer_norm_eps': EPS, 'max_position_embeddings': P, 'model_type': 'mpnet',
        'num_attention_heads': HEADS, 'num_hidden_layers': LAYERS, 'pad_token_id': PAD,
        'relative_attention_num_buckets': BUCKETS, 'torch_dtype': 'float32', 'transformers_version': '4.41.0',
        'vocab_size': V}
    tokenizer_config = {
        'do_lower_case': True, 'model_max_length': 512, 'tokenizer_class': 'MPNetTokenizer', 'bos_token': '<s>',
        'eos_token': '</s>', 'unk_token': '[UNK]', 'sep_token': '</s>', 'pad_token': '<pad>', 'cls_token': '<s>',
        'mask_token': '<mask>'}
    tok_file = tiny_folder.write_folder(DIR, H, MAXLEN, W, config, tokenizer_json(vocab), tokenizer_config)

    batches = inputs(V, tok_file)
    for b in batches:
        ids, mask, e64, e32 = tiny_folder.embed(forward, W, b)
        extra = ''
        if b['name'] in ('padded', 'left', 'inner_pad'):     # (b) each row alone, unpadded
            dev = max(tiny_folder.alone_devs(forward, W, b, e64))
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
    tiny_folder.write_goldens(os.path.join(OUT, 'goldens.json'), 'tests/gen/mpnet.py', H, batches)


if __name__ == '__main__':
    main()
