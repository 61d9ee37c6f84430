#!/usr/bin/python3
"""train.py -- a small BERT sentence encoder for the WordNet reverse dictionary, trained from scratch.

Type a description, get the words that mean it: definitions and lemmas are embedded by the same
encoder (a plain HF BertModel + sentence-transformers mean pooling + L2 normalize) and ranked by
cosine.

End to end, from the repository root (Debian 12: apt-get install wordnet-base; /usr/bin/python3 with
torch and numpy; Node 20 with the repo's node_modules):

    node tools/wordnet/prepare.mjs                 # ~20 s -> build/wordnet/wordnet.json + tokenizer files
    /usr/bin/python3 tools/wordnet/train.py        # defaults = the committed model: 2400 steps, 58 min wall
                                                   #   (~1.4 s/step on 2 cores shared with other jobs) + ~4 min
                                                   #   evaluation; writes models/wordnet/ and build/wordnet/
    /usr/bin/python3 tools/wordnet/embed_ref.py --samples   # oracle embeddings -> build/wordnet/ref-embeddings.*

Pilots: `--steps 600 --no-export --tag pilot-x` trains briefly and writes build/wordnet/metrics-pilot-x.json.

Data and split: all 117,659 WordNet 3.0 synsets (n, v, a incl. satellites, r). 5% of them (seeded
permutation, --split-seed) are held out: their definitions and examples are never trained on, and
they give no (text, lemma) pair. Training pairs are (text, lemma) for every text (the definition and,
with --examples, each example) and every lemma of a training synset.

Model: BertModel as transformers computes it -- embeddings (word + position + token_type 0) ->
LayerNorm(1e-12) -> post-norm layers (Q/K/V/O with biases, additive mask finfo(f32).min on padded keys,
softmax, residual + LayerNorm; Linear -> exact-erf GELU -> Linear, residual + LayerNorm) -> mean over
attention-masked tokens ([CLS]/[SEP] included) -> L2 normalize. Vocabulary: bert-base-uncased's 30,522
wordpieces. Loss: symmetric InfoNCE over in-batch pairs (text->lemma and lemma->text), false negatives
(a lemma of the text's synset elsewhere in the batch) masked, optional extra random training lemmas as
negatives on the text->lemma side. AdamW, linear warmup then linear decay.

Evaluation (held-out synsets only): query = the definition (and, reported separately, each example);
candidates = all 147,306 distinct lemma strings (case-insensitive dedupe); hit@k = any lemma of the
synset in the top k by cosine. Q8 simulation: every 2-D weight (embedding tables included) is
quantized as APR Q8 does (scale = f32(max|w|/127), q = round-half-away(w/scale) clamped to +-127).
Baseline: BM25 (k1 1.2, b 0.75, idf = ln(1 + (N - n + 0.5)/(n + 0.5)), query-term frequency linear)
over per-lemma documents = the definitions and examples of the lemma's training synsets, with two
tokenizations: the same wordpieces, and plain lowercase words ([a-z0-9]+). A gold lemma with BM25
score 0 (no shared term) counts as not retrieved.
"""
import argparse
import json
import math
import os
import random
import re
import struct
import sys
import time

# Threads: 2 torch (OpenMP) threads that sleep when idle (spinning OpenMP workers stall badly when other
# jobs share the 2 cores: 4x slower here), single-threaded BLAS inside them. Set before torch loads.
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')


def preload_blas():
    """Debian's python3-torch calls libblas.so.3, which defaults to netlib's reference BLAS (~10x slower
    than OpenBLAS here). Load an OpenBLAS libblas.so.3 first (RTLD_GLOBAL) so torch binds to it: $WORDNET_BLAS,
    else the system's libopenblas0-pthread, else one unpacked with
    `apt-get download libopenblas0-pthread && dpkg -x libopenblas0-pthread_*.deb /tmp/obl/root`."""
    import ctypes
    sub = 'usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3'
    for p in [os.environ.get('WORDNET_BLAS'), '/' + sub, '/tmp/obl/root/' + sub]:
        if p and os.path.exists(p):
            ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)
            return p
    return None


PRELOADED_BLAS = preload_blas()
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.path.join(ROOT, 'build', 'wordnet')
F32_MIN = torch.finfo(torch.float32).min


# ----------------------------------------------------------------------------------------- model
class SelfAttn(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)


class Dense(nn.Module):  # .dense + optional .LayerNorm, as HF names them
    def __init__(self, i, o, ln=True, eps=1e-12):
        super().__init__()
        self.dense = nn.Linear(i, o)
        if ln:
            self.LayerNorm = nn.LayerNorm(o, eps=eps)


class Attention(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.self = SelfAttn(h)
        self.output = Dense(h, h)


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg['hidden_size']
        self.attention = Attention(h)
        self.intermediate = Dense(h, cfg['intermediate_size'], ln=False)
        self.output = Dense(cfg['intermediate_size'], h)


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg['hidden_size']
        self.word_embeddings = nn.Embedding(cfg['vocab_size'], h, padding_idx=cfg['pad_token_id'])
        self.position_embeddings = nn.Embedding(cfg['max_position_embeddings'], h)
        self.token_type_embeddings = nn.Embedding(cfg['type_vocab_size'], h)
        self.LayerNorm = nn.LayerNorm(h, eps=cfg['layer_norm_eps'])


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg['num_hidden_layers'])])


class Bert(nn.Module):
    """transformers' BertModel (no pooler) + mean pooling + L2 normalize. State-dict names are HF's."""

    def __init__(self, cfg, dropout=0.0):
        super().__init__()
        self.cfg = cfg
        self.nh = cfg['num_attention_heads']
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        self.drop = dropout
        self.apply(self._init)

    @staticmethod
    def _init(m):  # BertPreTrainedModel._init_weights, initializer_range 0.02
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.02)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if m.padding_idx is not None:
                with torch.no_grad():
                    m.weight[m.padding_idx].zero_()
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def hidden(self, ids, mask):
        B, L = ids.shape
        H = self.cfg['hidden_size']
        nh, hd = self.nh, H // self.nh
        e = self.embeddings
        pos = torch.arange(L, device=ids.device)
        x = e.word_embeddings(ids) + e.token_type_embeddings.weight[0]  # HF order: (word + type) + position
        x = x + e.position_embeddings(pos)[None]
        x = e.LayerNorm(x)
        x = F.dropout(x, self.drop, self.training)
        ext = (1.0 - mask)[:, None, None, :] * F32_MIN  # HF get_extended_attention_mask
        scale = 1.0 / math.sqrt(hd)
        for lyr in self.encoder.layer:
            a = lyr.attention.self
            q = a.query(x).view(B, L, nh, hd).transpose(1, 2)
            k = a.key(x).view(B, L, nh, hd).transpose(1, 2)
            v = a.value(x).view(B, L, nh, hd).transpose(1, 2)
            s = torch.matmul(q, k.transpose(-1, -2)) * scale + ext
            p = torch.softmax(s, dim=-1)
            p = F.dropout(p, self.drop, self.training)
            c = torch.matmul(p, v).transpose(1, 2).reshape(B, L, H)
            o = lyr.attention.output
            x = o.LayerNorm(F.dropout(o.dense(c), self.drop, self.training) + x)
            f = F.gelu(lyr.intermediate.dense(x))  # exact erf GELU
            o = lyr.output
            x = o.LayerNorm(F.dropout(o.dense(f), self.drop, self.training) + x)
        return x

    def forward(self, ids, mask):
        x = self.hidden(ids, mask)
        m = mask[..., None]
        pooled = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)  # sentence-transformers Pooling mean
        return F.normalize(pooled, p=2, dim=1)  # sentence-transformers Normalize


def model_config(hidden, layers, heads, inter, max_pos):
    return {
        'architectures': ['BertModel'], 'model_type': 'bert',
        'attention_probs_dropout_prob': 0.1, 'hidden_dropout_prob': 0.1, 'classifier_dropout': None,
        'hidden_act': 'gelu', 'hidden_size': hidden, 'initializer_range': 0.02,
        'intermediate_size': inter, 'layer_norm_eps': 1e-12, 'max_position_embeddings': max_pos,
        'num_attention_heads': heads, 'num_hidden_layers': layers, 'pad_token_id': 0,
        'position_embedding_type': 'absolute', 'torch_dtype': 'float32', 'type_vocab_size': 2,
        'use_cache': True, 'vocab_size': 30522,
    }


# ------------------------------------------------------------------------------------------ data
def pad(seqs):
    L = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), L), np.int64)
    mask = np.zeros((len(seqs), L), np.float32)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return torch.from_numpy(ids), torch.from_numpy(mask)


@torch.no_grad()
def encode(model, seqs, tokens_per_batch=24000):
    """Embed a list of id sequences (sorted by length internally); returns [n, H] float32."""
    model.eval()
    order = np.argsort([len(s) for s in seqs], kind='stable')
    out = torch.zeros(len(seqs), model.cfg['hidden_size'])
    i = 0
    while i < len(order):
        L = len(seqs[order[min(len(order) - 1, i)]])
        j = i
        while j < len(order) and (j - i + 1) * max(L, len(seqs[order[j]])) <= tokens_per_batch:
            L = max(L, len(seqs[order[j]]))
            j += 1
        j = max(j, i + 1)
        idx = order[i:j]
        ids, mask = pad([seqs[k] for k in idx])
        out[torch.from_numpy(idx)] = model(ids, mask)
        i = j
    return out


def split_synsets(n, frac, seed):
    rng = np.random.RandomState(seed)
    perm = rng.permutation(n)
    nh = int(round(frac * n))
    held = np.sort(perm[:nh])
    train = np.sort(perm[nh:])
    return train, held


# ------------------------------------------------------------------------------------------ eval
def gold_ranks(scores, golds, zero_is_miss=False):
    """scores [q, N] tensor; golds list of index lists. Rank (0-based) of the best gold with ties broken
    by index (as a stable top-k would); inf if zero_is_miss and the best gold scores <= 0."""
    ranks = np.empty(len(golds))
    for r, g in enumerate(golds):
        row = scores[r]
        gi = torch.tensor(g)
        gs = row[gi]
        best = gs.max()
        bi = gi[gs == best].min()
        if zero_is_miss and best <= 0:
            ranks[r] = np.inf
            continue
        ranks[r] = int((row > best).sum()) + int((row[:bi] == best).sum())
    return ranks


def recall(ranks, ks=(1, 10)):
    return {f'recall@{k}': float(np.mean(ranks < k)) for k in ks}


def eval_dense(q_emb, lemma_emb, golds, chunk=512):
    ranks = []
    for i in range(0, len(golds), chunk):
        s = q_emb[i:i + chunk] @ lemma_emb.T
        ranks.append(gold_ranks(s, golds[i:i + chunk]))
    return np.concatenate(ranks) if ranks else np.zeros(0)


def q8_sim(model):
    """APR Q8 round trip of every 2-D weight (embedding tables included); biases and LayerNorm stay f32."""
    import copy
    m = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() != 2:
                continue
            w = p.detach().numpy().astype(np.float32)
            mx = float(np.abs(w).max())
            scale = np.float32(1.0) if mx == 0 else np.float32(np.float64(np.float32(mx)) / 127.0)
            x = (w / scale).astype(np.float64)  # f32 division, then exact in f64
            q = np.sign(x) * np.floor(np.abs(x) + 0.5)  # round half away from zero
            q = np.clip(q, -127, 127)
            p.copy_(torch.from_numpy((q.astype(np.float32) * scale).astype(np.float32)))
    return m


WORD_RE = re.compile(r'[a-z0-9]+')


def bm25_eval(docs_terms, query_terms, golds, k1=1.2, b=0.75, chunk=256):
    """docs_terms / query_terms: lists of term-id lists. Returns ranks (inf = not retrieved)."""
    import scipy.sparse as sp
    N = len(docs_terms)
    rows, cols = [], []
    for d, ts in enumerate(docs_terms):
        rows.extend([d] * len(ts))
        cols.extend(ts)
    V = max([max(ts) for ts in docs_terms if ts] + [max(ts) for ts in query_terms if ts]) + 1
    tf = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(N, V))
    tf.sum_duplicates()
    dl = np.asarray(tf.sum(1)).ravel()
    avgdl = dl.mean()
    df = np.bincount(tf.indices, minlength=V)
    idf = np.log(1.0 + (N - df + 0.5) / (df + 0.5)).astype(np.float32)
    tf = tf.tocoo()
    w = idf[tf.col] * tf.data * (k1 + 1) / (tf.data + k1 * (1 - b + b * dl[tf.row] / avgdl))
    W = sp.csr_matrix((w.astype(np.float32), (tf.row, tf.col)), shape=(N, V)).T.tocsr()  # V x N
    qr, qc = [], []
    for i, ts in enumerate(query_terms):
        qr.extend([i] * len(ts))
        qc.extend(ts)
    Q = sp.csr_matrix((np.ones(len(qr), np.float32), (qr, qc)), shape=(len(query_terms), V))
    Q.sum_duplicates()
    ranks = []
    for i in range(0, len(query_terms), chunk):
        s = torch.from_numpy((Q[i:i + chunk] @ W).toarray())
        ranks.append(gold_ranks(s, golds[i:i + chunk], zero_is_miss=True))
    return np.concatenate(ranks)


def run_bm25(S, lemmas, train_syn, held_syn):
    res = {}
    texts_of = lambda r: [r['definition']] + r['examples']
    # wordpiece terms (ids without [CLS]/[SEP])
    wp_doc = [[] for _ in lemmas]
    for s in train_syn:
        r = S[s]
        toks = list(r['def'][1:-1]) + [t for e in r['ex'] for t in e[1:-1]]
        for l in set(r['lem']):
            wp_doc[l].extend(toks)
    golds = [sorted(set(S[s]['lem'])) for s in held_syn]
    wp_q = [list(S[s]['def'][1:-1]) for s in held_syn]
    t = time.time()
    res['wordpiece'] = recall(bm25_eval(wp_doc, wp_q, golds))
    # plain lowercase words
    vocab = {}
    tid = lambda w: vocab.setdefault(w, len(vocab))
    w_doc = [[] for _ in lemmas]
    for s in train_syn:
        r = S[s]
        toks = [tid(w) for x in texts_of(r) for w in WORD_RE.findall(x.lower())]
        for l in set(r['lem']):
            w_doc[l].extend(toks)
    w_q = [[tid(w) for w in WORD_RE.findall(S[s]['definition'].lower())] for s in held_syn]
    res['words'] = recall(bm25_eval(w_doc, w_q, golds))
    res['empty_documents'] = int(sum(1 for d in w_doc if not d))
    res['seconds'] = round(time.time() - t, 1)
    return res


# ---------------------------------------------------------------------------------------- export
def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, np.ndarray float32/float16) in file order."""
    header, off, blobs = {}, 0, []
    if metadata:
        header['__metadata__'] = metadata
    for name, a in tensors:
        a = np.ascontiguousarray(a)
        dt = {np.dtype('float32'): 'F32', np.dtype('float16'): 'F16'}[a.dtype]
        raw = a.astype(a.dtype.newbyteorder('<'), copy=False).tobytes()
        header[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode('utf-8')
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for raw in blobs:
            f.write(raw)


def hf_tensor_order(cfg):
    names = ['embeddings.word_embeddings.weight', 'embeddings.position_embeddings.weight',
             'embeddings.token_type_embeddings.weight', 'embeddings.LayerNorm.weight', 'embeddings.LayerNorm.bias']
    for i in range(cfg['num_hidden_layers']):
        p = f'encoder.layer.{i}.'
        for n in ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']:
            names += [p + n + '.weight', p + n + '.bias']
        names += [p + 'attention.output.LayerNorm.weight', p + 'attention.output.LayerNorm.bias',
                  p + 'intermediate.dense.weight', p + 'intermediate.dense.bias',
                  p + 'output.dense.weight', p + 'output.dense.bias',
                  p + 'output.LayerNorm.weight', p + 'output.LayerNorm.bias']
    return names


def export(out, model, cfg, max_len, S, lemmas, held_syn, metrics, args):
    os.makedirs(os.path.join(out, '1_Pooling'), exist_ok=True)
    os.makedirs(os.path.join(out, '2_Normalize'), exist_ok=True)
    sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    names = hf_tensor_order(cfg)
    assert sorted(names) == sorted(sd.keys()), set(names) ^ set(sd.keys())
    nbytes = sum(sd[n].size for n in names) * 4
    dtype = np.float32 if nbytes <= 21_000_000 else np.float16
    write_safetensors(os.path.join(out, 'model.safetensors'), [(n, sd[n].astype(dtype)) for n in names],
                      {'format': 'pt'})
    wj = lambda p, o: open(os.path.join(out, p), 'w').write(json.dumps(o, indent=2) + '\n')
    wj('config.json', cfg)
    wj('modules.json', [
        {'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
        {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
        {'idx': 2, 'name': '2', 'path': '2_Normalize', 'type': 'sentence_transformers.models.Normalize'}])
    wj('1_Pooling/config.json', {
        'word_embedding_dimension': cfg['hidden_size'], 'pooling_mode_cls_token': False,
        'pooling_mode_mean_tokens': True, 'pooling_mode_max_tokens': False,
        'pooling_mode_mean_sqrt_len_tokens': False, 'pooling_mode_weightedmean_tokens': False,
        'pooling_mode_lasttoken': False, 'include_prompt': True})
    wj('sentence_bert_config.json', {'max_seq_length': max_len, 'do_lower_case': False})
    with open(os.path.join(out, 'lemmas.txt'), 'w') as f:
        for l in lemmas:
            assert '\n' not in l['text']
            f.write(l['text'] + '\n')
    with open(os.path.join(out, 'heldout.jsonl'), 'w') as f:
        for s in held_syn:
            r = S[s]
            f.write(json.dumps({'synset': r['key'], 'definition': r['definition'], 'examples': r['examples'],
                                'lemmas': r['lemmas']}, ensure_ascii=False) + '\n')
    sizes = {p: os.path.getsize(os.path.join(out, p)) for p in sorted(os.listdir(out))
             if os.path.isfile(os.path.join(out, p))}
    metrics['files_bytes'] = sizes
    metrics['safetensors_dtype'] = 'F32' if dtype == np.float32 else 'F16'
    wj('metrics.json', metrics)
    write_card(out, metrics, cfg, args)
    metrics['files_bytes'] = {p: os.path.getsize(os.path.join(out, p)) for p in sorted(os.listdir(out))
                              if os.path.isfile(os.path.join(out, p))}
    metrics['files_bytes_total'] = sum(metrics['files_bytes'].values()) + sum(
        os.path.getsize(os.path.join(out, d, f)) for d in ('1_Pooling', '2_Normalize')
        for f in os.listdir(os.path.join(out, d)))
    wj('metrics.json', metrics)


def write_card(out, m, cfg, args):
    pct = lambda x: f'{100 * x:.1f}%'
    e = m['eval']
    bm = m['bm25']
    lines = [
        '---', 'library_name: sentence-transformers', 'pipeline_tag: sentence-similarity', 'language: en',
        'license: other', 'tags: [sentence-transformers, feature-extraction, bert, wordnet, reverse-dictionary]', '---',
        '', '# WordNet reverse-dictionary encoder (small BERT, trained from scratch)', '',
        'Describe a word ("a small boat pulled by a larger one") and rank WordNet lemmas ("tugboat", "tow", ...)',
        'by cosine similarity. Both sides go through this one sentence encoder: a plain `BertModel`',
        f'({cfg["num_hidden_layers"]} layers, hidden {cfg["hidden_size"]}, {cfg["num_attention_heads"]} heads, '
        f'intermediate {cfg["intermediate_size"]}, max {cfg["max_position_embeddings"]} positions, '
        f'bert-base-uncased WordPiece vocabulary of 30,522) + mean pooling over the attention mask',
        '(special tokens included) + L2 normalization. '
        f'{m["params"]:,} parameters, stored {m["safetensors_dtype"]} in `model.safetensors` (tensor names without a `bert.` prefix).',
        '', '## Files', '',
        '- `model.safetensors`, `config.json`, `tokenizer.json`, `vocab.txt`, `tokenizer_config.json`, '
        '`special_tokens_map.json`, `modules.json`, `1_Pooling/config.json`, `sentence_bert_config.json`: '
        'the Hugging Face / sentence-transformers layout.',
        f'- `lemmas.txt`: the {m["data"]["candidate_lemmas"]:,} distinct WordNet 3.0 lemma strings (case-insensitively '
        'deduplicated, `_` read as space; the lowercase spelling when WordNet has one), one per line: the demo\'s index order.',
        f'- `heldout.jsonl`: the {m["data"]["heldout_synsets"]:,} held-out synsets (never trained on).',
        '- `metrics.json`: the figures below.', '',
        '## Training', '',
        f'- Data: WordNet 3.0, all {m["data"]["synsets"]:,} synsets; {pct(args.heldout)} held out by a seeded '
        f'permutation (split seed {args.split_seed}). Pairs (text, lemma) for every definition'
        + (' and example' if args.examples else '') + f' of a training synset and each of its lemmas: {m["data"]["train_pairs"]:,} pairs.',
        f'- Tokenization: bert-base-uncased WordPiece (lowercase), [CLS] ... [SEP], truncated to {m["data"]["max_len"]} tokens.',
        f'- Objective: symmetric InfoNCE with in-batch negatives (batch {args.batch}'
        + (f', plus {args.extra_neg} random training lemmas as extra negatives per batch' if args.extra_neg else '')
        + '), false negatives masked, '
        + (f'learned temperature (init {args.temp})' if args.learn_temp else f'fixed temperature {args.temp}') + '.',
        f'- AdamW lr {args.lr}, weight decay {args.wd}, {args.warmup:.0%} linear warmup then linear decay, '
        f'{args.steps} steps, dropout {args.dropout}, grad clip 1.0, seed {args.seed}; BERT init (normal 0.02).',
        f'- {m["train_seconds"] / 60:.0f} min on 2 CPU cores (torch {torch.__version__}).'
        f' Script: `tools/wordnet/train.py` in the mlrt repository.', '',
        '## Evaluation (held-out synsets)', '',
        f'Query: the held-out definition; candidates: all {m["data"]["candidate_lemmas"]:,} lemma strings; a hit@k when any '
        'lemma of the synset is in the top k.', '',
        '| | recall@1 | recall@10 |', '|---|---|---|',
        f'| this model, f32 | {pct(e["f32"]["recall@1"])} | {pct(e["f32"]["recall@10"])} |',
        f'| this model, Q8-simulated weights (APR Q8, per tensor) | {pct(e["q8"]["recall@1"])} | {pct(e["q8"]["recall@10"])} |',
        f'| BM25, wordpieces | {pct(bm["wordpiece"]["recall@1"])} | {pct(bm["wordpiece"]["recall@10"])} |',
        f'| BM25, lowercase words | {pct(bm["words"]["recall@1"])} | {pct(bm["words"]["recall@10"])} |',
        '',
        'BM25 (k1 1.2, b 0.75): each lemma\'s document is the concatenation of the definitions and examples of its '
        'training synsets (empty when it has none).',
        f'Queries = held-out examples instead of definitions: recall@1 {pct(e["f32_examples"]["recall@1"])}, '
        f'recall@10 {pct(e["f32_examples"]["recall@10"])} ({e["f32_examples"]["n"]:,} examples).',
        f'{pct(m["data"]["heldout_with_seen_lemma"])} of the held-out synsets have a lemma that also names some training synset; '
        'the rest can only be found through the lemma\'s wordpieces.',
        '', '## Notes', '',
        '- The ranking is strongly lexical: lemmas sharing words with the description rank high. "a small boat pulled by a larger one" '
        'gives small boat, boat, boat hook, pilot boat, ... (tugboat is not in the top 10); "feeling or showing great happiness" gives '
        'happiness, feeling, joyful, glow, joyfulness, ...',
        '- Hyperparameters were chosen with a few 300-step pilots (learning rate, dropout, examples or not, extra random negatives); '
        'the later pilots evaluated on a dev split of the training synsets (`--dev`), not on the held-out synsets.',
        '- The training loss drops at each epoch boundary (memorization of seen pairs by the 3.9M-parameter embedding table) '
        'while held-out recall keeps improving.',
        '', 'WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved (WordNet license).', '',
    ]
    open(os.path.join(out, 'README.md'), 'w').write('\n'.join(lines))


# ----------------------------------------------------------------------------------------- train
def loaded_blas():
    try:
        libs = {l.split()[-1] for l in open('/proc/self/maps') if '/' in l and ('libblas' in l or 'openblas' in l)}
        return sorted(libs)
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--data', default=os.path.join(BUILD, 'wordnet.json'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'models', 'wordnet'))
    ap.add_argument('--tag', default='final')
    ap.add_argument('--no-export', action='store_true')
    ap.add_argument('--hidden', type=int, default=128)
    ap.add_argument('--layers', type=int, default=4)
    ap.add_argument('--heads', type=int, default=4)
    ap.add_argument('--inter', type=int, default=0, help='intermediate size (default 4 x hidden)')
    ap.add_argument('--max-pos', type=int, default=64)
    ap.add_argument('--batch', type=int, default=256)
    ap.add_argument('--extra-neg', type=int, default=0)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--wd', type=float, default=0.01)
    ap.add_argument('--warmup', type=float, default=0.05)
    ap.add_argument('--steps', type=int, default=2400)
    ap.add_argument('--dropout', type=float, default=0.0)
    ap.add_argument('--temp', type=float, default=0.05)
    ap.add_argument('--learn-temp', type=int, default=1)
    ap.add_argument('--examples', type=int, default=1, help='train on examples too')
    ap.add_argument('--heldout', type=float, default=0.05)
    ap.add_argument('--split-seed', type=int, default=20240611)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--bm25', type=int, default=1)
    ap.add_argument('--dev', action='store_true', help='pilot: train without, and evaluate on, a dev split of the training synsets')
    ap.add_argument('--q8', type=int, default=1, help='evaluate the Q8 simulation too')
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    t_start = time.time()

    D = json.load(open(args.data))
    S, lemmas, max_len = D['synsets'], D['lemmas'], D['max_len']
    assert max_len <= args.max_pos
    train_syn, held_syn = split_synsets(len(S), args.heldout, args.split_seed)
    if args.dev:  # pilots: evaluate on a dev split of the training synsets; the held-out set stays unused
        tr, dv = split_synsets(len(train_syn), args.heldout, args.split_seed + 1)
        train_syn, held_syn = train_syn[tr], train_syn[dv]
    NL = len(lemmas)

    # training pairs
    texts, pair_t, pair_l, pair_s = [], [], [], []
    for s in train_syn:
        r = S[s]
        lem = sorted(set(r['lem']))
        for t in [r['def']] + (r['ex'] if args.examples else []):
            ti = len(texts)
            texts.append(t)
            for l in lem:
                pair_t.append(ti)
                pair_l.append(l)
                pair_s.append(s)
    pair_t, pair_l, pair_s = np.array(pair_t), np.array(pair_l), np.array(pair_s)
    text_len = np.array([len(t) for t in texts])[pair_t]
    member = np.unique(np.concatenate([np.array([s * NL + l for l in set(S[s]['lem'])], np.int64) for s in train_syn]))
    train_lemmas = np.unique(pair_l)
    lemma_seqs = [l['ids'] for l in lemmas]
    seen = set(train_lemmas.tolist())
    held_seen = float(np.mean([any(l in seen for l in S[s]['lem']) for s in held_syn]))
    data_info = {
        'synsets': len(S), 'train_synsets': len(train_syn), 'heldout_synsets': len(held_syn),
        'train_texts': len(texts), 'train_pairs': len(pair_t), 'candidate_lemmas': NL,
        'train_lemmas': len(train_lemmas), 'heldout_with_seen_lemma': held_seen, 'max_len': max_len,
    }
    print('data', json.dumps(data_info), flush=True)

    inter = args.inter or 4 * args.hidden
    cfg = model_config(args.hidden, args.layers, args.heads, inter, args.max_pos)
    cfg['hidden_dropout_prob'] = cfg['attention_probs_dropout_prob'] = args.dropout
    model = Bert(cfg, dropout=args.dropout)
    n_params = sum(p.numel() for p in model.parameters())
    print(f'params {n_params:,}', 'blas', loaded_blas(), flush=True)
    log_scale = nn.Parameter(torch.tensor(math.log(1.0 / args.temp)), requires_grad=bool(args.learn_temp))
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() != 2]
    groups = [{'params': decay, 'weight_decay': args.wd}, {'params': no_decay, 'weight_decay': 0.0}]
    if args.learn_temp:
        groups.append({'params': [log_scale], 'weight_decay': 0.0})
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    warm = max(1, int(args.warmup * args.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda st: min((st + 1) / warm, max(0.0, (args.steps - st) / max(1, args.steps - warm))))

    rng = np.random.RandomState(args.seed)

    def epoch_batches():
        perm = rng.permutation(len(pair_t))
        out = []
        chunk = args.batch * 64
        for c in range(0, len(perm), chunk):
            idx = perm[c:c + chunk]
            idx = idx[np.argsort(text_len[idx], kind='stable')]
            for b in range(0, len(idx) - args.batch + 1, args.batch):
                out.append(idx[b:b + args.batch])
        rng.shuffle(out)
        return out

    losses, scales, t0, c0 = [], [], time.time(), time.process_time()
    batches, bi, epoch = epoch_batches(), 0, 0
    model.train()
    for step in range(args.steps):
        if bi == len(batches):
            batches, bi, epoch = epoch_batches(), 0, epoch + 1
        b = batches[bi]
        bi += 1
        ls = pair_l[b]
        tids, tmask = pad([texts[i] for i in pair_t[b]])
        lem_idx = ls
        if args.extra_neg:
            lem_idx = np.concatenate([ls, train_lemmas[rng.randint(0, len(train_lemmas), args.extra_neg)]])
        lids, lmask = pad([lemma_seqs[i] for i in lem_idx])
        te = model(tids, tmask)
        le = model(lids, lmask)
        scale = log_scale.clamp(max=math.log(100.0)).exp()
        logits = scale * te @ le.T  # [B, B + extra]
        keys = pair_s[b][:, None].astype(np.int64) * NL + lem_idx[None, :]
        pos = np.searchsorted(member, keys)
        fn = member[np.minimum(pos, len(member) - 1)] == keys
        B = len(b)
        fn[np.arange(B), np.arange(B)] = False
        logits = logits.masked_fill(torch.from_numpy(fn), -1e4)
        tgt = torch.arange(B)
        loss = 0.5 * (F.cross_entropy(logits, tgt) + F.cross_entropy(logits[:, :B].T, tgt))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        scales.append(float(scale))
        if (step + 1) % 50 == 0 or step == 0:
            el = time.time() - t0
            print(f'step {step + 1}/{args.steps} ep {epoch} loss {np.mean(losses[-50:]):.4f} scale {scale.item():.1f} '
                  f'lr {sched.get_last_lr()[0]:.2e} {el / (step + 1):.3f}s/step eta {el / (step + 1) * (args.steps - step - 1) / 60:.1f}min',
                  flush=True)
    train_seconds = time.time() - t0
    train_cpu_seconds = time.process_time() - c0
    nb = 20
    curve = [float(np.mean(c)) for c in np.array_split(np.array(losses), nb)]
    print('loss curve (20 buckets):', ' '.join(f'{x:.3f}' for x in curve), flush=True)

    # ---- evaluation
    t1 = time.time()
    golds = [sorted(set(S[s]['lem'])) for s in held_syn]
    q_def = [S[s]['def'] for s in held_syn]
    ex_q, ex_g = [], []
    for s, g in zip(held_syn, golds):
        for e in S[s]['ex']:
            ex_q.append(e)
            ex_g.append(g)
    model.eval()
    ev = {}
    for name, m in [('f32', model)] + ([('q8', q8_sim(model))] if args.q8 else []):
        lem_emb = encode(m, lemma_seqs)
        qe = encode(m, q_def)
        ranks = eval_dense(qe, lem_emb, golds)
        ev[name] = recall(ranks)
        ev[name]['mrr@10'] = float(np.mean(np.where(ranks < 10, 1.0 / (ranks + 1), 0.0)))
        if name == 'f32':
            seen_mask = np.array([any(l in seen for l in g) for g in golds])
            ev['f32_seen_lemma'] = recall(ranks[seen_mask])
            ev['f32_unseen_lemma'] = recall(ranks[~seen_mask])
            ev['f32_examples'] = {**recall(eval_dense(encode(m, ex_q), lem_emb, ex_g)), 'n': len(ex_q)}
        print(name, json.dumps(ev[name]), flush=True)
    print('f32 seen/unseen', json.dumps(ev['f32_seen_lemma']), json.dumps(ev['f32_unseen_lemma']),
          'examples', json.dumps(ev['f32_examples']), flush=True)
    eval_seconds = time.time() - t1
    bm = None
    if args.bm25:
        cache = os.path.join(BUILD, f'bm25-split{args.split_seed}{"-dev" if args.dev else ""}.json')
        if os.path.exists(cache):
            bm = json.load(open(cache))
        else:
            bm = run_bm25(S, lemmas, train_syn, held_syn)
            json.dump(bm, open(cache, 'w'))
        print('bm25', json.dumps(bm), flush=True)
    best_bm = max(bm['wordpiece']['recall@10'], bm['words']['recall@10']) if bm else float('nan')
    metrics = {
        'eval': ev, 'bm25': bm,
        'targets': {
            'model_r10_over_best_bm25_r10': ev['f32']['recall@10'] / best_bm if bm else None,
            'q8_minus_f32_r10_points': 100 * (ev['q8']['recall@10'] - ev['f32']['recall@10']) if args.q8 else None,
            'q8_minus_f32_r1_points': 100 * (ev['q8']['recall@1'] - ev['f32']['recall@1']) if args.q8 else None,
        },
        'params': n_params, 'config': cfg, 'data': data_info,
        'args': {k: (os.path.relpath(v, ROOT) if k in ('data', 'out') else v) for k, v in vars(args).items()},
        'train_seconds': round(train_seconds, 1), 'train_cpu_seconds': round(train_cpu_seconds, 1), 'eval_seconds': round(eval_seconds, 1),
        'total_seconds': round(time.time() - t_start, 1), 'loss_curve_20': curve,
        'final_logit_scale': scales[-1] if scales else None, 'torch': torch.__version__, 'blas': loaded_blas(),
        'seed': args.seed, 'split_seed': args.split_seed,
    }
    print('targets', json.dumps(metrics['targets']), flush=True)
    os.makedirs(BUILD, exist_ok=True)
    json.dump(metrics, open(os.path.join(BUILD, f'metrics-{args.tag}.json'), 'w'), indent=1)
    torch.save({'cfg': cfg, 'state_dict': model.state_dict()}, os.path.join(BUILD, f'model-{args.tag}.pt'))
    if not args.no_export and not args.dev:
        export(args.out, model, cfg, max_len, S, lemmas, held_syn, metrics, args)
        print('exported to', args.out, json.dumps(metrics['files_bytes']), flush=True)


if __name__ == '__main__':
    main()
