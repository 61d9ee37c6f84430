/* test_text.c — the WordPiece tokenizer (issue 20) in C: the Unicode lookups on code points whose
 * answer the spec pins (bert-encoder.md §2.2-2.3, §3.2), the engine on the spec's edge cases over a
 * small vocabulary, the readers' refusals (every prefix of a valid file, under ASan/LSan: no leak
 * on any error path) and the API's misuse. The exhaustive checks against the reference are the
 * Node tests (tests/tokenizer.test.mjs). */
#include "builders.h"

static void test_text_unicode_tables(void) {
    /* the tables stored as differences, once a lookup has summed them, are the generator's values */
    CHECK(mlrt__uni_is_mn8(0x300));
    CHECK(mlrt__uni_tables_fnv() == mlrt__uni_tables_fnv_want);
    /* Cc + Cf + Co of Unicode 8.0 */
    static const uint32_t other[] = {0x00, 0x1f, 0x7f, 0x85, 0x9f, 0xad, 0x600, 0x61c, 0x180e, 0x200b, 0x200d, 0x2066, 0xfeff,
                                     0xfffb, 0x110bd, 0x1bca3, 0xe0001, 0xe007f, 0xe000, 0xf8ff, 0xf0000, 0xffffd, 0x100000, 0x10fffd};
    static const uint32_t not_other[] = {0x20, 0x41, 0xa0, 0x8e2, 0x890, 0x110cd, 0x13430, 0xfffd, 0xfffe, 0xffffe, 0x10ffff, 0x378, 0xd7ff};
    for (size_t i = 0; i < LEN(other); i++) check_at(mlrt__uni_is_other8(other[i]), __FILE__, __LINE__, "U+%04X is Cc/Cf/Co", other[i]);
    for (size_t i = 0; i < LEN(not_other); i++)
        check_at(!mlrt__uni_is_other8(not_other[i]), __FILE__, __LINE__, "U+%04X is not Cc/Cf/Co in 8.0", not_other[i]);
    /* Mn of 8.0: U+1734 was Mn (Mc since 14.0); U+0AFA, U+1E944, U+0898 came later */
    CHECK(mlrt__uni_is_mn8(0x300) && mlrt__uni_is_mn8(0x1734) && mlrt__uni_is_mn8(0xfe0f) && mlrt__uni_is_mn8(0xe01ef));
    CHECK(!mlrt__uni_is_mn8(0xafa) && !mlrt__uni_is_mn8(0x1e944) && !mlrt__uni_is_mn8(0x898) && !mlrt__uni_is_mn8('a'));
    /* P* of 8.0: U+166D and U+111C9 were punctuation, U+2E43 came later; ASCII symbols are not P* */
    CHECK(mlrt__uni_is_punct8(0x166d) && mlrt__uni_is_punct8(0x111c9) && mlrt__uni_is_punct8(0x2019) && mlrt__uni_is_punct8(0xff01));
    CHECK(!mlrt__uni_is_punct8(0x2e43) && !mlrt__uni_is_punct8('$') && !mlrt__uni_is_punct8(0x20ac) && !mlrt__uni_is_punct8(0x1f600));
    CHECK(mlrt__uni_is_white_space(0x85) && mlrt__uni_is_white_space(0x3000) && mlrt__uni_is_white_space(0x0b));
    CHECK(!mlrt__uni_is_white_space(0x1c) && !mlrt__uni_is_white_space(0x200b) && !mlrt__uni_is_white_space(0x180e));
    /* strip: a class-0 Mn ends a run; kept marks carry their class */
    CHECK_INT(mlrt__uni_strip_class(0x301), MLRT__UNI_STRIP);
    CHECK_INT(mlrt__uni_strip_class(0x34f), MLRT__UNI_STRIP_ENDS_RUN);
    CHECK_INT(mlrt__uni_strip_class(0x1d165), 216);
    CHECK_INT(mlrt__uni_strip_class(0x1e944), 230);
    CHECK_INT(mlrt__uni_strip_class('a'), 0);
    /* NFD (9.0): recursive, Hangul, compatibility ideographs in both planes, nothing for later characters */
    struct { uint32_t cp; size_t n; uint32_t d[4]; } nfd[] = {
        {0xe9, 2, {0x65, 0x301}}, {0x1e09, 3, {0x63, 0x327, 0x301}}, {0x1f82, 4, {0x3b1, 0x313, 0x300, 0x345}},
        {0x344, 2, {0x308, 0x301}}, {0xd55c, 3, {0x1112, 0x1161, 0x11ab}}, {0xac00, 2, {0x1100, 0x1161}},
        {0xf900, 1, {0x8c48}}, {0xfa6c, 1, {0x242ee}}, {0x2f800, 1, {0x4e3d}}, {0x2fa1d, 1, {0x2a600}},
        {0x1d15e, 2, {0x1d157, 0x1d165}}, {0x212b, 2, {0x41, 0x30a}}, {0x130, 2, {0x49, 0x307}},
        {0xfb2c, 3, {0x5e9, 0x5bc, 0x5c1}}, {0x41, 1, {0x41}}, {0xfa0e, 1, {0xfa0e}}, {0x1e9e, 1, {0x1e9e}},
    };
    for (size_t i = 0; i < LEN(nfd); i++) {
        uint32_t out[MLRT__UNI_NFD_MAX];
        size_t n = mlrt__uni_nfd(nfd[i].cp, out);
        int ok = n == nfd[i].n;
        for (size_t k = 0; ok && k < n; k++) ok = out[k] == nfd[i].d[k];
        check_at(ok, __FILE__, __LINE__, "NFD of U+%04X", nfd[i].cp);
    }
    /* lowercase (17.0): not context-sensitive, one character (U+0130's second is the caller's) */
    static const uint32_t lower[][2] = {{'A', 'a'}, {0x3a3, 0x3c3}, {0x130, 'i'}, {0x1e9e, 0xdf}, {0x2126, 0x3c9}, {0x212a, 'k'},
                                        {0x1e921, 0x1e943}, {0x10400, 0x10428}, {0xc5, 0xe5}, {0x1c4, 0x1c6}, {0x1c5, 0x1c6},
                                        {0xa7ae, 0x26a}, {0x131, 0x131}, {0xdf, 0xdf}, {'1', '1'}, {0x2160, 0x2170}};
    for (size_t i = 0; i < LEN(lower); i++)
        check_at(mlrt__uni_lower(lower[i][0]) == lower[i][1], __FILE__, __LINE__, "lower(U+%04X) = U+%04X, not U+%04X", lower[i][0],
                 mlrt__uni_lower(lower[i][0]), lower[i][1]);
    /* Final_Sigma's classes (17.0; values from JavaScript's \p{Case_Ignorable} and \p{Cased}): 2 ignorable (also
     * when cased, as U+02B0), 1 cased, 0 neither; U+1734 and U+1171E were Mn in 8.0 and are neither now */
    static const uint32_t cases[][2] = {{'A', 1}, {'\'', 2}, {'1', 0}, {0x301, 2}, {0x2b0, 2}, {0x1734, 0}, {0x1171e, 0},
                                        {0x3a3, 1}, {0x3c2, 1}, {0x1d41a, 1}, {0xe0001, 2}, {0x10ffff, 0}, {0xad, 2},
                                        {0x13a0, 1}, {0x1e900, 1}, {0x20000, 0}, {0xfe0f, 2}, {0, 0}};
    for (size_t i = 0; i < LEN(cases); i++)
        check_at(mlrt__uni_case_class(cases[i][0]) == (int)cases[i][1], __FILE__, __LINE__, "case class of U+%04X: %d, not %u",
                 cases[i][0], mlrt__uni_case_class(cases[i][0]), cases[i][1]);
}

/* A tokenizer.json over a small vocabulary; extra: more members of the normalizer. */
static const char *const TEXT_VOCAB[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "don", "'", "t",
                                         "\xe2\x80\x99", "a", "##a", "b", "c", "d", "##d", "abc", "$", "5", "+", "e", "-", "mail",
                                         "\xe4\xb8\xad", "\xe6\x96\x87", "x", "y", "##y", "ab", "\xcf\x83\xce\xbf\xcf\x86\xce\xbf\xcf\x83",
                                         "i", "##stanbul", "istanbul", "[", "mask", "]", "\xef\xbd\x81", "\xef\xbc\x81", "\xef\xbd\x82"};
static bytes text_json(const char *normalizer, const char *truncation) {
    bytes b = {0};
    put_fmt(&b, "{\"version\":\"1.0\",\"truncation\":%s,\"padding\":null,\"added_tokens\":[", truncation ? truncation : "null");
    for (int i = 0; i < 5; i++)
        put_fmt(&b, "%s{\"id\":%d,\"content\":\"%s\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}",
                i ? "," : "", i, TEXT_VOCAB[i]);
    put_fmt(&b, "],\"normalizer\":%s,\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},", normalizer);
    put_str(&b, "\"post_processor\":{\"type\":\"BertProcessing\",\"sep\":[\"[SEP]\",3],\"cls\":[\"[CLS]\",2]},");
    put_str(&b, "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},");
    put_str(&b, "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":8,\"vocab\":{");
    for (size_t i = 0; i < LEN(TEXT_VOCAB); i++) {
        put_str(&b, i ? ",\"" : "\"");
        for (const char *s = TEXT_VOCAB[i]; *s; s++) put_fmt(&b, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
        put_fmt(&b, "\":%zu", i);
    }
    put_str(&b, "}}}");
    return done(b);
}

#define UNCASED "{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,\"strip_accents\":null,\"lowercase\":true}"

static mlrt_tokenizer *text_load(bytes json) {
    mlrt_file f = {"tokenizer.json", exact(json.p, json.n), json.n};
    mlrt_error e;
    mlrt_tokenizer *t = mlrt_tokenizer_load(&f, 1, &e);
    check_at(t != NULL, __FILE__, __LINE__, "load: %s", t ? "" : e.message);
    return t;
}

/* Encodes s and compares the ids with want (terminated by -1). */
static void text_expect(mlrt_tokenizer *t, const char *s, const int *want, int line) {
    mlrt_encoding enc;
    mlrt_error e;
    if (mlrt_tokenizer_encode(t, s, strlen(s), NULL, 0, NULL, &enc, &e)) {
        check_at(0, __FILE__, line, "encode \"%s\": %s", s, e.message);
        return;
    }
    size_t n = 0;
    while (want[n] >= 0) n++;
    int ok = enc.n == n;
    for (size_t i = 0; ok && i < n; i++) ok = enc.ids[i] == want[i] && enc.type_ids[i] == 0 && enc.attention_mask[i] == 1;
    char got[256] = "";
    for (size_t i = 0, k = 0; i < enc.n && k < 200; i++) k += (size_t)snprintf(got + k, sizeof got - k, "%d ", enc.ids[i]);
    check_at(ok, __FILE__, line, "encode \"%s\": got %s", s, got);
}
#define EXPECT(t, s, ...) text_expect(t, s, (const int[]){__VA_ARGS__, -1}, __LINE__)

/* decode, normalize, token and info on the small tokenizer, then free it */
static void text_other_calls(mlrt_tokenizer *t) {
    mlrt_error e;
    size_t n;
    const int32_t ids[] = {2, 5, 7, 9, 10, 4, 3};
    char *s = mlrt_tokenizer_decode(t, ids, LEN(ids), 0, &n, &e);
    CHECK_STR(s, "[CLS] hellos ' t [MASK] [SEP]"); /* cleanup works token by token */
    CHECK(s && n == strlen(s));
    mlrt_string_free(s);
    s = mlrt_tokenizer_decode(t, ids, LEN(ids), 1, NULL, &e);
    CHECK_STR(s, "hellos ' t");
    mlrt_string_free(s);
    const int32_t bad[] = {5, 41};
    CHECK(mlrt_tokenizer_decode(t, bad, 2, 0, NULL, &e) == NULL);
    CHECK_INT(e.code, MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "ids[1] = 41 is no token (ids are 0..40)");
    s = mlrt_tokenizer_normalize(t, "A\0\xc3\x89", 4, &n, &e);
    CHECK(s && n == 2 && memcmp(s, "ae", 3) == 0);
    mlrt_string_free(s);
    CHECK_STR(mlrt_tokenizer_token(t, 34), "istanbul");
    CHECK(mlrt_tokenizer_token(t, 41) == NULL && mlrt_tokenizer_token(t, -1) == NULL);
    CHECK_CONTAINS(mlrt_tokenizer_info_json(t), "\"vocabSize\":41,\"idCount\":41");
    mlrt_tokenizer_free(t);
}

static void test_text_engine_spec_cases(void) {
    mlrt_tokenizer *t = text_load(text_json(UNCASED, NULL));
    if (!t) return;
    EXPECT(t, "H\xc3\xa9llo W\xc3\xb6rld", 2, 5, 6, 3);                          /* accents stripped (null follows lowercase) */
    EXPECT(t, "\xc4\xb0stanbul", 2, 34, 3);                                      /* İ -> I -> i */
    EXPECT(t, "\xce\xa3\xce\x9f\xce\xa6\xce\x9f\xce\xa3", 2, 31, 3);              /* ΣΟΦΟΣ -> σοφοσ: no final sigma */
    EXPECT(t, "[CLS] hello [MASK]", 2, 2, 5, 4, 3);                              /* specials in the raw text */
    EXPECT(t, "hello[MASK]world", 2, 5, 4, 6, 3);
    EXPECT(t, "[mask]", 2, 35, 36, 37, 3);                                        /* case-sensitive */
    EXPECT(t, "don't don\xe2\x80\x99t", 2, 8, 9, 10, 8, 11, 10, 3);
    EXPECT(t, "$5 e-mail", 2, 19, 20, 22, 23, 24, 3);
    EXPECT(t, "a\xc2\x85" "b", 2, 30, 3);                                         /* U+0085 deleted: one word "ab" */
    EXPECT(t, "a\xef\xbf\xbd" "b a\xe2\x80\x8d" "b a\xc2\xad" "b", 2, 30, 30, 30, 3); /* U+FFFD, ZWJ, soft hyphen deleted */
    EXPECT(t, "a\xc2\xa0" "b x\xe2\x80\xa8y", 2, 12, 14, 27, 28, 3);               /* mapped to spaces */
    EXPECT(t, "abc\xe4\xb8\xad\xe6\x96\x87xy", 2, 18, 25, 26, 27, 29, 3);         /* CJK isolated inside a word */
    EXPECT(t, "x\xf0\xab\xa0\xa0y", 2, 1, 3);                                     /* U+2B820: in the gap, one word, [UNK] */
    EXPECT(t, "\xef\xbc\xa1\xef\xbc\x81\xef\xbd\x82", 2, 38, 39, 40, 3);          /* Ａ！ｂ: no NFKC, U+FF01 is Po */
    EXPECT(t, "aaaaaaaa", 2, 12, 13, 13, 13, 13, 13, 13, 13, 3);                  /* 8 chars: pieces */
    EXPECT(t, "aaaaaaaaa", 2, 1, 3);                                              /* 9 > max_input_chars_per_word */
    EXPECT(t, "abd helloq", 2, 30, 17, 1, 3);                                     /* a missing piece: the whole word is [UNK] */
    EXPECT(t, "", 2, 3);
    EXPECT(t, " \t\n\xe3\x80\x80 ", 2, 3);
    text_other_calls(t);
}


static void test_text_pairs_truncation_batch(void) {
    mlrt_tokenizer *t = text_load(text_json(UNCASED, "{\"max_length\":7,\"strategy\":\"LongestFirst\",\"stride\":0}"));
    if (!t) return;
    mlrt_encoding enc;
    mlrt_error e;
    /* single: 7 - 2 = 5 tokens, cut inside a word */
    CHECK_INT(mlrt_tokenizer_encode(t, "hello world hellos hellos", 25, NULL, 0, NULL, &enc, &e), MLRT_OK);
    CHECK(enc.n == 7 && enc.ids[4] == 7 && enc.ids[5] == 5 && enc.ids[6] == 3);
    /* pair: 7 - 3 = 4 for both, longest first */
    CHECK_INT(mlrt_tokenizer_encode(t, "a b c d e", 9, "x y", 3, NULL, &enc, &e), MLRT_OK);
    static const int32_t want[] = {2, 12, 14, 3, 27, 28, 3}, types[] = {0, 0, 0, 0, 1, 1, 1};
    CHECK(enc.n == 7 && memcmp(enc.ids, want, sizeof want) == 0 && memcmp(enc.type_ids, types, sizeof types) == 0);
    mlrt_encode_options o = {3, MLRT_TRUNCATION_DEFAULT, MLRT_PADDING_DEFAULT};
    CHECK_INT(mlrt_tokenizer_encode(t, "a", 1, "b", 1, &o, &enc, &e), MLRT_OK); /* 3 - 3: nothing of either */
    CHECK_INT(enc.n, 3);
    o.max_length = 2;
    CHECK_INT(mlrt_tokenizer_encode(t, "a", 1, "b", 1, &o, &enc, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "max_length 2 is less than the 3 special tokens of a pair");
    o = (mlrt_encode_options){0, MLRT_TRUNCATION_ONLY_SECOND, MLRT_PADDING_DEFAULT};
    CHECK_INT(mlrt_tokenizer_encode(t, "a b c d e f", 11, NULL, 0, &o, &enc, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "only_second needs a pair");
    /* a batch, padded to its longest, and not padded */
    const char texts[] = "hello" "a b c" "";
    const size_t ends[] = {5, 10, 10};
    mlrt_batch_encoding be;
    o = (mlrt_encode_options){0, MLRT_TRUNCATION_DEFAULT, MLRT_PADDING_LONGEST};
    CHECK_INT(mlrt_tokenizer_encode_batch(t, texts, ends, NULL, NULL, 3, &o, &be, &e), MLRT_OK);
    CHECK(be.rows == 3 && be.width == 5 && be.lengths[0] == 5 && be.lengths[2] == 5);
    CHECK(be.ids[5 + 4] == 3 && be.ids[0 + 3] == 0 && be.attention_mask[3] == 0 && be.attention_mask[2] == 1);
    o.padding = MLRT_PADDING_NONE;
    CHECK_INT(mlrt_tokenizer_encode_batch(t, texts, ends, NULL, NULL, 3, &o, &be, &e), MLRT_OK);
    CHECK(be.width == 5 && be.lengths[0] == 3 && be.lengths[1] == 5 && be.lengths[2] == 2);
    o.padding = MLRT_PADDING_MAX_LENGTH;
    o.max_length = 8;
    CHECK_INT(mlrt_tokenizer_encode_batch(t, texts, ends, NULL, NULL, 3, &o, &be, &e), MLRT_OK);
    CHECK(be.width == 8 && be.lengths[1] == 8);
    const size_t bad_ends[] = {5, 4, 10};
    CHECK_INT(mlrt_tokenizer_encode_batch(t, texts, bad_ends, NULL, NULL, 3, NULL, &be, &e), MLRT_ERR_INVALID_ARGUMENT);
    /* invalid UTF-8: the byte offset, the row */
    CHECK_INT(mlrt_tokenizer_encode(t, "ab\xff", 3, NULL, 0, NULL, &enc, &e), MLRT_ERR_INVALID_UTF8);
    CHECK_STR(e.message, "tokenizer: text is not valid UTF-8 at byte 2");
    const size_t ends2[] = {1, 3};
    CHECK_INT(mlrt_tokenizer_encode_batch(t, "a\xe2\x82", ends2, NULL, NULL, 2, NULL, &be, &e), MLRT_ERR_INVALID_UTF8);
    CHECK_STR(e.message, "tokenizer: text is not valid UTF-8 at byte 0 (batch row 1)");
    CHECK_INT(mlrt_tokenizer_encode(t, NULL, 3, NULL, 0, NULL, &enc, &e), MLRT_ERR_INVALID_ARGUMENT);
    CHECK_INT(mlrt_tokenizer_encode(NULL, "a", 1, NULL, 0, NULL, &enc, &e), MLRT_ERR_INVALID_ARGUMENT);
    mlrt_tokenizer_free(t);
    mlrt_tokenizer_free(NULL);
}

static void test_text_readers_refuse_every_prefix(void) {
    bytes json = text_json(UNCASED, NULL);
    mlrt_error e;
    for (size_t n = 0; n < json.n; n++) { /* ASan/LSan: no overread, no leak on any error path */
        mlrt_file f = {"tokenizer.json", exact(json.p, n), n};
        mlrt_tokenizer *t = mlrt_tokenizer_load(&f, 1, &e);
        CHECK(t == NULL);
        if (t) mlrt_tokenizer_free(t);
        else check_at((e.code == MLRT_ERR_INVALID_JSON || e.code == MLRT_ERR_INVALID_UTF8) && strncmp(e.message, "tokenizer.json: ", 16) == 0,
                      __FILE__, __LINE__,
                      "prefix %zu: %s", n, e.message);
    }
    /* every byte replaced by a quote, a digit, a brace: refused or loaded, never a crash or a leak */
    static const char subs[] = "\"0}]x";
    for (size_t n = 0; n < json.n; n += 3)
        for (size_t k = 0; k < sizeof subs - 1; k++) {
            uint8_t *c = (uint8_t *)exact(json.p, json.n);
            c[n] = (uint8_t)subs[k];
            mlrt_file f = {"tokenizer.json", c, json.n};
            mlrt_tokenizer *t = mlrt_tokenizer_load(&f, 1, &e);
            if (t) mlrt_tokenizer_free(t);
            else CHECK(e.code > MLRT_OK && e.code < MLRT_STATUS_COUNT_ && e.message[0]);
        }
}

static void test_text_vocab_txt(void) {
    bytes v = {0};
    for (size_t i = 0; i < LEN(TEXT_VOCAB); i++) put_fmt(&v, "%s%s\r\n", TEXT_VOCAB[i], i == 5 ? "  " : "");
    v = done(v);
    static const char config[] = "{\"do_lower_case\":false,\"model_max_length\":1e30,\"tokenizer_class\":\"BertTokenizerFast\"}";
    mlrt_file files[2] = {{"vocab.txt", exact(v.p, v.n), v.n}, {"tokenizer_config.json", exact(config, strlen(config)), strlen(config)}};
    mlrt_error e;
    mlrt_tokenizer *t = mlrt_tokenizer_load(files, 2, &e);
    CHECK(t != NULL);
    if (!t) return;
    EXPECT(t, "hello Hello", 2, 5, 1, 3); /* trailing spaces and \r dropped; cased */
    CHECK_CONTAINS(mlrt_tokenizer_info_json(t), "\"source\":\"vocab.txt\"");
    CHECK_CONTAINS(mlrt_tokenizer_info_json(t), "\"maxLength\":null");
    mlrt_tokenizer_free(t);
    for (size_t n = 0; n < v.n; n++) { /* prefixes: loaded (whole lines) or refused, without leaks */
        mlrt_file f = {"vocab.txt", exact(v.p, n), n};
        mlrt_tokenizer *p = mlrt_tokenizer_load(&f, 1, &e);
        if (p) mlrt_tokenizer_free(p);
        else CHECK((e.code == MLRT_ERR_BAD_HEADER || e.code == MLRT_ERR_INVALID_UTF8 || e.code == MLRT_ERR_DUPLICATE_KEY) &&
                   strncmp(e.message, "vocab.txt: ", 11) == 0);
    }
    mlrt_file none = {"config.json", (const uint8_t *)"{}", 2};
    CHECK(mlrt_tokenizer_load(&none, 1, &e) == NULL && e.code == MLRT_ERR_INVALID_ARGUMENT);
    mlrt_file twice[2] = {files[0], files[0]};
    CHECK(mlrt_tokenizer_load(twice, 2, &e) == NULL && e.code == MLRT_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "vocab.txt given twice");
}

/* Tokens made to collide in the readers' duplicate check (its hash set: 64 tokens in one slot of 128):
 * it falls back to sorting, and still finds a repeated line, or none. */
static void test_text_vocab_collisions(void) {
    for (int with_dup = 0; with_dup < 2; with_dup++) {
        bytes v = {0};
        put_str(&v, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
        char first[16] = "";
        for (unsigned k = 0, found = 0; found < 59; found++) {
            char tok[16];
            next_colliding_key("w", 128, 9, &k, tok);
            put_fmt(&v, "%s\n", tok);
            if (!found) memcpy(first, tok, sizeof tok);
        }
        if (with_dup) put_fmt(&v, "%s\n", first); /* line 65 repeats line 6 */
        v = done(v);
        mlrt_file f = {"vocab.txt", exact(v.p, v.n), v.n};
        mlrt_error e;
        mlrt_tokenizer *t = mlrt_tokenizer_load(&f, 1, &e);
        CHECK(with_dup ? t == NULL && e.code == MLRT_ERR_DUPLICATE_KEY : t != NULL);
        if (with_dup) CHECK_CONTAINS(e.message, "line 65 repeats line 6");
        mlrt_tokenizer_free(t);
    }
}

const test_case text_tests[] = {
    T(test_text_unicode_tables),
    T(test_text_engine_spec_cases),
    T(test_text_pairs_truncation_batch),
    T(test_text_readers_refuse_every_prefix),
    T(test_text_vocab_txt),
    T(test_text_vocab_collisions),
    {0},
};
