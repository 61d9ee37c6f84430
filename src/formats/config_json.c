/* formats/config_json.c — the fields of JSON configuration files (config.json, sentence-transformers'
 * module files, tokenizer_config.json), each value checked, the message naming the file and the key. */
#include "formats.h"
#include <string.h>

/* Parses a JSON file that must be an object; doc->root is it. */
mlrt_status mlrt__cfg_object(const mlrt_file *f, mlrt__json_doc *doc, mlrt_error *err) {
    static const uint8_t none[1] = {0};
    mlrt_status st = mlrt__json_parse(f->bytes ? f->bytes : none, f->len, f->name, doc, err);
    if (!st && doc->root->type != MLRT__JSON_OBJECT) {
        st = mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, f->name, "expected a JSON object, got %s", mlrt__json_type_name(doc->root->type));
        mlrt__json_free(doc);
    }
    return st;
}

/* A field's value: absent keeps *out; present must be an integer in [lo, hi]. */
mlrt_status mlrt__cfg_uint(const mlrt__json *obj, const char *file, const char *key, uint64_t lo, uint64_t hi, uint32_t *out,
                           mlrt_error *err) {
    const mlrt__json *v = mlrt__json_get(obj, key);
    uint64_t x;
    if (!v) return MLRT_OK;
    if (!mlrt__json_u64(v, &x))
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "%s: expected a non-negative integer, got %s", key,
                             v->type == MLRT__JSON_NUMBER ? "a number with a sign, fraction or exponent" : mlrt__json_type_name(v->type));
    if (x < lo || x > hi)
        return mlrt__fail_in(err, MLRT_ERR_BAD_DIMENSIONS, file, "%s is %llu; it must be in %llu..%llu", key, (unsigned long long)x,
                             (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint32_t)x;
    return MLRT_OK;
}

mlrt_status mlrt__cfg_bool(const mlrt__json *obj, const char *file, const char *key, bool *out, mlrt_error *err) {
    const mlrt__json *v = mlrt__json_get(obj, key);
    if (!v) return MLRT_OK;
    if (v->type != MLRT__JSON_TRUE && v->type != MLRT__JSON_FALSE)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "%s: expected true or false, got %s", key, mlrt__json_type_name(v->type));
    *out = v->type == MLRT__JSON_TRUE;
    return MLRT_OK;
}

/* Every key of obj is one of keys (NULL-terminated), else BAD_HEADER naming the first that is not. */
mlrt_status mlrt__cfg_only_keys(const mlrt__json *obj, const char *file, const char *const *keys, mlrt_error *err) {
    for (const mlrt__json *k = obj->child; k; k = k->next) {
        int i = 0;
        while (keys[i] && strcmp(k->key, keys[i])) i++;
        if (!keys[i]) return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "unknown key '%s'", k->key);
    }
    return MLRT_OK;
}

/* A string field: absent gives NULL; present must be a string (null too when null_ok). */
mlrt_status mlrt__cfg_str(const mlrt__json *obj, const char *file, const char *key, bool null_ok, const char **out, mlrt_error *err) {
    const mlrt__json *v = mlrt__json_get(obj, key);
    *out = NULL;
    if (!v || (null_ok && v->type == MLRT__JSON_NULL)) return MLRT_OK;
    if (v->type != MLRT__JSON_STRING)
        return mlrt__fail_in(err, MLRT_ERR_BAD_HEADER, file, "%s: expected a string, got %s", key, mlrt__json_type_name(v->type));
    *out = v->str;
    return MLRT_OK;
}
