/* A small strict JSON (RFC 8259) parser into a read-only tree, plus a growable string buffer with
 * JSON string escaping for writers. Used for safetensors headers, their `config` metadata string,
 * diffusers config.json / index files, npy headers are NOT JSON (see npy.c). */
#ifndef LTX2_IO_JSON_H
#define LTX2_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

/* Nesting deeper than this is refused, so hostile input cannot exhaust the stack. */
#define LTX2_JSON_MAX_DEPTH 128

typedef enum ltx2_json_type {
    LTX2_JSON_NULL = 0,
    LTX2_JSON_BOOL,
    LTX2_JSON_NUMBER,
    LTX2_JSON_STRING,
    LTX2_JSON_ARRAY,
    LTX2_JSON_OBJECT
} ltx2_json_type;

typedef struct ltx2_json ltx2_json;
struct ltx2_json {
    ltx2_json_type type;
    bool boolean;
    double number;
    bool is_int;        /* number written without fraction/exponent and fits int64 */
    int64_t integer;    /* valid when is_int */
    const char *str;    /* STRING: decoded UTF-8, NUL-terminated (may contain NULs: use str_len) */
    size_t str_len;
    size_t count;       /* ARRAY/OBJECT: number of items */
    ltx2_json *items;   /* ARRAY/OBJECT: values, in document order */
    const char **keys;  /* OBJECT: decoded keys, parallel to items */
    size_t *key_lens;
};

typedef struct ltx2_json_doc ltx2_json_doc;

/* Parses text[0..len) (need not be NUL-terminated) strictly per RFC 8259: strings must be valid
 * UTF-8 and \u surrogates must pair; numbers beyond double range are refused; anything but
 * whitespace after the value is refused; a leading UTF-8 BOM is skipped. The whole tree lives in
 * one arena owned by the doc. Errors name the byte offset, line:column and what was expected.
 * `label` names the source in messages (e.g. "model.safetensors header"). */
ltx2_status ltx2_json_parse(ltx2_context *ctx, const char *text, size_t len, const char *label,
                            ltx2_json_doc **out);
const ltx2_json *ltx2_json_root(const ltx2_json_doc *doc);
void ltx2_json_free(ltx2_json_doc *doc);
/* The file at path read whole and parsed (the path labels its errors), e.g. a config.json. */
ltx2_status ltx2_json_parse_file(ltx2_context *ctx, const char *path, ltx2_json_doc **out);

/* Lookups return NULL when absent or of another type. */
const ltx2_json *ltx2_json_get(const ltx2_json *obj, const char *key);
const ltx2_json *ltx2_json_at(const ltx2_json *arr, size_t i);
const char *ltx2_json_get_str(const ltx2_json *obj, const char *key); /* NULL unless a string */
bool ltx2_json_get_int(const ltx2_json *obj, const char *key, int64_t *out);
bool ltx2_json_get_num(const ltx2_json *obj, const char *key, double *out);

/* Duplicate keys are kept in document order and ltx2_json_get returns the first. Callers that
 * must refuse duplicates ask here: true when two keys are equal, with their indices (quadratic:
 * meant for small objects; sort the keys for large ones). */
bool ltx2_json_find_duplicate_key(const ltx2_json *obj, size_t *first, size_t *second);

/* True when text[0..n) is well-formed UTF-8 (no overlongs, surrogates or code points above
 * U+10FFFF). Writers check names with it so they never produce a file this parser refuses. */
bool ltx2_utf8_valid(const char *text, size_t n);
/* The offset of the first byte that breaks UTF-8 (overlong forms, surrogates and code points past
 * U+10FFFF included), or n when text[0, n) is valid. */
size_t ltx2_utf8_invalid_at(const char *text, size_t n);

/* Growable NUL-terminated string buffer. On allocation failure `oom` is set and appends stop. */
typedef struct ltx2_sbuf {
    char *buf;
    size_t len, cap;
    bool oom;
} ltx2_sbuf;
void ltx2_sbuf_append(ltx2_sbuf *s, const char *text, size_t n);
void ltx2_sbuf_printf(ltx2_sbuf *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends "text" quoted and escaped as a JSON string. */
void ltx2_sbuf_json_string(ltx2_sbuf *s, const char *text, size_t n);
/* Appends v as compact JSON: integers exactly, other numbers in the shortest %g form that reads
 * back to the same double (with ".0" added when that form looks like an integer), so printing
 * and re-parsing is stable. */
void ltx2_sbuf_json_value(ltx2_sbuf *s, const ltx2_json *v);
void ltx2_sbuf_free(ltx2_sbuf *s);

#endif
