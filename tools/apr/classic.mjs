// bincode payloads of aprender's classical models, for writeAprV1 (spec: shared/specs/apr-models.md):
// DecisionTree (0x0003) and RandomForest (0x0004), classifier or regressor, in the E1 node layout or
// E2 (with impurity and n_node_samples); KMeans (0x0006), legacy or current (with n_init);
// NgramLm (0x0010), aprender-shell's MarkovModel.
//
// Trees are plain objects, written in pre-order without recursion (any depth):
//   split      { feature, threshold, left, right, impurity?, nNodeSamples? }
//   leaf       { label, nSamples, impurity? }   (classifier)  |  { value, nSamples, impurity? }  (regressor)
// A tree is a regressor when its leaves have `value`, a classifier when they have `label`.
import { AprWriteError, Bincode } from './writer.mjs';

const fail = (message) => { throw new AprWriteError(message); };
const isLeaf = (n) => n && n.left === undefined && n.right === undefined;

function layoutOf(layout) {
  if (layout !== 'E1' && layout !== 'E2') fail(`layout must be 'E1' or 'E2', got ${JSON.stringify(layout)}`);
  return layout === 'E2';
}

/** Is the tree rooted at root a regressor? (from its first leaf) */
function treeIsRegressor(root) {
  let n = root;
  while (n && !isLeaf(n)) n = n.left;
  if (!n) fail('a split has no left child');
  if (n.value !== undefined) return true;
  if (n.label !== undefined) return false;
  fail('a leaf has neither `label` (classifier) nor `value` (regressor)');
}

/** Option<T>: tag, then the value when it is not null/undefined. */
function option(b, v, write) {
  if (v === null || v === undefined) b.u8(0);
  else { b.u8(1); write(v); }
}

function writeNodes(b, root, e2, regressor) {
  const stack = [root];
  while (stack.length) {
    const n = stack.pop();
    if (!n || typeof n !== 'object') fail('a tree node is not an object');
    if (isLeaf(n)) {
      b.u32(1);
      if (regressor) {
        if (typeof n.value !== 'number') fail('a regressor leaf needs a numeric `value`');
        b.f32(n.value);
      } else {
        if (!Number.isInteger(n.label) || n.label < 0) fail('a classifier leaf needs a non-negative integer `label`');
        b.u64(n.label);
      }
      b.u64(n.nSamples ?? 1);
      if (e2) b.f32(n.impurity ?? 0);
    } else {
      if (!Number.isInteger(n.feature) || n.feature < 0) fail('a split needs a non-negative integer `feature`');
      b.u32(0).u64(n.feature).f32(n.threshold);
      if (e2) b.f32(n.impurity ?? 0).u64(n.nNodeSamples ?? 0);
      stack.push(n.right, n.left); // left is written first
    }
  }
}

/** One DecisionTree{Classifier,Regressor} struct into b. */
function writeTree(b, { tree, maxDepth = null, nFeatures = null, minSamplesSplit = 2, minSamplesLeaf = 1 }, e2, regressor) {
  option(b, tree, (t) => writeNodes(b, t, e2, regressor));
  option(b, maxDepth, (d) => b.u64(d));
  if (regressor) b.u64(minSamplesSplit).u64(minSamplesLeaf);
  else option(b, nFeatures, (n) => b.u64(n));
}

/**
 * DecisionTreeClassifier / DecisionTreeRegressor (model type 'DecisionTree').
 * tree: the root (null: unfitted); maxDepth, nFeatures (classifier): numbers or null;
 * minSamplesSplit, minSamplesLeaf (regressor); regressor: inferred from the leaves unless given.
 */
export function decisionTreePayload({ tree, maxDepth = null, nFeatures = null, minSamplesSplit = 2, minSamplesLeaf = 1,
  regressor, layout = 'E2' }) {
  const e2 = layoutOf(layout);
  const reg = regressor ?? (tree ? treeIsRegressor(tree) : false);
  const b = new Bincode();
  writeTree(b, { tree, maxDepth, nFeatures, minSamplesSplit, minSamplesLeaf }, e2, reg);
  return b.bytes();
}

/** Matrix<f32>: { data, rows, cols } -> Vec<f32>, rows, cols. */
function matrix(b, m) {
  b.f32s(m.data);
  b.u64(m.rows).u64(m.cols);
}

/**
 * RandomForestClassifier / RandomForestRegressor (model type 'RandomForest').
 * trees: root nodes; every tree gets the forest's maxDepth, and a classifier's trees get nFeatures
 * (default: xTrain.cols). xTrain: { data, rows, cols } or null; yTrain: labels (classifier) or
 * values (regressor), or null; oobIndices: one array per tree (default: empty arrays).
 */
export function randomForestPayload({ trees, nEstimators, maxDepth = null, randomState = null, oobIndices, xTrain = null,
  yTrain = null, nFeatures, regressor, layout = 'E2' }) {
  if (!Array.isArray(trees)) fail('trees must be an array of root nodes');
  const e2 = layoutOf(layout);
  const reg = regressor ?? (trees.length ? treeIsRegressor(trees[0]) : false);
  const b = new Bincode();
  b.u64(trees.length);
  const width = nFeatures ?? xTrain?.cols ?? null;
  for (const t of trees) writeTree(b, { tree: t, maxDepth, nFeatures: width }, e2, reg);
  b.u64(nEstimators ?? trees.length);
  option(b, maxDepth, (d) => b.u64(d));
  option(b, randomState, (s) => b.u64(s));
  const oob = oobIndices ?? trees.map(() => []);
  b.u64(oob.length);
  for (const list of oob) {
    b.u64(list.length);
    for (const i of list) b.u64(i);
  }
  option(b, xTrain, (m) => matrix(b, m));
  option(b, yTrain, (y) => {
    if (reg) b.f32s(y);
    else {
      b.u64(y.length);
      for (const l of y) b.u64(l);
    }
  });
  return b.bytes();
}

/**
 * KMeans. centroids: { data, rows, cols } (or an array of rows), null when unfitted; labels: the
 * training labels or null; layout 'current' writes n_init (aprender since #3146), 'legacy' does not.
 */
export function kmeansPayload({ centroids, nClusters, maxIter = 300, tol = 1e-4, randomState = null, labels = null,
  inertia = 0, nIter = 0, nInit = 1, layout = 'current' }) {
  if (layout !== 'current' && layout !== 'legacy') fail(`layout must be 'current' or 'legacy', got ${JSON.stringify(layout)}`);
  const c = Array.isArray(centroids) ? { data: centroids.flat(), rows: centroids.length, cols: centroids[0]?.length ?? 0 } : centroids;
  const b = new Bincode();
  b.u64(nClusters ?? c?.rows ?? 0).u64(maxIter).f32(tol);
  option(b, randomState, (s) => b.u64(s));
  option(b, c, (m) => matrix(b, m));
  option(b, labels, (l) => {
    b.u64(l.length);
    for (const x of l) b.u64(x);
  });
  b.f32(inertia).u64(nIter);
  if (layout === 'current') b.u64(nInit);
  return b.bytes();
}

/**
 * NgramLm (aprender-shell MarkovModel): n; ngrams: { context: { token: count } }; commandFreq:
 * { command: count }; maps are written in the objects' key order.
 */
export function ngramLmPayload({ n = 3, ngrams = {}, commandFreq = {}, totalCommands = 0, lastTrainedPos = 0 }) {
  const b = new Bincode();
  const counts = (m) => {
    const entries = Object.entries(m);
    b.u64(entries.length);
    for (const [k, v] of entries) b.str(k).u32(v);
  };
  b.u64(n);
  const ctx = Object.entries(ngrams);
  b.u64(ctx.length);
  for (const [k, next] of ctx) { b.str(k); counts(next); }
  counts(commandFreq);
  return b.u64(totalCommands).u64(lastTrainedPos).bytes();
}
