/* fuzz_tokenizer.c — libFuzzer target for the WordPiece tokenizer (issue 20).
 *
 * The first byte picks what the rest is:
 *   even  text, encoded (alone, as a pair with itself, in a batch, truncated) by a real BERT
 *         tokenizer: bert-base-uncased's 30,522 pieces (build/fuzz/bert-uncased.tokenizer.json,
 *         written by run.sh; $MLRT_FUZZ_TOKENIZER overrides; a small built-in vocabulary when
 *         neither is there);
 *   odd   a tokenizer.json (mutated from the seeds), loaded, then used on a few fixed texts.
 * Oracles: a refusal has a valid status and a one-line message; text is refused exactly when it is
 * not UTF-8, with the offset of the first bad byte; every id is a token (< idCount); the template's
 * special tokens are first and last; no encoding is longer than max_length under truncation; a
 * batch row equals the same text encoded alone; type ids and the mask are 0/1 as the template and
 * padding say; decoding (without specials) and encoding again gives the same ids when nothing was
 * truncated; the info JSON parses. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SMALL[] =
    "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":["
    "{\"id\":0,\"content\":\"[PAD]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":1,\"content\":\"[UNK]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":2,\"content\":\"[CLS]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":3,\"content\":\"[SEP]\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],"
    "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,\"strip_accents\":null,\"lowercase\":true},"
    "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
    "\"post_processor\":{\"type\":\"BertProcessing\",\"sep\":[\"[SEP]\",3],\"cls\":[\"[CLS]\",2]},"
    "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},"
    "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":100,"
    "\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,\"[SEP]\":3,\"a\":4,\"##a\":5,\"b\":6,\"##b\":7,\"ab\":8,\".\":9,\"\xe4\xb8\xad\":10}}}";

static mlrt_tokenizer *g_bert;
static uint32_t g_ids;    /* the real tokenizer's idCount */

static void load_bert(void) {
    const char *path = getenv("MLRT_FUZZ_TOKENIZER");
    FILE *f = fopen(path ? path : "build/fuzz/bert-uncased.tokenizer.json", "rb");
    uint8_t *buf = NULL;
    size_t n = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        rewind(f);
        buf = len > 0 ? malloc((size_t)len) : NULL;
        n = buf ? fread(buf, 1, (size_t)len, f) : 0;
        fclose(f);
    }
    mlrt_file file = {"tokenizer.json", buf ? buf : (const uint8_t *)SMALL, buf ? n : sizeof SMALL - 1};
    mlrt_error e;
    g_bert = mlrt_tokenizer_load(&file, 1, &e);
    FUZZ_ASSERT(g_bert != NULL, "the fuzzer's tokenizer does not load: %s", e.message);
    const char *which = buf ? "bert-base-uncased" : "the small built-in vocabulary";
    free(buf);
    const char *info = mlrt_tokenizer_info_json(g_bert);
    const char *at = strstr(info, "\"idCount\":");
    FUZZ_ASSERT(at != NULL, "info: %s", info);
    g_ids = (uint32_t)strtoul(at + 10, NULL, 10);
    fprintf(stderr, "fuzz_tokenizer: %s (%u ids)\n", which, g_ids);
}

/* Copies an encoding out of the tokenizer's buffers (the next call reuses them). */
typedef struct copy { size_t n; int32_t *ids, *types; uint8_t *mask; } copy;
static copy take(const mlrt_encoding *e) {
    copy c = {e->n, malloc(e->n * 4 + 1), malloc(e->n * 4 + 1), malloc(e->n + 1)};
    FUZZ_ASSERT(c.ids && c.types && c.mask, "out of memory");
    memcpy(c.ids, e->ids, e->n * 4);
    memcpy(c.types, e->type_ids, e->n * 4);
    memcpy(c.mask, e->attention_mask, e->n);
    return c;
}
static void drop(copy *c) { free(c->ids); free(c->types); free(c->mask); }

/* The encoding is well formed: ids in range, types and mask 0/1 (no padding here: mask all 1). */
static void check_encoding(const mlrt_encoding *e, uint32_t ids, bool pair, size_t max) {
    for (size_t i = 0; i < e->n; i++) {
        FUZZ_ASSERT(e->ids[i] >= 0 && (uint32_t)e->ids[i] < ids, "ids[%zu] = %d of %u", i, e->ids[i], ids);
        FUZZ_ASSERT(e->type_ids[i] == 0 || (pair && e->type_ids[i] == 1), "type_ids[%zu] = %d", i, e->type_ids[i]);
        FUZZ_ASSERT(e->attention_mask[i] == 1, "mask[%zu] = %d", i, e->attention_mask[i]);
    }
    if (max) FUZZ_ASSERT(e->n <= max, "%zu tokens, max_length %zu", e->n, max);
}

static void text_mode(const uint8_t *s, size_t n) {
    mlrt_tokenizer *t = g_bert;
    mlrt_encoding enc;
    mlrt_error e;
    size_t bad = mlrt__utf8_invalid_at(s, n);
    mlrt_status st = mlrt_tokenizer_encode(t, (const char *)s, n, NULL, 0, NULL, &enc, &e);
    if (bad < n) {
        FUZZ_ASSERT(st == MLRT_ERR_INVALID_UTF8, "invalid UTF-8 at %zu not refused: %s", bad, mlrt_status_name(st));
        fuzz_check_error(st, &e);
        char want[64];
        snprintf(want, sizeof want, "at byte %zu", bad);
        FUZZ_ASSERT(strstr(e.message, want) != NULL, "offset: %s (want %s)", e.message, want);
        return;
    }
    FUZZ_ASSERT(st == MLRT_OK, "encode: %s", e.message);
    check_encoding(&enc, g_ids, false, 0);
    FUZZ_ASSERT(enc.n >= 2, "%zu tokens: the template adds 2", enc.n);
    copy one = take(&enc);
    /* the template's specials first and last: the empty text gives exactly them */
    mlrt_encoding empty;
    FUZZ_ASSERT(mlrt_tokenizer_encode(t, "", 0, NULL, 0, NULL, &empty, &e) == MLRT_OK && empty.n == 2, "empty text");
    FUZZ_ASSERT(one.ids[0] == empty.ids[0] && one.ids[one.n - 1] == empty.ids[1], "specials not at the ends");
    /* decode what is between the template's specials, encode again: the same ids (nothing was truncated) */
    size_t len;
    char *text = mlrt_tokenizer_decode(t, one.ids + 1, one.n - 2, 0, &len, &e);
    FUZZ_ASSERT(text != NULL, "decode: %s", e.message);
    FUZZ_ASSERT(mlrt_tokenizer_encode(t, text, len, NULL, 0, NULL, &enc, &e) == MLRT_OK, "re-encode: %s", e.message);
    FUZZ_ASSERT(enc.n == one.n && memcmp(enc.ids, one.ids, one.n * 4) == 0, "decode + encode differs: \"%.200s\"", text);
    mlrt_string_free(text);
    /* a pair of the text with itself: A then B, types 0 then 1 */
    FUZZ_ASSERT(mlrt_tokenizer_encode(t, (const char *)s, n, (const char *)s, n, NULL, &enc, &e) == MLRT_OK, "pair: %s", e.message);
    check_encoding(&enc, g_ids, true, 0);
    FUZZ_ASSERT(enc.n == 2 * one.n - 1 && memcmp(enc.ids, one.ids, one.n * 4) == 0, "pair: %zu tokens, single %zu", enc.n, one.n);
    /* truncated to every length from 2 to 12 (pairs from 3) */
    for (uint32_t max = 2; max <= 12; max++) {
        mlrt_encode_options o = {max, MLRT_TRUNCATION_LONGEST_FIRST, MLRT_PADDING_NONE};
        FUZZ_ASSERT(mlrt_tokenizer_encode(t, (const char *)s, n, NULL, 0, &o, &enc, &e) == MLRT_OK, "max %u: %s", max, e.message);
        check_encoding(&enc, g_ids, false, max);
        FUZZ_ASSERT(enc.n == (one.n < max ? one.n : max) && memcmp(enc.ids, one.ids, (enc.n - 1) * 4) == 0, "truncated to %u", max);
        st = mlrt_tokenizer_encode(t, (const char *)s, n, (const char *)s, n, &o, &enc, &e);
        FUZZ_ASSERT(max < 3 ? st == MLRT_ERR_INVALID_ARGUMENT : st == MLRT_OK, "pair max %u: %s", max, mlrt_status_name(st));
        if (!st) check_encoding(&enc, g_ids, true, max);
    }
    /* a batch: [text, "", text] padded to the longest; its rows are the single encodings */
    size_t ends[3] = {n, n, 2 * n};
    uint8_t *two = malloc(2 * n + 1);
    FUZZ_ASSERT(two != NULL, "out of memory");
    memcpy(two, s, n);
    memcpy(two + n, s, n);
    mlrt_batch_encoding b;
    mlrt_encode_options pad = {0, MLRT_TRUNCATION_NONE, MLRT_PADDING_LONGEST};
    FUZZ_ASSERT(mlrt_tokenizer_encode_batch(t, (const char *)two, ends, NULL, NULL, 3, &pad, &b, &e) == MLRT_OK, "batch: %s", e.message);
    FUZZ_ASSERT(b.rows == 3 && b.width == one.n, "batch %zu x %zu", b.rows, b.width);
    for (size_t r = 0; r < 3; r += 2)
        FUZZ_ASSERT(b.lengths[r] == one.n && memcmp(b.ids + r * b.width, one.ids, one.n * 4) == 0, "batch row %zu", r);
    for (size_t k = 2; k < b.width; k++) FUZZ_ASSERT(b.attention_mask[b.width + k] == 0, "padding mask");
    free(two);
    drop(&one);
}

static void json_mode(const uint8_t *s, size_t n) {
    mlrt_file f = {"tokenizer.json", s, n};
    mlrt_error e;
    mlrt_tokenizer *t = mlrt_tokenizer_load(&f, 1, &e);
    if (!t) {
        fuzz_check_error(e.code, &e);
        FUZZ_ASSERT(strncmp(e.message, "tokenizer.json: ", 16) == 0, "message: %s", e.message);
        return;
    }
    const char *info = mlrt_tokenizer_info_json(t);
    fuzz_check_json_output(info);
    uint32_t ids = (uint32_t)strtoul(strstr(info, "\"idCount\":") + 10, NULL, 10);
    static const char *const texts[] = {"", "Hello, World! [CLS] a\xcc\x81" "b \xe4\xb8\xad\xe6\x96\x87 ##a", "aaaaaaaaaaaa bbb . ab"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        mlrt_encoding enc;
        size_t len = strlen(texts[i]);
        mlrt_status st = mlrt_tokenizer_encode(t, texts[i], len, i ? texts[i - 1] : NULL, i ? strlen(texts[i - 1]) : 0, NULL, &enc, &e);
        if (st) { /* the file's truncation can refuse a pair (only_first/only_second, too short) */
            FUZZ_ASSERT(st == MLRT_ERR_INVALID_ARGUMENT, "encode: %s", e.message);
            continue;
        }
        for (size_t k = 0; k < enc.n; k++) FUZZ_ASSERT(enc.ids[k] >= 0 && (uint32_t)enc.ids[k] < ids, "id %d of %u", enc.ids[k], ids);
        char *text = mlrt_tokenizer_decode(t, enc.ids, enc.n, (int)(i & 1), NULL, &e);
        FUZZ_ASSERT(text != NULL, "decode: %s", e.message);
        FUZZ_ASSERT(mlrt__utf8_valid((const uint8_t *)text, strlen(text)), "decode: not UTF-8");
        mlrt_string_free(text);
    }
    mlrt_tokenizer_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
    if (!g_bert) load_bert();
    if (data[0] & 1) json_mode(data + 1, size - 1);
    else text_mode(data + 1, size - 1);
    return 0;
}
