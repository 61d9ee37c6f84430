/* builders.h — what the C tests build their inputs with: byte strings, hex, a seeded generator,
 * SafeTensors, BinTensors, .bin and .apr v1/v2 writers, a reference MLP in double, and the loading
 * expectations (LOAD_OK, LOAD_FAILS, ...) that check a status AND that the message names the
 * culprit. Written from the formats' descriptions, not shared with src/. (builders.c) */
#ifndef MLRT__TEST_BUILDERS_H
#define MLRT__TEST_BUILDERS_H
#include "harness.h"
#include "codecs/codecs.h"
#include "formats/formats.h"
#include "kernels/kernels.h"
#include "model/model.h"

#define F32_BYTES(...) ((const float[]){__VA_ARGS__}), sizeof((const float[]){__VA_ARGS__})

static const float ONE_F32[1] = {1.0f};
static const float ZEROS8[2] = {0.0f, 0.0f};
static const float FOUR_F32[4] = {1, 2, 3, 4};
/* ================================================================ SafeTensors */

static const char *const FC_NAMES[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

/* ------------------------------------------------------------ byte strings */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;
void put(bytes *b, const void *s, size_t n);
void put_u8(bytes *b, uint8_t v);
void put_u32(bytes *b, uint32_t v);
void put_u64(bytes *b, uint64_t v);
void put_f32(bytes *b, float f);
void put_f64(bytes *b, double d);
void put_str(bytes *b, const char *s);
void put_fmt(bytes *b, const char *fmt, ...);
/* The next key "<prefix><k>" (k from *next on) that lands in slot `slot` of mlrt__first_repeat's hash
 * set of `cap` slots: keys made to collide, for the tests of its sorting fallback. Into key [16]. */
void next_colliding_key(const char *prefix, size_t cap, size_t slot, unsigned *next, char key[16]);
/* Hands the buffer to the per-test memory; the bytes stay valid until the test ends. */
bytes done(bytes b);
/* The first n bytes of f (a prefix view: loaders get an exact() copy anyway). */
bytes prefix(bytes f, size_t n);
bytes with_extra_byte(bytes f, uint8_t v);
extern uint32_t g_rng;
void rng_seed(uint32_t s);
uint32_t rng_u32(void);
int rng_int(int lo, int hi);
float rng_float(float lo, float hi);


/* --------------------------------------------------------------- tensors */

/* One tensor for the SafeTensors/BinTensors builders: laid out in list order. */
typedef struct tspec {
    const char *name;
    const char *dtype; /* SafeTensors spelling: "F32", "BF16", ... */
    int rank;
    uint64_t shape[10];
    const void *data;
    size_t nbytes;
} tspec;
extern const char *const DTYPE_NAMES[];
int dtype_code(const char *s);
/* SafeTensors: [u64 declared][header][data]. */
bytes st_raw_len(uint64_t declared, const char *header, size_t hlen, const void *data, size_t dlen);
bytes st_raw(const char *header, const void *data, size_t dlen);
/* SafeTensors from a list of tensors (offsets computed, header space-padded to 8). */
bytes st_build(const char *meta_json, const tspec *t, int n);
/* BinTensors pieces: bincode "standard" varints and strings. */
void bt_varint(bytes *b, uint64_t v);
void bt_string(bytes *b, const char *s);
/* BinTensors file: [u64 len][metadata, optionally space-padded to 8][data]. */
bytes bt_file(bytes meta, int pad, const void *data, size_t dlen);
void bt_tensor_info(bytes *m, const tspec *t, size_t begin);
/* meta_kv: NULL-terminated key, value, key, value, ...; NULL for no metadata. */
void bt_user_meta(bytes *m, const char *const *meta_kv);
/* The bintensors crate's layout: Vec<TensorInfo> then name -> index map. */
bytes bt_build(const char *const *meta_kv, const tspec *t, int n);
/* The early spec's layout: Vec<(String, TensorInfo)>. */
bytes bt_build_pairs(const char *const *meta_kv, const tspec *t, int n);


/* ------------------------------------------------- a reference MLP in double */

#define REF_MAX_LAYERS 8
typedef struct ref_mlp {
    int nl;
    int dim[REF_MAX_LAYERS + 1];
    float *w[REF_MAX_LAYERS]; /* [out][in], as nn.Linear */
    float *b[REF_MAX_LAYERS]; /* [out] (zeros when the file has no bias) */
    mlrt_activation act[REF_MAX_LAYERS];
} ref_mlp;
/* Random weights in [-0.5, 0.5]; ReLU between layers, softmax at the end. */
void ref_make(ref_mlp *r, int nl, const int *dim, uint32_t seed);
void ref_activate(mlrt_activation a, double *y, int n);
void ref_forward(const ref_mlp *r, const float *x, double *out);
/* Tensors of r named names[2l] (weight) and names[2l+1] (bias, or NULL: none, and the
 * reference bias is zeroed). dtype "F32" or "F64". reverse: layers last-to-first in the file. */
int ref_tensors(ref_mlp *r, const char *const *names, const char *dtype, int reverse, tspec *out);
/* The .bin file of a 2-layer reference (W1 stored [in][hidden], W2 [hidden][out]). */
bytes bin_from_ref(const ref_mlp *r, int f64);
/* Predicts a few random rows (as one batch and one by one) and compares with the reference. */
void check_vs_ref_at(const char *file, int line, mlrt_model *m, const ref_mlp *r, double tol);

#define CHECK_VS_REF(m, r) check_vs_ref_at(__FILE__, __LINE__, (m), (r), 2e-5)
/* ---------------------------------------------------- loading expectations */
mlrt_model *load_ok_at(const char *file, int line, bytes f);

#define LOAD_OK(f) load_ok_at(__FILE__, __LINE__, (f))
void check_message_at(const char *file, int line, const mlrt_error *e, mlrt_status code, const char *prefix,
                             const char *needle);
/* mlrt_load_from_bytes refuses f with code; the message starts with prefix and contains needle.
 * mlrt_inspect then agrees: it fails with the same code, or (for errors about the model, not
 * the file) it succeeds and reports notAModel with that code. */
void load_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *prefix,
                          const char *needle);

#define LOAD_FAILS(f, code, prefix, needle) load_fails_at(__FILE__, __LINE__, (f), (code), (prefix), (needle))
#define ST_FAILS(f, code, needle) LOAD_FAILS(f, code, "safetensors: ", needle)
#define BT_FAILS(f, code, needle) LOAD_FAILS(f, code, "bintensors: ", needle)
#define BIN_LOAD_FAILS(f, code, needle) LOAD_FAILS(f, code, "bin: ", needle)

/* The format readers directly (for inputs that format detection would send elsewhere). */
typedef mlrt_status (*reader_fn)(const uint8_t *, size_t, mlrt__tensorset *, mlrt_error *);
void read_fails_at(const char *file, int line, reader_fn rd, bytes f, mlrt_status code, const char *prefix,
                          const char *needle);

#define ST_READ_FAILS(f, code, needle) \
    read_fails_at(__FILE__, __LINE__, mlrt__read_safetensors, (f), (code), "safetensors: ", (needle))
#define BT_READ_FAILS(f, code, needle) \
    read_fails_at(__FILE__, __LINE__, mlrt__read_bintensors, (f), (code), "bintensors: ", (needle))
void bin_fails_at(const char *file, int line, bytes f, mlrt_status code, const char *needle);

#define BIN_FAILS(f, code, needle) bin_fails_at(__FILE__, __LINE__, (f), (code), (needle))

/* Inspect output, parsed (NULL + a failed check when inspect fails or the JSON is invalid). */
typedef struct inspected {
    char *text;
    mlrt__json_doc doc;
} inspected;
const mlrt__json *inspect_at(const char *file, int line, bytes f, inspected *out);

#define INSPECT(f, out) inspect_at(__FILE__, __LINE__, (f), (out))
const char *jstr(const mlrt__json *o, const char *key);
long long jint(const mlrt__json *o, const char *key);
const mlrt__json *jitem(const mlrt__json *arr, size_t i);
/* ------------------------------------------------------------------ builders */
bytes from_hex(const char *hex);
bytes cat(bytes a, bytes b);
bytes copy_of(const void *p, size_t n);
void set_u32(uint8_t *p, uint32_t v);
/* A copy of f with the v1 trailer (crc of everything before the last 4 bytes) recomputed. */
bytes v1_crc(bytes f);
/* A copy of f with both v2 checksums recomputed. */
bytes v2_crc(bytes f);
/* {"created_at": "1700000000", "aprender_version": "0.0.0"} as rmp-serde writes it */
bytes default_meta(void);


typedef struct v1_spec {
    uint16_t type;
    uint8_t compression, flags, quality, major;
    int64_t raw_size;   /* -1: the payload's length */
    size_t sig_len;     /* bytes appended after the payload (the signature block) */
} v1_spec;
bytes v1_file(v1_spec s, bytes meta, bytes payload);

#define V1(type, payload) v1_file((v1_spec){(type), 0, 0, 0, 0, -1, 0}, default_meta(), (payload))
void put_vec_f32(bytes *b, const float *v, size_t n);


/* One v2 tensor; data laid out in the given order, each padded to 64. */
typedef struct v2t {
    const char *name;
    uint8_t dtype;
    int rank;
    uint64_t shape[9];
    const void *data;
    size_t nbytes;
} v2t;
void pad64(bytes *b);
void v2_entry(bytes *ix, const v2t *t, uint64_t offset, uint64_t size);
/* An APR\0 file: the entries in the given order (callers sort them), flags LAYOUT_ROW_MAJOR. */
bytes v2_file(const char *meta_json, const v2t *t, int n);
/* f with bytes at offset replaced, checksums recomputed (v2 when v2, else v1). */
bytes patched(bytes f, size_t offset, const void *p, size_t n, int v2);
bytes patched_u8(bytes f, size_t offset, uint8_t v, int v2);
bytes patched_u32(bytes f, size_t offset, uint32_t v, int v2);
bytes patched_u64(bytes f, size_t offset, uint64_t v, int v2);


#define APR_FAILS(f, code, needle) LOAD_FAILS(f, code, "apr: ", needle)
/* The "apr" member of inspect's JSON. */
const mlrt__json *inspect_apr(bytes f, inspected *out);

/* A small valid model for the API tests: 3 -> 4 -> 2 in SafeTensors. */
mlrt_model *small_model(ref_mlp *r);
/* ====================================================== trained model files */

bytes read_file_or_empty(const char *path);

#endif
