/* base/base.h — what every layer of mlrt may use: limits, errors and messages, growable buffers,
 * checked arithmetic, little-endian reads, UTF-8 and element types. Includes nothing of mlrt's but
 * the public header. (The layers and their rule: README, "Architecture".) */
#ifndef MLRT__BASE_H
#define MLRT__BASE_H

#include "../mlrt.h"
#include <stdarg.h>
#include <stdbool.h>

/* ---- limits: every loader refuses anything beyond these, before allocating ---- */
#define MLRT__MAX_HEADER      (100u * 1000u * 1000u) /* SafeTensors/BinTensors header bytes */
#define MLRT__MAX_PARAMS      (1ull << 28)           /* weights in one model */
#define MLRT__MAX_DIM         (1u << 24)             /* one layer's width */
#define MLRT__MAX_RANK        8                      /* tensor dimensions */
#define MLRT__MAX_TENSORS     100000
#define MLRT__MAX_LAYERS      64
#define MLRT__MAX_JSON_DEPTH  64

/* Functions that run once per load or per call, not per element, in files built at -O3: for size. */
#if defined(__clang__)
#define MLRT__SMALL __attribute__((minsize))
#else
#define MLRT__SMALL
#endif

/* ---- errors ---- */
/* Sets err (may be NULL) to code + a printf-style message; returns code.
 * Supports %s %d %u %ld %lu %lld %llu %zu %x %c and %.*s (int, const char*); %u and %x take a
 * zero-padded width ("%04x"). */
mlrt_status mlrt__fail(mlrt_error *err, mlrt_status code, const char *fmt, ...);
int mlrt__vformat(char *buf, size_t cap, const char *fmt, va_list ap);
/* mlrt__fail with the message after "where: " (a file's name: "vocab.txt"). */
mlrt_status mlrt__fail_in(mlrt_error *err, mlrt_status code, const char *where, const char *fmt, ...);
/* Like mlrt__fail's formatting into buf [cap]; returns the length written (cut to fit). */
int mlrt__format_to(char *buf, size_t cap, const char *fmt, ...);

/* ---- a growable byte string (JSON output, messages) ---- */
typedef struct mlrt__buf {
    char *data;   /* [cap], NUL-terminated while !oom */
    size_t len, cap;
    bool oom;     /* set once an allocation failed; later appends are no-ops */
} mlrt__buf;
void mlrt__buf_append(mlrt__buf *b, const char *s, size_t n);
void mlrt__buf_puts(mlrt__buf *b, const char *s);
void mlrt__buf_printf(mlrt__buf *b, const char *fmt, ...);
void mlrt__buf_json_string(mlrt__buf *b, const char *s, size_t n); /* quoted, escaped */

/* ---- checked arithmetic ---- */
static inline bool mlrt__mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool mlrt__add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
static inline uint32_t mlrt__rd_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t mlrt__rd_u64(const uint8_t *p) {
    return (uint64_t)mlrt__rd_u32(p) | (uint64_t)mlrt__rd_u32(p + 4) << 32;
}

/* ---- UTF-8 ---- */
bool mlrt__utf8_valid(const uint8_t *s, size_t n);
size_t mlrt__utf8_invalid_at(const uint8_t *s, size_t n); /* the first invalid byte's offset, n when none */
/* ---- element types (base/dtype.c) ---- */
bool mlrt__dtype_from_name(const char *s, size_t n, mlrt_dtype *out); /* SafeTensors names: BOOL..U64, F4..C64 */
/* Bytes that count elements of dtype take (block-quantized: whole blocks); false on overflow. */
bool mlrt__dtype_bytes(mlrt_dtype dtype, uint64_t count, uint64_t *bytes);
bool mlrt__dtype_is_quantized(mlrt_dtype dtype);
bool mlrt__dtype_packs_bits(mlrt_dtype dtype);   /* F4, F6_*: elements share bytes */
uint32_t mlrt__dtype_block(mlrt_dtype dtype);    /* elements per block (1 for whole-byte types) */
bool mlrt__dtype_is_float(mlrt_dtype dtype);     /* F16, BF16, F32, F64 */
/* One element of a float dtype at p (little endian, any alignment) as f32; NaN for other dtypes. */
float mlrt__to_f32(const uint8_t *p, mlrt_dtype dtype);
/* n elements of a float dtype at p into out. */
void mlrt__to_f32_n(const uint8_t *p, mlrt_dtype dtype, float *out, size_t n);
/* True when none of the n f32 at v (any alignment) is inf or NaN. */
bool mlrt__all_finite(const void *v, size_t n);

/* ---- Unicode properties for the tokenizer (base/unicode.c; tables: base/unicode_tables.c) ----
 * Each at the version Hugging Face's Rust `tokenizers` uses: categories at 8.0.0, canonical
 * decomposition and combining classes at 9.0.0, lowercase at 17.0.0 (tools/unicode/gen.mjs). */
#define MLRT__UNI_NFD_MAX 4                             /* characters of the longest full decomposition */
bool mlrt__uni_is_other8(uint32_t cp);                  /* Cc, Cf or Co (8.0) */
bool mlrt__uni_is_white_space(uint32_t cp);             /* White_Space, as Rust's char::is_whitespace */
bool mlrt__uni_is_mn8(uint32_t cp);                     /* Mn (8.0) */
bool mlrt__uni_is_punct8(uint32_t cp);                  /* Pc Pd Ps Pe Pi Pf Po (8.0); not ASCII symbols */
/* What strip_accents does with a character of an NFD: deletes it (Mn in 8.0: MLRT__UNI_STRIP, or
 * MLRT__UNI_STRIP_ENDS_RUN when its combining class is 0, which ends a run of reordered marks), or
 * keeps it: its canonical combining class (9.0), 0..254. */
#define MLRT__UNI_STRIP (-1)
#define MLRT__UNI_STRIP_ENDS_RUN (-2)
int mlrt__uni_strip_class(uint32_t cp);
/* cp's full canonical decomposition (9.0; Hangul syllables too) into out, not yet reordered;
 * returns how many (1 and cp itself when it has none). */
size_t mlrt__uni_nfd(uint32_t cp, uint32_t out[MLRT__UNI_NFD_MAX]);
/* Rust's char::to_lowercase (17.0): one character, except U+0130 -> U+0069 U+0307, of which this
 * returns the first (the caller appends U+0307). */
uint32_t mlrt__uni_lower(uint32_t cp);
/* Final_Sigma's classes (17.0), which Python's str.lower and JavaScript's toLowerCase use to lower a
 * capital sigma: MLRT__UNI_CASE_IGNORABLE (Case_Ignorable, whether Cased or not), MLRT__UNI_CASED, or 0. */
#define MLRT__UNI_CASED 1
#define MLRT__UNI_CASE_IGNORABLE 2
int mlrt__uni_case_class(uint32_t cp);
/* Ten of the tables are stored as differences (gzip shrinks them more): this sums them into place,
 * which unicode.c does once, before its first lookup. For the tests: FNV-1a of the summed tables,
 * and the value the generator computed from its own. */
void mlrt__uni_tables_sum(void);
uint32_t mlrt__uni_tables_fnv(void);
extern const uint32_t mlrt__uni_tables_fnv_want;
/* UTF-8: decoding and encoding one character of valid text (put writes at most 4 bytes). */
uint32_t mlrt__utf8_next(const uint8_t *s, size_t *i);
uint32_t mlrt__utf8_prev(const uint8_t *s, size_t begin, size_t *i); /* the one ending at *i (> begin); *i to its start */
size_t mlrt__utf8_put(uint8_t *out, uint32_t cp);

/* ---- a growable array (base/buf.c) ---- */
/* A growable array of elements of one size (bytes, ids, ...): false, and nothing changed, when
 * n more would overflow or not be allocated. */
typedef struct mlrt__vec {
    void *p;                        /* [cap] elements */
    size_t len, cap;
} mlrt__vec;
bool mlrt__vec_reserve(mlrt__vec *v, size_t more, size_t elem);

/* ---- hashing: FNV-1a, 32 bits (the tokenizer's vocabulary, repeated keys) ---- */
#define MLRT__FNV_INIT 2166136261u
#define MLRT__FNV_STEP(h, byte) (((h) ^ (uint8_t)(byte)) * 16777619u)

/* ---- sorting (base/sort.c) ---- */
/* Sorts n elements of `size` bytes at base by cmp (heapsort: O(n log n), no recursion, not stable),
 * as qsort does; ours, so that the wasm builds carry no libc sort. */
void mlrt__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* The slot of key s [n] in mlrt__first_repeat's hash set of `cap` slots (a power of 2). */
static inline size_t mlrt__repeat_slot(const char *s, size_t n, size_t cap) {
    uint32_t h = MLRT__FNV_INIT;
    for (size_t i = 0; i < n; i++) h = MLRT__FNV_STEP(h, s[i]);
    return (h ^ h >> 16) & (cap - 1);
}
/* Item i's key: its bytes [*len]. */
typedef const char *(*mlrt__key_fn)(const void *ctx, size_t i, size_t *len);
/* The first of n items (n < 2^31) whose key repeats an earlier item's: *first < *again, their indices,
 * or both SIZE_MAX when no key repeats. Linear, through a hash set of the indices (FNV-1a); keys made
 * to collide (more than 8 probes an item on average) fall back to sorting the indices by key, so it
 * stays O(n log n) whatever the keys. False when out of memory. */
bool mlrt__first_repeat(size_t n, const void *ctx, mlrt__key_fn key, size_t *first, size_t *again);

#endif
