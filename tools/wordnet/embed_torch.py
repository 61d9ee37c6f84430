#!/usr/bin/python3
"""embed_torch.py -- torch (oracle) embeddings of many texts, for developing and checking the lemma index.

Uses tools/wordnet/embed_ref.py's independent forward pass (plain torch, f32; tokenized by the npm
`tokenizers` package) and writes the embeddings as raw little-endian f32, row-major [n][dim]:

    /usr/bin/python3 tools/wordnet/embed_torch.py --lemmas    # build/wordnet/torch-lemmas.f32   (lemmas.txt)
    /usr/bin/python3 tools/wordnet/embed_torch.py --heldout   # build/wordnet/torch-heldout.f32  (heldout.jsonl definitions)
    /usr/bin/python3 tools/wordnet/embed_torch.py --texts FILE --out OUT.f32   # one text per line

These are reference figures only: the shipped index is made by mlrt's own encoder
(tools/wordnet/index.mjs). Debian's torch multiplies with the reference BLAS (libblas3), about 7x
slower than OpenBLAS: extract libopenblas0-pthread (apt-get download; dpkg-deb -x) and run with
LD_LIBRARY_PATH=<it>/usr/lib/x86_64-linux-gnu/openblas-pthread. TORCH_THREADS (default 2) sets
torch's threads: 1 is faster on a busy machine.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embed_ref import ROOT, Model, tokenize  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', default=os.path.join(ROOT, 'models', 'wordnet'))
    ap.add_argument('--lemmas', action='store_true')
    ap.add_argument('--heldout', action='store_true')
    ap.add_argument('--texts')
    ap.add_argument('--out')
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get('TORCH_THREADS', '2')))
    jobs = []
    build = os.path.join(ROOT, 'build', 'wordnet')
    if args.lemmas:
        with open(os.path.join(args.model, 'lemmas.txt'), encoding='utf-8') as f:
            jobs.append((f.read().split('\n')[:-1], args.out or os.path.join(build, 'torch-lemmas.f32')))
    if args.heldout:
        with open(os.path.join(args.model, 'heldout.jsonl'), encoding='utf-8') as f:
            jobs.append(([json.loads(l)['definition'] for l in f if l.strip()], args.out or os.path.join(build, 'torch-heldout.f32')))
    if args.texts:
        if not args.out:
            ap.error('--texts needs --out')
        with open(args.texts, encoding='utf-8') as f:
            jobs.append((f.read().split('\n')[:-1], args.out))
    if not jobs:
        ap.error('nothing to do: --lemmas, --heldout or --texts')
    model = Model(args.model)
    for texts, out in jobs:
        t0 = time.time()
        ids = tokenize(texts, args.model, model.max_len)
        emb = model.embed_ids(ids).numpy().astype('<f4')
        os.makedirs(os.path.dirname(out), exist_ok=True)
        emb.tofile(out)
        print(f'{out}: {emb.shape[0]} x {emb.shape[1]} f32 in {time.time() - t0:.1f} s')


if __name__ == '__main__':
    main()
