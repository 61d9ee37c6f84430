#!/usr/bin/python3
"""Writes aprender-layout .apr v1 files of DecisionTree, RandomForest and KMeans models, with inputs
and reference predictions, for tests/apr-models.test.mjs:

    /usr/bin/python3 tests/gen/apr_models.py OUTDIR

Independent of mlrt: the bincode payloads and the APRN container are encoded here by hand from
shared/specs/apr-models.md and apr.md (struct, msgpack, zlib.crc32, zstandard, lz4), the models
are fitted by scikit-learn and converted to aprender's structures, and the reference predictions
come from a float32 numpy implementation of aprender's predict (comparisons and sums in f32, in
aprender's order). Each case writes NAME.apr, NAME.x.f32 (input rows), NAME.y.f32 (expected
outputs) and an entry in manifest.json. Deterministic: fixed seeds."""
import json
import os
import struct
import sys
import zlib

import lz4.block
import msgpack
import numpy as np
import zstandard
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

F32 = np.float32
TYPES = {"DecisionTree": 3, "RandomForest": 4, "KMeans": 6}


# ---------------------------------------------------------------- bincode

class Bincode:
    def __init__(self):
        self.parts = []

    def u8(self, v): self.parts.append(struct.pack("<B", v)); return self
    def u32(self, v): self.parts.append(struct.pack("<I", v)); return self
    def u64(self, v): self.parts.append(struct.pack("<Q", int(v))); return self
    def f32(self, v): self.parts.append(struct.pack("<f", float(F32(v)))); return self

    def opt_u64(self, v):
        return self.u8(0) if v is None else self.u8(1).u64(v)

    def vec_f32(self, a):
        a = np.asarray(a, dtype="<f4").ravel()
        self.u64(a.size)
        self.parts.append(a.tobytes())
        return self

    def vec_u64(self, a):
        a = np.asarray(a, dtype="<u8").ravel()
        self.u64(a.size)
        self.parts.append(a.tobytes())
        return self

    def bytes(self):
        return b"".join(self.parts)


def apr_v1(model_type, payload, compression=0):
    """The APRN container: 32-byte header, MessagePack metadata, payload, CRC32."""
    meta = msgpack.packb({"created_at": "2026-11-24T00:00:00Z", "aprender_version": "0.26.3",
                          "model_name": "gen.py"})
    stored = payload
    if compression == 1:
        stored = zstandard.ZstdCompressor(level=3).compress(payload)
    elif compression == 3:
        stored = lz4.block.compress(payload, store_size=True)  # u32 LE size, then one raw block
    header = b"APRN" + struct.pack("<BBHIIIBBB", 1, 0, TYPES[model_type], len(meta), len(stored), len(payload),
                                   compression, 0, 0) + bytes(9)
    body = header + meta + stored
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


# ------------------------------------------------------- trees: sklearn -> aprender

class Tree:
    """A tree as aprender stores it: flat arrays in pre-order (children: node indices, -1 at leaves)."""

    def __init__(self):
        self.feature, self.threshold, self.left, self.right = [], [], [], []
        self.leaf = []        # label (classifier) or value (regressor) at leaves
        self.samples, self.impurity = [], []

    def depth(self):
        d, stack = 0, [(0, 0)]
        while stack:
            n, k = stack.pop()
            d = max(d, k)
            if self.left[n] >= 0:
                stack += [(self.left[n], k + 1), (self.right[n], k + 1)]
        return d


def from_sklearn(est, labels=None):
    """est.tree_ in pre-order; classifier leaves take labels[argmax(value)] (sklearn's choice)."""
    t, out = est.tree_, Tree()
    stack, parent_slot = [0], []
    order = {}
    while stack:  # pre-order numbering
        i = stack.pop()
        order[i] = len(order)
        if t.children_left[i] >= 0:
            stack += [t.children_right[i], t.children_left[i]]
    by_new = sorted(order, key=order.get)
    for i in by_new:
        split = t.children_left[i] >= 0
        out.feature.append(int(t.feature[i]) if split else 0)
        out.threshold.append(F32(t.threshold[i]) if split else F32(0))
        out.left.append(order[t.children_left[i]] if split else -1)
        out.right.append(order[t.children_right[i]] if split else -1)
        if labels is not None:
            out.leaf.append(int(labels[int(np.argmax(t.value[i][0]))]) if not split else 0)
        else:
            out.leaf.append(F32(t.value[i][0][0]) if not split else F32(0))
        out.samples.append(int(t.n_node_samples[i]))
        out.impurity.append(F32(t.impurity[i]))
    return out


def random_tree(rng, depth, n_features, regressor, labels, min_leaf=1):
    """A random unbalanced tree: splits on random features and thresholds, up to depth levels."""
    out = Tree()

    def add(k):
        n = len(out.feature)
        for a in (out.feature, out.threshold, out.left, out.right, out.leaf, out.samples, out.impurity):
            a.append(0)
        split = k < depth and (k < 2 or rng.random() < 0.6) and len(out.feature) < 20000
        out.samples[n] = int(rng.integers(min_leaf, 50))
        out.impurity[n] = F32(rng.random())
        if split:
            out.feature[n] = int(rng.integers(0, n_features))
            out.threshold[n] = F32(rng.normal())
            out.left[n] = add(k + 1)
            out.right[n] = add(k + 1)
        else:
            out.left[n] = out.right[n] = -1
            out.leaf[n] = F32(rng.normal() * 10) if regressor else int(rng.choice(labels))
        return n

    add(0)
    return out


def write_nodes(b, tree, e2, regressor):
    for n in range(len(tree.feature)):  # pre-order: index order is file order
        if tree.left[n] >= 0:
            b.u32(0).u64(tree.feature[n]).f32(tree.threshold[n])
            if e2:
                b.f32(tree.impurity[n]).u64(tree.samples[n])
        else:
            b.u32(1)
            (b.f32 if regressor else b.u64)(tree.leaf[n])
            b.u64(tree.samples[n])
            if e2:
                b.f32(tree.impurity[n])


def write_tree(b, tree, e2, regressor, max_depth, n_features):
    b.u8(1)
    write_nodes(b, tree, e2, regressor)
    b.opt_u64(max_depth)
    if regressor:
        b.u64(2).u64(1)  # min_samples_split, min_samples_leaf
    else:
        b.opt_u64(n_features)


# ------------------------------------------------- reference predictions (float32)

def walk(tree, X):
    """The leaf of every row: go left when x[f] <= threshold in float32 (NaN goes right)."""
    node = np.zeros(len(X), dtype=np.int64)
    while True:
        left = np.asarray(tree.left)[node]
        active = left >= 0
        if not active.any():
            return node
        f = np.asarray(tree.feature)[node]
        thr = np.asarray(tree.threshold, dtype=F32)[node]
        xv = X[np.arange(len(X)), f]
        go_left = xv <= thr  # float32 vs float32; NaN -> False
        nxt = np.where(go_left, left, np.asarray(tree.right)[node])
        node = np.where(active, nxt, node)


def predict_trees(trees, X, regressor, classes, forest):
    n = len(X)
    if regressor:
        acc = np.zeros(n, dtype=F32)
        for t in trees:  # f32 sum in tree order
            acc = (acc + np.asarray(t.leaf, dtype=F32)[walk(t, X)]).astype(F32)
        if forest:
            acc = (acc / F32(len(trees))).astype(F32)
        return acc.reshape(n, 1), None
    votes = np.zeros((n, len(classes)), dtype=np.int64)
    index = {c: i for i, c in enumerate(classes)}
    for t in trees:
        leaf_labels = np.asarray(t.leaf, dtype=np.int64)[walk(t, X)]
        for r, l in enumerate(leaf_labels):
            votes[r, index[int(l)]] += 1
    scores = votes.astype(F32)
    if forest:
        scores = (scores / F32(len(trees))).astype(F32)
    labels = [classes[int(np.argmax(v))] for v in votes]  # first max: ties -> smallest label
    return scores, labels


def predict_kmeans(C, X):
    d = np.zeros((len(X), len(C)), dtype=F32)
    for j in range(C.shape[1]):  # sequential over coordinates, in f32
        t = (X[:, None, j] - C[None, :, j]).astype(F32)
        d = (d + (t * t).astype(F32)).astype(F32)
    return d, [int(np.argmin(r)) for r in d]  # argmin: first minimum


# ------------------------------------------------------------------ cases

CASES = []


def emit(outdir, name, model_type, payload, X, Y, labels, facts, compression=0):
    with open(os.path.join(outdir, name + ".apr"), "wb") as f:
        f.write(apr_v1(model_type, payload, compression))
    np.asarray(X, dtype="<f4").tofile(os.path.join(outdir, name + ".x.f32"))
    np.asarray(Y, dtype="<f4").tofile(os.path.join(outdir, name + ".y.f32"))
    CASES.append(dict(name=name, modelType=model_type, rows=len(X), inputSize=X.shape[1], outputSize=Y.shape[1],
                      labels=labels, **facts))


def inputs(rng, X_train, trees, n=200):
    """Training-like rows, rows sitting exactly on thresholds, and (for trees) some NaN features."""
    X = X_train[rng.integers(0, len(X_train), n)].astype(F32) + rng.normal(0, 0.3, (n, X_train.shape[1])).astype(F32)
    X = X.astype(F32)
    for r in range(0, n, 5):  # exact ties: x[f] == threshold must go left
        t = trees[r % len(trees)]
        splits = [k for k in range(len(t.left)) if t.left[k] >= 0]
        if splits:
            k = splits[r % len(splits)]
            X[r, t.feature[k]] = t.threshold[k]
    return X


def tree_cases(outdir, rng):
    Xc, yc = make_classification(n_samples=400, n_features=8, n_informative=5, n_classes=3, random_state=1)
    yc = np.array([3, 7, 12])[yc]  # stored labels, not 0..n
    Xc = Xc.astype(F32)
    for e2 in (False, True):
        layout = "E2" if e2 else "E1"
        est = DecisionTreeClassifier(max_depth=7, random_state=0).fit(Xc, yc)
        t = from_sklearn(est, est.classes_)
        b = Bincode()
        write_tree(b, t, e2, False, 7, Xc.shape[1])
        X = inputs(rng, Xc, [t])
        X[3, 2] = np.nan
        X[4, :] = np.nan
        Y, labels = predict_trees([t], X, False, [3, 7, 12], False)
        agree = np.mean(est.predict(np.nan_to_num(X[5:]).astype(np.float64)) == np.array(labels[5:]))
        assert agree > 0.97, f"the conversion from sklearn disagrees on {1 - agree:.1%} of rows"
        emit(outdir, f"tree-cls-{layout}", "DecisionTree", b.bytes(), X, Y, labels,
             dict(kind="decision_tree", task="classification", classes=[3, 7, 12], estimator="DecisionTreeClassifier",
                  layout=layout, trees=dict(count=1, depth=t.depth(), nodes=len(t.left))),
             compression=1 if e2 else 0)

    Xr, yr = make_regression(n_samples=300, n_features=6, noise=5, random_state=2)
    Xr = Xr.astype(F32)
    for e2 in (False, True):
        layout = "E2" if e2 else "E1"
        est = DecisionTreeRegressor(max_depth=9, random_state=0).fit(Xr, yr)
        t = from_sklearn(est)
        b = Bincode()
        write_tree(b, t, e2, True, None, None)
        X = inputs(rng, Xr, [t])
        X[7, :] = np.nan
        Y, _ = predict_trees([t], X, True, None, False)
        width = max(f for f, l in zip(t.feature, t.left) if l >= 0) + 1
        emit(outdir, f"tree-reg-{layout}", "DecisionTree", b.bytes(), X[:, :width], Y, None,
             dict(kind="decision_tree", task="regression", estimator="DecisionTreeRegressor", layout=layout,
                  trees=dict(count=1, depth=t.depth(), nodes=len(t.left))),
             compression=3 if e2 else 0)

    # a random, deep, unbalanced classifier (not sklearn): up to 40 levels
    t = random_tree(rng, 40, 5, False, [0, 4, 9, 100])
    b = Bincode()
    write_tree(b, t, True, False, None, 5)
    X = rng.normal(0, 1, (300, 5)).astype(F32)
    Y, labels = predict_trees([t], X, False, sorted(set(l for l, le in zip(t.leaf, t.left) if le < 0)), False)
    classes = sorted(set(l for l, le in zip(t.leaf, t.left) if le < 0))
    emit(outdir, "tree-random-deep", "DecisionTree", b.bytes(), X, Y, labels,
         dict(kind="decision_tree", task="classification", classes=classes, estimator="DecisionTreeClassifier",
              layout="E2", trees=dict(count=1, depth=t.depth(), nodes=len(t.left))))


def forest_payload(trees, e2, regressor, max_depth, X_train, y_train, oob):
    b = Bincode().u64(len(trees))
    for t in trees:
        write_tree(b, t, e2, regressor, max_depth, None if regressor else X_train.shape[1])
    b.u64(len(trees)).opt_u64(max_depth).opt_u64(42)
    b.u64(len(oob))
    for o in oob:
        b.vec_u64(o)
    b.u8(1).vec_f32(X_train).u64(X_train.shape[0]).u64(X_train.shape[1])
    if regressor:
        b.u8(1).vec_f32(y_train)
    else:
        b.u8(1).vec_u64(y_train)
    return b.bytes()


def forest_cases(outdir, rng):
    Xc, yc = make_classification(n_samples=300, n_features=10, n_informative=6, n_classes=4, random_state=3)
    yc = np.array([1, 5, 6, 20])[yc]
    Xc = Xc.astype(F32)
    for e2 in (False, True):
        layout = "E2" if e2 else "E1"
        rf = RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0).fit(Xc, yc)
        trees = [from_sklearn(e, rf.classes_) for e in rf.estimators_]
        oob = [sorted(rng.choice(len(Xc), 30, replace=False).tolist()) for _ in trees]
        payload = forest_payload(trees, e2, False, 6, Xc, yc, oob)
        X = inputs(rng, Xc, trees)
        X[1, 0] = np.nan
        classes = sorted(set(int(c) for c in yc))
        Y, labels = predict_trees(trees, X, False, classes, True)
        agree = np.mean(rf.predict(X[2:]) == np.array(labels[2:]))
        assert agree > 0.8, f"forest conversion agrees on only {agree:.1%}"  # sklearn averages probabilities; aprender votes
        emit(outdir, f"forest-cls-{layout}", "RandomForest", payload, X, Y, labels,
             dict(kind="random_forest", task="classification", classes=classes, estimator="RandomForestClassifier",
                  layout=layout, trees=dict(count=len(trees), depth=max(t.depth() for t in trees),
                                            nodes=sum(len(t.left) for t in trees))),
             compression=1 if e2 else 3)

    Xr, yr = make_regression(n_samples=250, n_features=7, noise=3, random_state=4)
    Xr, yr = Xr.astype(F32), yr.astype(F32)
    for e2 in (False, True):
        layout = "E2" if e2 else "E1"
        rf = RandomForestRegressor(n_estimators=12, max_depth=8, random_state=0).fit(Xr, yr)
        trees = [from_sklearn(e) for e in rf.estimators_]
        oob = [sorted(rng.choice(len(Xr), 20, replace=False).tolist()) for _ in trees]
        payload = forest_payload(trees, e2, True, 8, Xr, yr, oob)
        X = inputs(rng, Xr, trees)
        Y, _ = predict_trees(trees, X, True, None, True)
        emit(outdir, f"forest-reg-{layout}", "RandomForest", payload, X, Y, None,
             dict(kind="random_forest", task="regression", estimator="RandomForestRegressor", layout=layout,
                  trees=dict(count=len(trees), depth=max(t.depth() for t in trees),
                             nodes=sum(len(t.left) for t in trees))))


def kmeans_cases(outdir, rng):
    Xb, _ = make_blobs(n_samples=500, n_features=13, centers=7, random_state=5)
    Xb = Xb.astype(F32)
    km = KMeans(n_clusters=7, n_init=3, random_state=0).fit(Xb)
    C = km.cluster_centers_.astype(F32)
    for current in (False, True):
        layout = "current" if current else "legacy"
        b = Bincode().u64(7).u64(300).f32(1e-4).opt_u64(0)
        b.u8(1).vec_f32(C).u64(C.shape[0]).u64(C.shape[1])
        b.u8(1).vec_u64(km.labels_).f32(km.inertia_).u64(km.n_iter_)
        if current:
            b.u64(3)
        X = Xb[rng.integers(0, len(Xb), 150)] + rng.normal(0, 2, (150, 13)).astype(F32)
        X = X.astype(F32)
        X[0] = (C[0] + C[1]) / F32(2)  # near a tie
        Y, labels = predict_kmeans(C, X)
        assert np.mean(km.predict(X) == np.array(labels)) > 0.97
        emit(outdir, f"kmeans-{layout}", "KMeans", b.bytes(), X, Y, labels,
             dict(kind="kmeans", task="clustering", estimator="KMeans", layout=layout, clusters=7),
             compression=3 if current else 0)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(20261124)
    tree_cases(outdir, rng)
    forest_cases(outdir, rng)
    kmeans_cases(outdir, rng)
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"gen.py: {len(CASES)} models in {outdir}")


if __name__ == "__main__":
    main()
