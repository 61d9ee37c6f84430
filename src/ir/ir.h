/* ir/ir.h — the neutral descriptions that formats hand to the model layer, as plain structs. A
 * format fills one (formats/), the model layer builds what runs from it (model/). ir/ uses only
 * the base; it knows no file format and runs nothing (README, "Architecture"). */
#ifndef MLRT__IR_H
#define MLRT__IR_H
#include "../base/base.h"

/* ---------------------------------------------------------------- text: a tokenizer */

/* Limits every tokenizer reader enforces before allocating. */
#define MLRT__TOK_MAX_VOCAB      (1u << 22)   /* vocabulary entries */
#define MLRT__TOK_MAX_TOKEN      1024         /* bytes of one vocabulary or added token */
#define MLRT__TOK_MAX_ADDED      4096         /* added tokens */
#define MLRT__TOK_MAX_TEMPLATE   16           /* pieces of a post-processor template */
#define MLRT__TOK_MAX_SPECIAL_IDS 8           /* ids of one template special token */
#define MLRT__TOK_MAX_LENGTH     (1u << 24)   /* truncation max_length, padding length */

typedef enum mlrt__tok_truncation {
    MLRT__TRUNC_NONE = 0, MLRT__TRUNC_LONGEST_FIRST, MLRT__TRUNC_ONLY_FIRST, MLRT__TRUNC_ONLY_SECOND
} mlrt__tok_truncation;

typedef enum mlrt__tok_padding {
    MLRT__PAD_NONE = 0, MLRT__PAD_LONGEST, MLRT__PAD_FIXED
} mlrt__tok_padding;

/* A token of added_tokens, split out of the raw text before normalization. */
typedef struct mlrt__tok_added {
    char *content;                  /* [len + 1] UTF-8, NUL-terminated, len >= 1 */
    uint32_t len;
    uint32_t id;                    /* the vocabulary's id of content, or n_vocab + k for the k-th one outside it */
    bool special;                   /* skipped by decode when asked */
} mlrt__tok_added;

/* A post-processor special token: what a SpecialToken piece of the template inserts. */
typedef struct mlrt__tok_special {
    char *name;                     /* NUL-terminated */
    uint32_t n_ids;                 /* 1..MLRT__TOK_MAX_SPECIAL_IDS */
    uint32_t ids[MLRT__TOK_MAX_SPECIAL_IDS];
} mlrt__tok_special;

/* One piece of a template: a special token, or sequence A (seq 0) or B (seq 1). */
typedef struct mlrt__tok_piece {
    int32_t special;                /* index into specials, or -1 for a sequence */
    uint8_t seq;                    /* 0: A, 1: B (sequences only) */
    uint32_t type_id;
} mlrt__tok_piece;

/* A WordPiece tokenizer as tokenizer.json or vocab.txt (+ tokenizer_config.json) describes it,
 * validated: ids in range, every name resolved. Owns every pointer; mlrt__tok_desc_free frees them
 * (the builder may take pool, off and added: it then sets them to NULL). */
typedef struct mlrt__tok_desc {
    const char *source;             /* "tokenizer.json" or "vocab.txt": the file messages name */
    /* model: WordPiece */
    uint32_t n_vocab;               /* tokens with ids 0..n_vocab-1, no holes, no two alike */
    char *pool;                     /* [pool_len] the tokens, each NUL-terminated, in id order */
    size_t pool_len;
    uint32_t *off;                  /* [n_vocab + 1] token i = pool[off[i] .. off[i+1] - 1) */
    uint32_t *sorted;               /* [n_vocab] the ids in byte order of their tokens (mlrt__tok_desc_sort) */
    uint32_t unk_id;                /* unk_token's id (in the vocabulary) */
    char prefix[MLRT__TOK_MAX_TOKEN + 1]; /* continuing_subword_prefix ("##"), NUL-terminated */
    uint32_t prefix_len;
    uint32_t max_chars_per_word;    /* max_input_chars_per_word (100) */
    /* normalizer: BertNormalizer, or none */
    bool normalize;                 /* false: normalizer null */
    bool clean_text, chinese_chars, strip_accents, lowercase; /* strip_accents resolved (null: = lowercase) */
    /* pre-tokenizer: BertPreTokenizer, or none (the whole normalized text is one word) */
    bool pre_tokenize;
    /* added tokens (normalized: false, no lstrip/rstrip/single_word) */
    mlrt__tok_added *added;         /* [n_added] in file order */
    uint32_t n_added;
    uint32_t n_ids;                 /* n_vocab + the added tokens outside the vocabulary */
    /* post-processor: a template for one sequence and for pairs, or none */
    bool post_process;
    mlrt__tok_special *specials;    /* [n_specials] */
    uint32_t n_specials;
    mlrt__tok_piece single[MLRT__TOK_MAX_TEMPLATE], pair[MLRT__TOK_MAX_TEMPLATE];
    uint32_t n_single, n_pair;
    uint32_t added_single, added_pair; /* ids the template adds: to one sequence, to a pair */
    /* truncation (the file's default) */
    mlrt__tok_truncation truncation;
    uint32_t max_length;            /* truncation: final length incl. specials */
    bool truncate_left;             /* direction Left: keep the last tokens */
    /* padding (the file's default) */
    mlrt__tok_padding padding;
    uint32_t pad_length;            /* PAD_FIXED */
    uint32_t pad_multiple;          /* pad_to_multiple_of, 0: none */
    bool pad_left;
    uint32_t pad_id, pad_type_id;
    /* decoder: WordPiece (prefix, cleanup), or none (tokens joined by spaces) */
    bool decode_wordpiece;
    char decode_prefix[MLRT__TOK_MAX_TOKEN + 1];
    uint32_t decode_prefix_len;
    bool decode_cleanup;
    uint32_t model_max_length;      /* tokenizer_config.json's model_max_length (0: not given), for info */
} mlrt__tok_desc;

void mlrt__tok_desc_free(mlrt__tok_desc *d);
/* Fills d->sorted (pool, off, n_vocab set). False when out of memory; *dup_a, *dup_b = two ids
 * with the same token (dup_a = -1 when there are none). */
bool mlrt__tok_desc_sort(mlrt__tok_desc *d, long *dup_a, long *dup_b);
/* The id of token s [n] in d's vocabulary (d->sorted set), or -1. */
long mlrt__tok_desc_find(const mlrt__tok_desc *d, const char *s, size_t n);

#endif
