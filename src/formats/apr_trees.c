/* formats/apr_trees.c — aprender's DecisionTree (0x0003) and RandomForest (0x0004) .apr v1 payloads.
 *
 * bincode carries no schema, and one model type id holds four layouts: classifier or regressor,
 * in the E1 node layout or the E2 one (impurity and n_node_samples added). Each payload is read
 * with all four; a layout fits when its tags are valid and it consumes the payload exactly.
 * Exactly one must fit (or, of several, exactly one must also pass the invariants); else the
 * payload is refused, naming what was tried. Then the fitting layout is read a second time into
 * the model's node array, whose size the first pass counted: nothing is allocated from a size in
 * the file before the bytes that back it have been read.
 *
 *   DecisionTreeClassifier  Option<TreeNode> tree, Option<usize> max_depth, Option<usize> n_features
 *   DecisionTreeRegressor   Option<RegressionTreeNode> tree, Option<usize> max_depth,
 *                           usize min_samples_split, usize min_samples_leaf
 *   node (pre-order)        u32 0 = split: usize feature, f32 threshold, [E2: f32 impurity,
 *                           usize n_node_samples], left subtree, right subtree
 *                           u32 1 = leaf:  classifier usize label | regressor f32 value,
 *                           usize n_samples, [E2: f32 impurity]
 *   RandomForest{Classifier,Regressor}  Vec<tree> trees, usize n_estimators, Option<usize> max_depth,
 *                           Option<u64> random_state, Vec<Vec<usize>> oob_indices,
 *                           Option<Matrix<f32>> x_train (Vec<f32>, rows, cols),
 *                           Option<Vec<usize>> | Option<Vector<f32>> y_train
 * The forest's training set is checked (sizes, out-of-bag indices) and not kept.
 * Trees are read without recursion: an explicit stack of pending right subtrees, at most
 * MLRT__MAX_TREE_DEPTH deep. Policy: a NaN threshold, a non-finite regressor leaf and a model that
 * was never fitted are refused; infinite thresholds are kept (they compare exactly). */
#include "formats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct layout { bool regressor, e2; const char *name; } layout;
static const layout LAYOUTS[4] = {
    {false, false, "classifier E1"}, {false, true, "classifier E2"},
    {true, false, "regressor E1"}, {true, true, "regressor E2"},
};

/* One DecisionTree struct, as read by the first pass. */
typedef struct tree_facts {
    bool fitted, has_max_depth, has_n_features;
    uint64_t max_depth, n_features;                /* the Options' values */
    uint64_t min_samples_split, min_samples_leaf;  /* regressor */
    uint32_t depth;                                /* levels below the root */
    uint64_t max_feature;                          /* the largest split feature + 1 (0: no split) */
    size_t max_feature_at;                         /* its node's byte */
    uint64_t min_leaf_samples;                     /* the smallest n_samples of a leaf below the root */
    size_t min_leaf_at;
} tree_facts;

typedef struct pending { uint32_t node, depth; } pending;

typedef struct parse {
    mlrt__bincode c;
    layout L;
    const char *model;         /* "DecisionTree" / "RandomForest" */
    mlrt__forest *f;            /* second pass: the nodes to fill; NULL in the first pass */
    uint32_t n_nodes, n_leaves, n_trees;
    pending *stack;            /* [MLRT__MAX_TREE_DEPTH] right subtrees still to read */
    mlrt_error semantic;       /* the first invariant that failed (code MLRT_OK: none) */
    const uint8_t *y_labels;   /* a classifier forest's y_train: [n_y] u64 labels, or NULL */
    uint64_t n_y;
} parse;

/* Records the first broken invariant; reading goes on, so the structure is still checked. */
static void invalid(parse *p, mlrt_status code, const char *fmt, ...) {
    if (p->semantic.code) return;
    int k = mlrt__format_to(p->semantic.message, sizeof p->semantic.message, "apr: %s (%s) payload: ", p->model, p->L.name);
    va_list ap;
    va_start(ap, fmt);
    mlrt__vformat(p->semantic.message + k, sizeof p->semantic.message - (size_t)k, fmt, ap);
    va_end(ap);
    p->semantic.code = code;
}

/* A split's fields after its tag. */
static mlrt_status read_split(parse *p, uint32_t idx, size_t at, uint32_t depth, tree_facts *t) {
    mlrt__bincode *c = &p->c;
    uint64_t feature = 0, samples;
    float threshold = 0, impurity;
    mlrt_status st = mlrt__bc_u64(c, "a split's feature", &feature);
    if (!st) st = mlrt__bc_f32(c, "a split's threshold", &threshold);
    if (!st && p->L.e2) st = mlrt__bc_f32(c, "a split's impurity", &impurity);
    if (!st && p->L.e2) st = mlrt__bc_u64(c, "a split's n_node_samples", &samples);
    if (st) return st;
    if (depth >= MLRT__MAX_TREE_DEPTH)
        return mlrt__fail(c->err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload byte %zu: tree %u is deeper than %u levels, mlrt's limit",
                         c->type, at, p->n_trees, MLRT__MAX_TREE_DEPTH);
    if (feature >= MLRT__MAX_DIM)
        invalid(p, MLRT_ERR_BAD_DIMENSIONS, "the split at byte %zu uses feature %llu, beyond mlrt's %u features", at,
                (unsigned long long)feature, MLRT__MAX_DIM);
    else if (feature + 1 > t->max_feature) t->max_feature = feature + 1, t->max_feature_at = at;
    if (isnan(threshold)) invalid(p, MLRT_ERR_NON_FINITE, "the split at byte %zu has a NaN threshold", at);
    if (p->f) p->f->nodes[idx] = (mlrt__tree_node){(uint32_t)feature, {.threshold = threshold}, idx + 1, UINT32_MAX};
    return MLRT_OK;
}

/* A leaf's fields after its tag. Classifier leaves hold the label itself until classes are known. */
static mlrt_status read_leaf(parse *p, uint32_t idx, size_t at, uint32_t depth, tree_facts *t) {
    mlrt__bincode *c = &p->c;
    uint64_t label = 0, samples = 0;
    float value = 0, impurity;
    mlrt_status st = p->L.regressor ? mlrt__bc_f32(c, "a leaf's value", &value) : mlrt__bc_u64(c, "a leaf's class_label", &label);
    if (!st) st = mlrt__bc_u64(c, "a leaf's n_samples", &samples);
    if (!st && p->L.e2) st = mlrt__bc_f32(c, "a leaf's impurity", &impurity);
    if (st) return st;
    if (samples == 0) invalid(p, MLRT_ERR_BAD_PAYLOAD, "the leaf at byte %zu holds 0 training samples", at);
    if (depth > 0 && samples < t->min_leaf_samples) t->min_leaf_samples = samples, t->min_leaf_at = at;
    if (p->L.regressor && !isfinite(value)) invalid(p, MLRT_ERR_NON_FINITE, "the leaf at byte %zu has a non-finite value", at);
    if (label > UINT32_MAX)
        invalid(p, MLRT_ERR_UNSUPPORTED, "the leaf at byte %zu has class label %llu; mlrt takes labels below 2^32", at,
                (unsigned long long)label);
    p->n_leaves++;
    if (p->f) {
        mlrt__tree_node *n = &p->f->nodes[idx];
        *n = (mlrt__tree_node){0, {.value = value}, idx, idx};
        if (!p->L.regressor) n->v.cls = (uint32_t)label;
    }
    return MLRT_OK;
}

/* One tree's nodes, in pre-order, without recursion. */
static mlrt_status read_nodes(parse *p, tree_facts *t) {
    mlrt__bincode *c = &p->c;
    uint32_t sp = 0, depth = 0, patch = UINT32_MAX; /* patch: the split whose right child comes next */
    if (p->f) p->f->root[p->n_trees] = p->n_nodes;
    for (;;) {
        size_t at = c->pos;
        uint32_t kind;
        mlrt_status st = mlrt__bc_variant(c, "a node's tag", 2, &kind);
        if (st) return st;
        if (p->n_nodes >= MLRT__MAX_TREE_NODES)
            return mlrt__fail(c->err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload byte %zu: more than %u tree nodes, mlrt's limit",
                             c->type, at, MLRT__MAX_TREE_NODES);
        uint32_t idx = p->n_nodes++;
        if (p->f && patch != UINT32_MAX) p->f->nodes[patch].right = idx;
        if (depth > t->depth) t->depth = depth;
        if (kind == 0) {
            if ((st = read_split(p, idx, at, depth, t))) return st;
            p->stack[sp++] = (pending){idx, depth + 1};
            depth++;
            patch = UINT32_MAX;
        } else {
            if ((st = read_leaf(p, idx, at, depth, t))) return st;
            if (sp == 0) return MLRT_OK;
            sp--;
            depth = p->stack[sp].depth;
            patch = p->stack[sp].node;
        }
    }
}

/* One DecisionTreeClassifier / DecisionTreeRegressor struct, and its own invariants. */
static mlrt_status read_tree(parse *p, tree_facts *t) {
    mlrt__bincode *c = &p->c;
    *t = (tree_facts){.min_leaf_samples = UINT64_MAX};
    size_t at = c->pos;
    mlrt_status st = mlrt__bc_tag(c, "the tree's Option tag", &t->fitted);
    if (!st && t->fitted) st = read_nodes(p, t);
    if (!st) st = mlrt__bc_opt_u64(c, "max_depth", &t->has_max_depth, &t->max_depth);
    if (!st && !p->L.regressor) st = mlrt__bc_opt_u64(c, "n_features", &t->has_n_features, &t->n_features);
    if (!st && p->L.regressor) st = mlrt__bc_u64(c, "min_samples_split", &t->min_samples_split);
    if (!st && p->L.regressor) st = mlrt__bc_u64(c, "min_samples_leaf", &t->min_samples_leaf);
    if (st) return st;
    if (p->f) p->f->depth[p->n_trees] = t->depth;
    p->n_trees++;
    if (!t->fitted) invalid(p, MLRT_ERR_NOT_A_MODEL, "the tree at byte %zu was never fitted (its root is None)", at);
    if (t->has_max_depth && t->depth > t->max_depth)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the tree at byte %zu is %u levels deep but its max_depth is %llu", at, t->depth,
                (unsigned long long)t->max_depth);
    if (t->has_n_features && (t->n_features == 0 || t->n_features > MLRT__MAX_DIM))
        invalid(p, MLRT_ERR_BAD_DIMENSIONS, "the tree at byte %zu has n_features %llu; mlrt needs 1..%u", at,
                (unsigned long long)t->n_features, MLRT__MAX_DIM);
    else if (t->has_n_features && t->max_feature > t->n_features)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the split at byte %zu uses feature %llu but n_features is %llu", t->max_feature_at,
                (unsigned long long)t->max_feature - 1, (unsigned long long)t->n_features);
    if (p->L.regressor && (t->min_samples_split < 2 || t->min_samples_leaf < 1))
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the tree at byte %zu has min_samples_split %llu and min_samples_leaf %llu, "
                "not >= 2 and >= 1", at, (unsigned long long)t->min_samples_split,
                (unsigned long long)t->min_samples_leaf);
    else if (p->L.regressor && t->min_leaf_samples < t->min_samples_leaf)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the leaf at byte %zu holds %llu samples, fewer than min_samples_leaf %llu",
                t->min_leaf_at, (unsigned long long)t->min_leaf_samples, (unsigned long long)t->min_samples_leaf);
    return MLRT_OK;
}

/* What a whole payload was: the input width and the tree-level facts. */
typedef struct model_facts {
    uint32_t in_size;
    uint32_t max_depth;
} model_facts;

static mlrt_status read_decision_tree(parse *p, model_facts *mf) {
    tree_facts t;
    mlrt_status st = read_tree(p, &t);
    if (!st) st = mlrt__bc_consumed(&p->c);
    if (st) return st;
    /* a regressor does not record its width: the widest feature it reads */
    uint64_t in = t.has_n_features ? t.n_features : t.max_feature ? t.max_feature : 1;
    mf->in_size = in <= MLRT__MAX_DIM ? (uint32_t)in : 1;
    mf->max_depth = t.depth;
    return MLRT_OK;
}

/* Vec<Vec<usize>> oob_indices: *max = the largest index + 1 (0: none), *lists = the outer count. */
static mlrt_status read_oob(parse *p, uint64_t *lists, uint64_t *max) {
    mlrt__bincode *c = &p->c;
    *max = 0;
    mlrt_status st = mlrt__bc_u64(c, "oob_indices", lists);
    for (uint64_t i = 0; i < *lists && !st; i++) {
        const uint8_t *v = NULL;
        uint64_t n;
        if ((st = mlrt__bc_vec(c, "an oob_indices list", 8, "indices", &v, &n))) break;
        for (uint64_t k = 0; k < n; k++)
            if (mlrt__rd_u64(v + 8 * k) >= *max) *max = mlrt__rd_u64(v + 8 * k) + 1;
    }
    return st;
}

static mlrt_status read_random_forest(parse *p, model_facts *mf) {
    mlrt__bincode *c = &p->c;
    uint64_t n_trees = 0, n_estimators = 0, max_depth = 0, seed, oob_lists = 0, oob_max = 0;
    uint64_t rows = 0, cols = 0, n_x = 0, n_y = 0;
    bool has_max_depth = false, has_seed, has_x = false, has_y = false;
    tree_facts first = {0}, t;
    uint64_t widest = 0;
    mlrt_status st = mlrt__bc_u64(c, "trees", &n_trees);
    for (uint64_t i = 0; i < n_trees && !st; i++) {
        size_t at = c->pos;
        if ((st = read_tree(p, &t))) break;
        if (t.depth > mf->max_depth) mf->max_depth = t.depth;
        if (t.max_feature > widest) widest = t.max_feature;
        if (i == 0) first = t;
        else if (t.has_max_depth != first.has_max_depth || t.max_depth != first.max_depth ||
                 t.has_n_features != first.has_n_features || t.n_features != first.n_features ||
                 t.min_samples_split != first.min_samples_split || t.min_samples_leaf != first.min_samples_leaf)
            invalid(p, MLRT_ERR_BAD_PAYLOAD, "tree %llu at byte %zu has other parameters (max_depth, n_features, "
                    "min_samples_*) than tree 0", (unsigned long long)i, at);
    }
    const uint8_t *x = NULL, *y = NULL;
    if (!st) st = mlrt__bc_u64(c, "n_estimators", &n_estimators);
    if (!st) st = mlrt__bc_opt_u64(c, "max_depth", &has_max_depth, &max_depth);
    if (!st) st = mlrt__bc_opt_u64(c, "random_state", &has_seed, &seed);
    if (!st) st = read_oob(p, &oob_lists, &oob_max);
    if (!st) st = mlrt__bc_tag(c, "x_train's Option tag", &has_x);
    if (!st && has_x) st = mlrt__bc_vec(c, "x_train", 4, "floats", &x, &n_x);
    if (!st && has_x) st = mlrt__bc_u64(c, "x_train rows", &rows);
    if (!st && has_x) st = mlrt__bc_u64(c, "x_train cols", &cols);
    if (!st) st = mlrt__bc_tag(c, "y_train's Option tag", &has_y);
    if (!st && has_y) st = mlrt__bc_vec(c, "y_train", p->L.regressor ? 4 : 8, p->L.regressor ? "floats" : "labels", &y, &n_y);
    if (!st) st = mlrt__bc_consumed(c);
    if (st) return st;
    uint64_t cells;
    if (n_trees == 0) invalid(p, MLRT_ERR_NOT_A_MODEL, "the forest has no trees: it was never fitted");
    if (n_trees != n_estimators)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the forest holds %llu trees but n_estimators is %llu", (unsigned long long)n_trees,
                (unsigned long long)n_estimators);
    if (oob_lists != n_trees)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "oob_indices holds %llu lists for %llu trees", (unsigned long long)oob_lists,
                (unsigned long long)n_trees);
    if (n_trees && (first.has_max_depth != has_max_depth || first.max_depth != max_depth))
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the trees' max_depth differs from the forest's");
    if (p->L.regressor && n_trees && (first.min_samples_split != 2 || first.min_samples_leaf != 1))
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "a forest's regressor trees have min_samples_split 2 and min_samples_leaf 1, "
                "these have %llu and %llu", (unsigned long long)first.min_samples_split,
                (unsigned long long)first.min_samples_leaf);
    if (has_x && (!mlrt__mul_u64(rows, cols, &cells) || cells != n_x))
        invalid(p, MLRT_ERR_SIZE_MISMATCH, "x_train holds %llu floats, not rows %llu x cols %llu", (unsigned long long)n_x,
                (unsigned long long)rows, (unsigned long long)cols);
    if (has_x && has_y && n_y != rows)
        invalid(p, MLRT_ERR_SIZE_MISMATCH, "y_train holds %llu values for %llu training rows", (unsigned long long)n_y,
                (unsigned long long)rows);
    if (oob_max > (has_x ? rows : 0))
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "an out-of-bag index is %llu but the training set has %llu rows",
                (unsigned long long)oob_max - 1, (unsigned long long)rows);
    if (has_x && (cols == 0 || cols > MLRT__MAX_DIM))
        invalid(p, MLRT_ERR_BAD_DIMENSIONS, "x_train has %llu columns; mlrt needs 1..%u", (unsigned long long)cols, MLRT__MAX_DIM);
    else if (has_x && first.has_n_features && first.n_features != cols)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "the trees' n_features is %llu but x_train has %llu columns",
                (unsigned long long)first.n_features, (unsigned long long)cols);
    else if (has_x && widest > cols)
        invalid(p, MLRT_ERR_BAD_PAYLOAD, "a split uses feature %llu but x_train has %llu columns",
                (unsigned long long)widest - 1, (unsigned long long)cols);
    if (has_y && !p->L.regressor)
        for (uint64_t k = 0; k < n_y; k++)
            if (mlrt__rd_u64(y + 8 * k) > UINT32_MAX) {
                invalid(p, MLRT_ERR_UNSUPPORTED, "y_train label %llu is not below 2^32", (unsigned long long)mlrt__rd_u64(y + 8 * k));
                break;
            }
    if (has_y && !p->L.regressor) p->y_labels = y, p->n_y = n_y;
    uint64_t in = has_x ? cols : first.has_n_features ? first.n_features : widest ? widest : 1;
    mf->in_size = in <= MLRT__MAX_DIM ? (uint32_t)in : 1;
    return MLRT_OK;
}

/* ------------------------------------------------------------- classes */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct labels, in an open-addressing set: a forest has many leaves (and training labels)
 * but few classes, so the set stays small and the sort runs on the distinct labels only. This runs
 * once per load, before V8 optimises it: sorting every leaf's label there took 15 ms of a 2 MB
 * forest's 40 ms load. */
typedef struct label_set {
    uint32_t *key;                  /* [cap] a label, when used[i] */
    uint32_t *index;                /* [cap] its class index, once the classes are sorted */
    uint8_t *used;                  /* [cap] */
    uint32_t cap, count;            /* cap: a power of two (2^bits), at least twice count */
    uint32_t bits;
} label_set;

/* Fibonacci hashing: the product's top bits, which depend on every bit of the label (labels that
 * share their low bits, such as multiples of 1024, would pile up in the low bits). */
static uint32_t *label_slot(const label_set *s, uint32_t label) {
    uint32_t i = (uint32_t)(label * 2654435761u) >> (32 - s->bits);
    while (s->used[i] && s->key[i] != label) i = (i + 1) & (s->cap - 1);
    return &s->key[i];
}

static bool label_set_init(label_set *s, uint32_t bits) {
    uint32_t cap = 1u << bits;
    s->cap = cap, s->count = 0, s->bits = bits;
    s->key = malloc(cap * sizeof *s->key), s->index = malloc(cap * sizeof *s->index), s->used = calloc(cap, 1);
    return s->key && s->index && s->used;
}

static void label_set_free(label_set *s) { free(s->key), free(s->index), free(s->used); }

/* Adds a label; false when out of memory. Grows (rehashing) at half full. */
static bool label_add(label_set *s, uint32_t label) {
    uint32_t *k = label_slot(s, label);
    size_t i = (size_t)(k - s->key);
    if (s->used[i]) return true;
    s->used[i] = 1, *k = label, s->count++;
    if (2 * s->count <= s->cap) return true;
    label_set big;
    if (!label_set_init(&big, s->bits + 1)) { label_set_free(&big); return false; }
    for (uint32_t j = 0; j < s->cap; j++)
        if (s->used[j]) {
            uint32_t *b = label_slot(&big, s->key[j]);
            big.used[b - big.key] = 1, *b = s->key[j], big.count++;
        }
    label_set_free(s);
    *s = big;
    return true;
}

/* The classes: every leaf's label and every training label, ascending; leaves then hold class indices. */
static mlrt_status make_classes(parse *p, mlrt_error *err) {
    mlrt__forest *f = p->f;
    label_set set;
    bool ok = label_set_init(&set, 6);
    for (uint32_t i = 0; ok && i < f->n_nodes && set.count <= MLRT__MAX_CLASSES; i++)
        if (f->nodes[i].left == i) ok = label_add(&set, f->nodes[i].v.cls);
    for (uint64_t k = 0; ok && k < p->n_y && set.count <= MLRT__MAX_CLASSES; k++)
        ok = label_add(&set, (uint32_t)mlrt__rd_u64(p->y_labels + 8 * k));
    uint32_t *classes = ok && set.count <= MLRT__MAX_CLASSES ? malloc((set.count ? set.count : 1) * sizeof *classes) : NULL;
    if (!classes) {
        label_set_free(&set);
        if (ok) return mlrt__fail(err, MLRT_ERR_UNSUPPORTED, "apr: %s has more than %u distinct class labels; mlrt takes at most %u",
                                 p->model, MLRT__MAX_CLASSES, MLRT__MAX_CLASSES);
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "apr: out of memory for the class labels");
    }
    uint32_t u = 0;
    for (uint32_t j = 0; j < set.cap; j++)
        if (set.used[j]) classes[u++] = set.key[j];
    mlrt__sort(classes, u, sizeof *classes, cmp_u32);
    for (uint32_t c = 0; c < u; c++) set.index[label_slot(&set, classes[c]) - set.key] = c;
    for (uint32_t i = 0; i < f->n_nodes; i++)
        if (f->nodes[i].left == i) f->nodes[i].v.cls = set.index[label_slot(&set, f->nodes[i].v.cls) - set.key];
    label_set_free(&set);
    f->classes = classes;
    f->n_classes = u;
    return MLRT_OK;
}

/* --------------------------------------------------------------- layouts */

typedef mlrt_status (*reader)(parse *p, model_facts *mf);

static void start(parse *p, const uint8_t *raw, size_t n, layout L, const char *model, pending *stack, mlrt_error *err) {
    *p = (parse){{raw, n, 0, L.name, err}, L, model, NULL, 0, 0, 0, stack, {0}, NULL, 0};
}

/* Appends "; <message without 'apr: '>" to the list, as room allows. */
static void list_reason(char *list, size_t cap, const char *msg) {
    size_t used = strlen(list);
    if (strncmp(msg, "apr: ", 5) == 0) msg += 5;
    mlrt__format_to(list + used, cap - used, "%s%s", used ? "; " : "", msg);
}

static mlrt_status read_trees(const uint8_t *raw, size_t n, const char *model, mlrt_kind kind, reader read, mlrt__desc *d,
                              mlrt_error *err) {
    pending *stack = malloc(MLRT__MAX_TREE_DEPTH * sizeof *stack);
    if (!stack) return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "apr: out of memory");
    parse p[4];
    mlrt_error structural[4];
    model_facts mf[4] = {{0}};
    int fits[4], n_fits = 0, valid[4], n_valid = 0;
    for (int i = 0; i < 4; i++) {
        start(&p[i], raw, n, LAYOUTS[i], model, stack, &structural[i]);
        if (read(&p[i], &mf[i]) == MLRT_OK) {
            fits[n_fits++] = i;
            if (!p[i].semantic.code) valid[n_valid++] = i;
        }
    }
    int chosen = n_valid == 1 ? valid[0] : n_fits == 1 ? fits[0] : -1;
    mlrt_status st = MLRT_OK;
    if (n_fits == 0) { /* the layouts that read furthest first: the likeliest to be the file's */
        char list[MLRT_ERROR_MESSAGE_MAX] = "";
        bool listed[4] = {false};
        for (int k = 0; k < 4; k++) {
            int best = -1;
            for (int i = 0; i < 4; i++)
                if (!listed[i] && (best < 0 || p[i].c.pos > p[best].c.pos)) best = i;
            listed[best] = true;
            list_reason(list, sizeof list, structural[best].message);
        }
        st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload (%zu bytes) fits none of aprender's layouts: %s", model, n, list);
    } else if (n_valid > 1) {
        st = mlrt__fail(err, MLRT_ERR_BAD_PAYLOAD, "apr: %s payload (%zu bytes) is ambiguous: it reads as both %s and %s", model,
                        n, LAYOUTS[valid[0]].name, LAYOUTS[valid[1]].name);
    } else if (chosen < 0 || p[chosen].semantic.code) { /* the invariants failed in every layout that fits */
        const mlrt_error *why = &p[chosen < 0 ? fits[0] : chosen].semantic;
        if (err) *err = *why;
        st = why->code;
    }
    if (st) {
        free(stack);
        return st;
    }
    /* second pass: the same layout into the node array */
    const parse *first = &p[chosen];
    mlrt__forest *f = calloc(1, sizeof *f);
    if (f) {
        f->regression = LAYOUTS[chosen].regressor;
        f->n_trees = first->n_trees;
        f->n_nodes = first->n_nodes;
        f->n_leaves = first->n_leaves;
        f->max_depth = mf[chosen].max_depth;
        f->nodes = malloc((size_t)f->n_nodes * sizeof *f->nodes);
        f->root = malloc(f->n_trees * sizeof *f->root);
        f->depth = malloc(f->n_trees * sizeof *f->depth);
    }
    if (!f || !f->nodes || !f->root || !f->depth) {
        mlrt__forest_free(f);
        free(stack);
        return mlrt__fail(err, MLRT_ERR_OUT_OF_MEMORY, "apr: out of memory for %u tree nodes", first->n_nodes);
    }
    parse second;
    mlrt_error ignored;
    model_facts mf2 = {0};
    start(&second, raw, n, LAYOUTS[chosen], model, stack, &ignored);
    second.f = f;
    st = read(&second, &mf2); /* cannot fail: the same bytes read the same way the first time */
    free(stack);
    if (st && err) *err = ignored;
    if (!st && !f->regression) st = make_classes(&second, err);
    if (st) {
        mlrt__forest_free(f);
        return st;
    }
    static const char *const ESTIMATORS[2][2] = {{"DecisionTreeClassifier", "DecisionTreeRegressor"},
                                                 {"RandomForestClassifier", "RandomForestRegressor"}};
    f->n_features = mf[chosen].in_size;
    d->type = MLRT__DESC_FOREST, d->kind = kind, d->forest = f;
    d->payload = (mlrt__payload_desc){ESTIMATORS[kind == MLRT_KIND_RANDOM_FOREST][f->regression], LAYOUTS[chosen].e2 ? "E2" : "E1"};
    return MLRT_OK;
}

mlrt_status mlrt__read_apr_tree(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err) {
    return read_trees(raw, n, "DecisionTree", MLRT_KIND_DECISION_TREE, read_decision_tree, d, err);
}

mlrt_status mlrt__read_apr_forest(const uint8_t *raw, size_t n, mlrt__desc *d, mlrt_error *err) {
    return read_trees(raw, n, "RandomForest", MLRT_KIND_RANDOM_FOREST, read_random_forest, d, err);
}
