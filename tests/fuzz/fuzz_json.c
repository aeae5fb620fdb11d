/* Fuzz target: the JSON parser. Every accepted document is walked, serialized, re-parsed and
 * serialized again; the two serializations must match (a parse/print round trip is stable). */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/json.h"

static size_t walk(const ltx2_json *v) {
    size_t n = 1;
    switch (v->type) {
    case LTX2_JSON_STRING:
        if (v->str[v->str_len] != '\0') abort();
        n += v->str_len;
        break;
    case LTX2_JSON_ARRAY:
        for (size_t i = 0; i < v->count; i++) {
            if (ltx2_json_at(v, i) != &v->items[i]) abort();
            n += walk(&v->items[i]);
        }
        break;
    case LTX2_JSON_OBJECT:
        for (size_t i = 0; i < v->count; i++) {
            if (v->keys[i][v->key_lens[i]] != '\0') abort();
            if (strlen(v->keys[i]) == v->key_lens[i] && !ltx2_json_get(v, v->keys[i])) abort();
            n += walk(&v->items[i]);
        }
        break;
    case LTX2_JSON_NUMBER:
        if (v->is_int && (double)v->integer != v->number && v->integer != 0) abort();
        break;
    default: break;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_json_doc *doc = NULL;
    ltx2_status st = ltx2_json_parse(ctx, (const char *)data, size, "fuzz", &doc);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        walk(ltx2_json_root(doc));
        ltx2_sbuf a = {0}, b = {0};
        ltx2_sbuf_json_value(&a, ltx2_json_root(doc));
        ltx2_json_doc *doc2 = NULL;
        if (!a.oom) {
            if (ltx2_json_parse(ctx, a.buf, a.len, "fuzz reprint", &doc2) != LTX2_OK) {
                fprintf(stderr, "reprinted JSON does not parse: %s\n", ltx2_last_error(ctx));
                abort();
            }
            ltx2_sbuf_json_value(&b, ltx2_json_root(doc2));
            if (!b.oom && (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)) abort();
        }
        ltx2_json_free(doc2);
        ltx2_sbuf_free(&a);
        ltx2_sbuf_free(&b);
        ltx2_json_free(doc);
    }
    ltx2_context_free(ctx);
    return 0;
}
