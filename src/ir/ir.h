/* ir/ir.h — the neutral descriptions that formats hand to the model layer: a file's tensors, a
 * model's dense layers, trees, centroids, graph and text pieces, as plain structs. A format fills
 * one (formats/), the model layer builds a runnable model from it (model/) and takes what it
 * owns. ir/ uses only the base; it knows no file format and runs nothing (README, "Architecture"). */
#ifndef MLRT__IR_H
#define MLRT__IR_H
#include "../base/base.h"

/* ---------------------------------------------------------------- a tensor file */

/* One tensor of a file, parsed and validated but not yet a model. */
typedef struct mlrt__tensor {
    char *name;                     /* [name_len + 1], UTF-8, NUL-terminated */
    size_t name_len;
    mlrt_dtype dtype;
    uint32_t rank;
    uint64_t shape[MLRT__MAX_RANK]; /* [rank] */
    uint64_t count;                 /* product of shape */
    size_t begin, end;              /* byte range [begin, end) in the data section */
} mlrt__tensor;

typedef struct mlrt__kv {
    char *key, *value;              /* NUL-terminated UTF-8 */
    size_t key_len, value_len;
} mlrt__kv;

/* The tensors and metadata SafeTensors, BinTensors and .apr v2 files share (and an .apr v1 file's
 * metadata, with no tensors). */
typedef struct mlrt__tensorset {
    mlrt_format format;
    mlrt__tensor *tensors;          /* [count], in file order (ascending begin) */
    size_t count;
    mlrt__kv *meta;                 /* [meta_count] string -> string metadata (.apr v2: its top-level strings) */
    size_t meta_count;
    char *meta_json;                /* the metadata as a JSON object when it is more than strings (.apr), or NULL */
    char *extra_json;               /* more members for info and inspect ("\"apr\":{...}"), or NULL */
    size_t data_begin;              /* where the data section starts in the file */
} mlrt__tensorset;

void mlrt__tensorset_free(mlrt__tensorset *ts);
const mlrt__tensor *mlrt__tensorset_find(const mlrt__tensorset *ts, const char *name);
const char *mlrt__tensorset_meta(const mlrt__tensorset *ts, const char *key); /* NULL if absent */
void mlrt__json_metadata(mlrt__buf *b, const mlrt__tensorset *ts);           /* {"k":"v",...}; ts may be NULL */

/* ---------------------------------------------------------------- dense layers */

/* One dense layer's weights as a file holds them, before packing. */
typedef struct mlrt__dense_src {
    const char *name, *b_name;      /* for messages: the weight and bias tensors' names ("w1", "b1") */
    uint32_t in, out;
    const uint8_t *w;               /* in the file (or in mlrt__desc.owned) */
    mlrt_dtype w_dtype;
    bool w_in_major;                /* true: [in][out] (the .bin layout); false: [out][in] (nn.Linear) */
    const uint8_t *b;               /* [out] in the file, or NULL for no bias */
    mlrt_dtype b_dtype;
    mlrt_activation act;
    bool w_guessed;                 /* nothing in the file told the orientation: w_in_major is PyTorch's default */
} mlrt__dense_src;

/* ---------------------------------------------------------------- trees and k-means */

#define MLRT__MAX_TREE_DEPTH 4096          /* levels below a root; deeper trees are refused */
#define MLRT__MAX_TREE_NODES (1u << 26)    /* nodes in one model */
#define MLRT__MAX_CLASSES    65536         /* distinct class labels */

typedef struct mlrt__tree_node {
    uint32_t feature;               /* a split goes left when x[feature] <= v.threshold (NaN goes right); a leaf: 0 */
    union {
        float threshold;            /* a split */
        float value;                /* a regressor's leaf */
        uint32_t cls;               /* a classifier's leaf: index into mlrt__forest.classes */
    } v;
    uint32_t left, right;           /* the children's indices in mlrt__forest.nodes; a leaf points to itself twice */
} mlrt__tree_node;

/* A decision tree is a forest of one. */
typedef struct mlrt__forest {
    bool regression;
    uint32_t n_trees;
    uint32_t n_nodes, n_leaves;
    uint32_t max_depth;             /* the deepest tree's levels below its root (0: a lone leaf) */
    uint32_t n_features;            /* the input width */
    mlrt__tree_node *nodes;         /* [n_nodes]: each tree in pre-order (left child = parent + 1), tree after tree */
    uint32_t *root;                 /* [n_trees] */
    uint32_t *depth;                /* [n_trees] */
    uint32_t *classes;              /* [n_classes] classifiers: the stored labels, ascending */
    uint32_t n_classes;
} mlrt__forest;
void mlrt__forest_free(mlrt__forest *f);

typedef struct mlrt__kmeans {
    uint32_t k, dim;
    float *c;                       /* [k][dim] centroids, finite */
} mlrt__kmeans;
void mlrt__kmeans_free(mlrt__kmeans *km);

/* ---------------------------------------------------------------- a model, as a file describes it */

typedef enum mlrt__desc_type {
    MLRT__DESC_NONE = 0,
    MLRT__DESC_DENSE,               /* layers */
    MLRT__DESC_FOREST,              /* forest */
    MLRT__DESC_KMEANS               /* kmeans */
} mlrt__desc_type;

/* What an .apr v1 payload decoded as, for info and inspect ("RandomForestClassifier", "E2"). */
typedef struct mlrt__payload_desc {
    const char *estimator;          /* aprender's Rust type */
    const char *layout;             /* "E1" / "E2" (trees), "legacy" / "current" (KMeans) */
} mlrt__payload_desc;

/* A model a format read, for the model layer to build (mlrt__build, model/). The builder takes the
 * pointers it keeps (forest, kmeans) and sets them to NULL; mlrt__desc_free frees the rest. */
typedef struct mlrt__desc {
    mlrt__desc_type type;
    mlrt_format format;
    mlrt_kind kind;
    const mlrt__tensorset *ts;      /* the file's metadata and extra info members, or NULL (borrowed) */
    mlrt__payload_desc payload;     /* .apr v1 classical models: what the payload decoded as */
    /* DENSE */
    mlrt_dtype dtype;               /* the weights' element type in the file */
    uint32_t n_layers;
    mlrt__dense_src layers[MLRT__MAX_LAYERS]; /* [n_layers] */
    /* FOREST, KMEANS (owned until built) */
    mlrt__forest *forest;
    mlrt__kmeans *kmeans;
    void *owned;                    /* bytes the layers point into (a decompressed payload), or NULL */
} mlrt__desc;
void mlrt__desc_free(mlrt__desc *d);

#endif
