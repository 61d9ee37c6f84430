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
torch is only for making these fixtures: never a test dependency. What it shares with tests/gen/mpnet.py
is in tests/gen/tiny_folder.py: the word pieces after the specials, the tokenizer.json frame, the embeddings'
and Linear/LayerNorm weight names, the drawing and the safetensors, forward helpers (LayerNorm, GELU, the
pooling), the texts (all but the first and the mask token's), rows and batches, and writing the folder's
files and goldens.json.
"""
import functools
import os

import numpy as np
import torch

import tiny_folder

OUT = os.path.join(tiny_folder.ROOT, 'tests', 'distilbert')
DIR = os.path.join(OUT, 'tiny')
H, F, P, HEADS, LAYERS, EPS, MAXLEN = 32, 64, 128, 4, 2, 1e-12, 128
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']


# ------------------------------------------------------------------ vocabulary and tokenizer.json

def vocabulary():
    """The five specials, bert-base-uncased's ASCII single characters (ids 999..1995: punctuation, digits,
    a-z), its next 1,000 entries (ids 1996..2995: the commonest words and ## pieces), ##a-##z."""
    return list(dict.fromkeys(SPECIALS + tiny_folder.wordpieces()))


def tokenizer_json(vocab):
    tok, seq = tiny_folder.special, tiny_folder.sequence
    return tiny_folder.tokenizer_json(
        vocab, [tiny_folder.added_token(i, s) for i, s in enumerate(SPECIALS)],
        single=[tok('[CLS]'), seq('A'), tok('[SEP]')],
        pair=[tok('[CLS]'), seq('A'), tok('[SEP]'), seq('B', 1), tok('[SEP]', 1)],
        specials=('[CLS]', '[SEP]'))


# ------------------------------------------------------------------ weights

def layer_specs(p):
    """One transformer layer's [(name, shape, kind)] in declaration order, p the prefix of its names."""
    lin, norm = tiny_folder.linear_specs, tiny_folder.norm_specs
    return ([s for m in ('q_lin', 'k_lin', 'v_lin', 'out_lin') for s in lin(f'{p}attention.{m}', H, H)] + norm(f'{p}sa_layer_norm', H)
            + lin(f'{p}ffn.lin1', F, H) + lin(f'{p}ffn.lin2', H, F) + norm(f'{p}output_layer_norm', H))


def weight_specs(V):
    """DistilBertModel's [(name, shape, kind)] in declaration order (the order of the draws): the embeddings,
    then the layers (no pooler)."""
    return tiny_folder.weight_specs(V, P, H, 'transformer.layer.', LAYERS, layer_specs)


# ------------------------------------------------------------------ the reference forward

def forward(W, ids, mask, dtype):
    """Sentence embeddings [B, H] of ids [B, T] with attention mask [B, T], in dtype."""
    w, ln, lin = tiny_folder.torch_weights(W, dtype, EPS)
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
        f = tiny_folder.gelu(lin(sa, f'{p}ffn.lin1'))
        x = ln(lin(f, f'{p}ffn.lin2') + sa, f'{p}output_layer_norm')
    return tiny_folder.mean_normalize(x, mask.to(dtype))


# ------------------------------------------------------------------ inputs

TEXTS = tiny_folder.texts('Good morning.', '[MASK]')


def row(rng, n, V):
    """[CLS], n - 2 random pieces (never a special id), [SEP]."""
    return tiny_folder.row(rng, n, CLS, SEP, MASK + 1, V)


batch = functools.partial(tiny_folder.batch, pad_id=PAD)


def inputs(V, tok_file):
    rng = np.random.default_rng(12)
    out = [batch(f'single-{n}', [row(rng, n, V)]) for n in (2, 6, 31, 77, 128)]
    out.append(batch('padded', [row(rng, n, V) for n in (3, 17, 60, 128)]))
    out.append(batch('left', [row(rng, n, V) for n in (5, 12, 40)], left=True))
    toks = tiny_folder.tokenize(tok_file, TEXTS, MAXLEN)
    for ids in toks:
        assert ids[0] == CLS and ids[-1] == SEP and len(ids) <= MAXLEN and CLS not in ids[1:] and SEP not in ids[:-1], ids
    assert MASK in toks[4], toks[4]                     # the literal [MASK] is the added token, not split
    return out + tiny_folder.text_batches(batch, TEXTS, toks)


# ------------------------------------------------------------------ main

def main():
    torch.set_num_threads(1)
    vocab = vocabulary()
    V = len(vocab)
    W = tiny_folder.draw_weights(weight_specs(V), 8)
    config = {
        'activation': 'gelu', 'architectures': ['DistilBertModel'], 'attention_dropout': 0.1, 'dim': H, 'dropout': 0.1,
        'hidden_dim': F, 'initializer_range': 0.02, 'max_position_embeddings': P, 'model_type': 'distilbert',
        'n_heads': HEADS, 'n_layers': LAYERS, 'pad_token_id': PAD, 'qa_dropout': 0.1, 'seq_classif_dropout': 0.2,
        'sinusoidal_pos_embds': False, 'tie_weights_': True, 'torch_dtype': 'float32', 'transformers_version': '4.41.0',
        'vocab_size': V}
    tokenizer_config = {
        'do_lower_case': True, 'model_max_length': 512, 'tokenizer_class': 'DistilBertTokenizer', 'cls_token': '[CLS]',
        'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]', 'mask_token': '[MASK]'}
    tok_file = tiny_folder.write_folder(DIR, H, MAXLEN, W, config, tokenizer_json(vocab), tokenizer_config)

    batches = inputs(V, tok_file)
    for b in batches:
        _, _, e64, e32 = tiny_folder.embed(forward, W, b)
        extra = ''
        if b['name'] in ('padded', 'left'):                   # each row alone, unpadded
            devs = tiny_folder.alone_devs(forward, W, b, e64)
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
    tiny_folder.write_goldens(os.path.join(OUT, 'goldens.json'), 'tests/gen/distilbert.py', H, batches)


if __name__ == '__main__':
    main()
