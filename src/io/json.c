/* Strict RFC 8259 JSON parser into a read-only tree held in one arena per document, and the
 * ltx2_sbuf string builder writers use. Choices beyond the RFC (documented in json.h):
 *  - strings must be valid UTF-8; \u escapes must pair surrogates correctly;
 *  - a leading UTF-8 byte-order mark is skipped (some editors write one into config.json);
 *  - numbers that overflow a double are refused rather than turned into infinity;
 *  - duplicate object keys are kept in document order (ltx2_json_get returns the first one);
 *    callers for which duplicates are an error (safetensors headers) check for them.
 * Number text is converted with strtod, which assumes the "C" locale's '.' decimal point; the
 * library never calls setlocale. */
#include "io/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"

/* Arena chunks are at least this big so a typical header needs only a few mallocs. */
#define JSON_ARENA_CHUNK ((size_t)64 << 10)
/* Number tokens shorter than this are converted from a stack buffer. */
#define JSON_NUM_STACK_BUF 64

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} arena_chunk;

struct ltx2_json_doc {
    arena_chunk *chunks;
    ltx2_json root;
};

static void *arena_alloc(ltx2_json_doc *doc, size_t size, size_t align) {
    arena_chunk *c = doc->chunks;
    if (c) {
        size_t off = (c->used + align - 1) & ~(align - 1);
        if (off <= c->cap && size <= c->cap - off) {
            c->used = off + size;
            return c->data + off;
        }
    }
    size_t cap = size > JSON_ARENA_CHUNK ? size : JSON_ARENA_CHUNK;
    if (cap > SIZE_MAX - sizeof(arena_chunk)) return NULL;
    arena_chunk *n = malloc(sizeof(arena_chunk) + cap);
    if (!n) return NULL;
    n->next = doc->chunks;
    n->cap = cap;
    n->used = size;
    doc->chunks = n;
    return n->data;
}

typedef struct key_slot {
    const char *key;
    size_t len;
} key_slot;

typedef struct parser {
    ltx2_context *ctx;
    const char *label;
    const unsigned char *s;
    size_t len, pos;
    ltx2_json_doc *doc;
    ltx2_json *vals; /* scratch stack of finished children, copied to the arena on close */
    size_t nvals, capvals;
    key_slot *keys;
    size_t nkeys, capkeys;
    ltx2_status st;
} parser;

static void describe_byte(const parser *p, size_t pos, char *buf, size_t cap) {
    if (pos >= p->len) {
        snprintf(buf, cap, "end of input");
        return;
    }
    unsigned char c = p->s[pos];
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", c);
}

/* Records the first error only: "label: invalid JSON at byte N (line L, column C): msg". */
static ltx2_status perr(parser *p, size_t pos, ltx2_status st, const char *fmt, ...)
    LTX2_PRINTF(4, 5);
static ltx2_status perr(parser *p, size_t pos, ltx2_status st, const char *fmt, ...) {
    if (p->st != LTX2_OK) return p->st;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < p->len; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    p->st = LTX2_ERROR(p->ctx, st, "%s: invalid JSON at byte %zu (line %zu, column %zu): %s",
                       p->label, pos, line, col, msg);
    return p->st;
}

static ltx2_status expected(parser *p, const char *what) {
    char got[32];
    describe_byte(p, p->pos, got, sizeof(got));
    return perr(p, p->pos, LTX2_ERR_FORMAT, "expected %s, got %s", what, got);
}

static ltx2_status oom(parser *p) {
    return perr(p, p->pos, LTX2_ERR_OOM, "out of memory while parsing");
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hex_val(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at pos; returns -1 when they are not all hex or input ends. */
static long read_hex4(const parser *p, size_t pos) {
    if (pos + 4 > p->len) return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_val(p->s[pos + (size_t)i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at s (Unicode table 3-7), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* UTF-16 surrogates are not characters */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

size_t ltx2_utf8_invalid_at(const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq_len(s + i, n - i);
        if (k == 0) return i;
        i += k;
    }
    return n;
}

bool ltx2_utf8_valid(const char *text, size_t n) { return ltx2_utf8_invalid_at(text, n) == n; }

static size_t put_utf8(char *out, unsigned long cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* p->pos is at the opening quote. The decoded text is never longer than the raw text (every
 * escape shrinks or keeps its length), so one allocation of the raw length suffices. */
static ltx2_status parse_string(parser *p, const char **out, size_t *out_len) {
    size_t start = ++p->pos;
    size_t end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\') end++;
        end++;
    }
    if (end >= p->len) return perr(p, start - 1, LTX2_ERR_FORMAT, "unterminated string");
    char *dst = arena_alloc(p->doc, end - start + 1, 1);
    if (!dst) return oom(p);
    size_t n = 0, i = start;
    while (i < end) {
        unsigned char c = p->s[i];
        if (c < 0x20)
            return perr(p, i, LTX2_ERR_FORMAT,
                        "control character 0x%02x inside a string (must be escaped)", c);
        if (c >= 0x80) {
            size_t k = utf8_seq_len(p->s + i, p->len - i);
            if (k == 0 || i + k > end)
                return perr(p, i, LTX2_ERR_FORMAT, "invalid UTF-8 byte 0x%02x inside a string", c);
            memcpy(dst + n, p->s + i, k);
            n += k;
            i += k;
            continue;
        }
        if (c != '\\') {
            dst[n++] = (char)c;
            i++;
            continue;
        }
        unsigned char e = p->s[i + 1];
        switch (e) {
        case '"': dst[n++] = '"'; break;
        case '\\': dst[n++] = '\\'; break;
        case '/': dst[n++] = '/'; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            long cp = read_hex4(p, i + 2);
            if (cp < 0 || i + 6 > end)
                return perr(p, i, LTX2_ERR_FORMAT, "\\u must be followed by 4 hex digits");
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return perr(p, i, LTX2_ERR_FORMAT,
                            "lone low surrogate \\u%04lX (not preceded by a high surrogate)", cp);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = -1;
                if (i + 12 <= end && p->s[i + 6] == '\\' && p->s[i + 7] == 'u')
                    lo = read_hex4(p, i + 8);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return perr(p, i, LTX2_ERR_FORMAT,
                                "high surrogate \\u%04lX not followed by a \\uDC00-\\uDFFF low "
                                "surrogate", cp);
                unsigned long full = 0x10000 + (((unsigned long)cp - 0xD800) << 10) +
                                     ((unsigned long)lo - 0xDC00);
                n += put_utf8(dst + n, full);
                i += 12;
                continue;
            }
            n += put_utf8(dst + n, (unsigned long)cp);
            i += 6;
            continue;
        }
        default: {
            char got[32];
            describe_byte(p, i + 1, got, sizeof(got));
            return perr(p, i, LTX2_ERR_FORMAT, "invalid escape: expected one of \\\" \\\\ \\/ \\b "
                        "\\f \\n \\r \\t \\uXXXX, got %s after the backslash", got);
        }
        }
        i += 2;
    }
    dst[n] = '\0';
    p->pos = end + 1;
    *out = dst;
    *out_len = n;
    return LTX2_OK;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static ltx2_status parse_number(parser *p, ltx2_json *v) {
    size_t start = p->pos, i = p->pos;
    bool neg = false, is_int = true, fits = true;
    uint64_t mag = 0;
    if (i < p->len && p->s[i] == '-') {
        neg = true;
        i++;
    }
    if (i >= p->len || !is_digit(p->s[i])) {
        p->pos = i;
        return expected(p, "a digit");
    }
    if (p->s[i] == '0') {
        i++;
        if (i < p->len && is_digit(p->s[i]))
            return perr(p, i, LTX2_ERR_FORMAT, "leading zeros are not allowed in numbers");
    } else {
        while (i < p->len && is_digit(p->s[i])) {
            unsigned d = p->s[i] - '0';
            if (mag > (UINT64_MAX - d) / 10) fits = false;
            else mag = mag * 10 + d;
            i++;
        }
    }
    if (i < p->len && p->s[i] == '.') {
        is_int = false;
        i++;
        if (i >= p->len || !is_digit(p->s[i])) {
            p->pos = i;
            return expected(p, "a digit after the decimal point");
        }
        while (i < p->len && is_digit(p->s[i])) i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        is_int = false;
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-')) i++;
        if (i >= p->len || !is_digit(p->s[i])) {
            p->pos = i;
            return expected(p, "a digit in the exponent");
        }
        while (i < p->len && is_digit(p->s[i])) i++;
    }
    v->type = LTX2_JSON_NUMBER;
    /* int64 holds magnitudes up to 2^63 - 1, and 2^63 when negative. */
    if (is_int && fits && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        v->is_int = true;
        if (!neg) v->integer = (int64_t)mag;
        else if (mag == (uint64_t)INT64_MAX + 1) v->integer = INT64_MIN;
        else v->integer = -(int64_t)mag;
        v->number = (double)v->integer;
        if (neg && mag == 0) v->number = -0.0;
        p->pos = i;
        return LTX2_OK;
    }
    size_t n = i - start;
    char small[JSON_NUM_STACK_BUF];
    char *buf = n < sizeof(small) ? small : malloc(n + 1);
    if (!buf) return oom(p);
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    double d = strtod(buf, NULL);
    if (buf != small) free(buf);
    if (isinf(d))
        return perr(p, start, LTX2_ERR_FORMAT, "number %.*s is out of the range of a double",
                    (int)(n < 40 ? n : 40), (const char *)p->s + start);
    v->number = d;
    p->pos = i;
    return LTX2_OK;
}

static bool push_val(parser *p, const ltx2_json *v) {
    if (p->nvals == p->capvals) {
        size_t cap = p->capvals ? p->capvals * 2 : 64;
        ltx2_json *n = realloc(p->vals, cap * sizeof(*n));
        if (!n) return false;
        p->vals = n;
        p->capvals = cap;
    }
    p->vals[p->nvals++] = *v;
    return true;
}

static bool push_key(parser *p, const char *key, size_t len) {
    if (p->nkeys == p->capkeys) {
        size_t cap = p->capkeys ? p->capkeys * 2 : 64;
        key_slot *n = realloc(p->keys, cap * sizeof(*n));
        if (!n) return false;
        p->keys = n;
        p->capkeys = cap;
    }
    p->keys[p->nkeys].key = key;
    p->keys[p->nkeys].len = len;
    p->nkeys++;
    return true;
}

static ltx2_status parse_value(parser *p, ltx2_json *v, int depth);

/* Moves the children pushed since `base` into the arena as v->items (and keys for objects). */
static ltx2_status close_container(parser *p, ltx2_json *v, size_t base, size_t kbase) {
    size_t n = p->nvals - base;
    v->count = n;
    if (n) {
        v->items = arena_alloc(p->doc, n * sizeof(ltx2_json), alignof(ltx2_json));
        if (!v->items) return oom(p);
        memcpy(v->items, p->vals + base, n * sizeof(ltx2_json));
    }
    p->nvals = base;
    if (v->type == LTX2_JSON_OBJECT && n) {
        v->keys = arena_alloc(p->doc, n * sizeof(char *), alignof(char *));
        v->key_lens = arena_alloc(p->doc, n * sizeof(size_t), alignof(size_t));
        if (!v->keys || !v->key_lens) return oom(p);
        for (size_t i = 0; i < n; i++) {
            v->keys[i] = p->keys[kbase + i].key;
            v->key_lens[i] = p->keys[kbase + i].len;
        }
        p->nkeys = kbase;
    }
    return LTX2_OK;
}

static ltx2_status parse_array(parser *p, ltx2_json *v, int depth) {
    v->type = LTX2_JSON_ARRAY;
    size_t base = p->nvals;
    p->pos++; /* '[' */
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return close_container(p, v, base, p->nkeys);
    }
    for (;;) {
        ltx2_json item;
        LTX2_TRY(parse_value(p, &item, depth + 1));
        if (!push_val(p, &item)) return oom(p);
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return close_container(p, v, base, p->nkeys);
        }
        return expected(p, "',' or ']' after an array element");
    }
}

static ltx2_status parse_object(parser *p, ltx2_json *v, int depth) {
    v->type = LTX2_JSON_OBJECT;
    size_t base = p->nvals, kbase = p->nkeys;
    p->pos++; /* '{' */
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return close_container(p, v, base, kbase);
    }
    for (;;) {
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"') return expected(p, "a string key");
        const char *key;
        size_t klen;
        LTX2_TRY(parse_string(p, &key, &klen));
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') return expected(p, "':' after an object key");
        p->pos++;
        ltx2_json item;
        LTX2_TRY(parse_value(p, &item, depth + 1));
        if (!push_val(p, &item) || !push_key(p, key, klen)) return oom(p);
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return close_container(p, v, base, kbase);
        }
        return expected(p, "',' or '}' after an object member");
    }
}

static bool match_word(parser *p, const char *w) {
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return false;
    p->pos += n;
    return true;
}

static ltx2_status parse_value(parser *p, ltx2_json *v, int depth) {
    memset(v, 0, sizeof(*v));
    if (depth > LTX2_JSON_MAX_DEPTH)
        return perr(p, p->pos, LTX2_ERR_FORMAT, "nesting deeper than %d levels",
                    LTX2_JSON_MAX_DEPTH);
    skip_ws(p);
    if (p->pos >= p->len) return expected(p, "a JSON value");
    unsigned char c = p->s[p->pos];
    switch (c) {
    case '{': return parse_object(p, v, depth);
    case '[': return parse_array(p, v, depth);
    case '"':
        v->type = LTX2_JSON_STRING;
        return parse_string(p, &v->str, &v->str_len);
    case 't':
        if (!match_word(p, "true")) break;
        v->type = LTX2_JSON_BOOL;
        v->boolean = true;
        return LTX2_OK;
    case 'f':
        if (!match_word(p, "false")) break;
        v->type = LTX2_JSON_BOOL;
        return LTX2_OK;
    case 'n':
        if (!match_word(p, "null")) break;
        v->type = LTX2_JSON_NULL;
        return LTX2_OK;
    default:
        if (c == '-' || is_digit(c)) return parse_number(p, v);
        break;
    }
    return expected(p, "a JSON value (object, array, string, number, true, false or null)");
}

void ltx2_json_free(ltx2_json_doc *doc) {
    if (!doc) return;
    arena_chunk *c = doc->chunks;
    while (c) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(doc);
}

ltx2_status ltx2_json_parse(ltx2_context *ctx, const char *text, size_t len, const char *label,
                            ltx2_json_doc **out) {
    *out = NULL;
    if (!label) label = "JSON";
    if (!text && len) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL text", label);
    parser p = {.ctx = ctx, .label = label, .s = (const unsigned char *)text, .len = len};
    p.doc = calloc(1, sizeof(*p.doc));
    if (!p.doc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) p.pos = 3;
    ltx2_status st = parse_value(&p, &p.doc->root, 0);
    if (st == LTX2_OK) {
        skip_ws(&p);
        if (p.pos != p.len) st = expected(&p, "end of input after the top-level value");
    }
    free(p.vals);
    free(p.keys);
    if (st != LTX2_OK) {
        ltx2_json_free(p.doc);
        return st;
    }
    *out = p.doc;
    return LTX2_OK;
}

const ltx2_json *ltx2_json_root(const ltx2_json_doc *doc) { return doc ? &doc->root : NULL; }

const ltx2_json *ltx2_json_get(const ltx2_json *obj, const char *key) {
    if (!obj || obj->type != LTX2_JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < obj->count; i++)
        if (obj->key_lens[i] == n && memcmp(obj->keys[i], key, n) == 0) return &obj->items[i];
    return NULL;
}

const ltx2_json *ltx2_json_at(const ltx2_json *arr, size_t i) {
    if (!arr || arr->type != LTX2_JSON_ARRAY || i >= arr->count) return NULL;
    return &arr->items[i];
}

const char *ltx2_json_get_str(const ltx2_json *obj, const char *key) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    return v && v->type == LTX2_JSON_STRING ? v->str : NULL;
}

bool ltx2_json_get_int(const ltx2_json *obj, const char *key, int64_t *out) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v || v->type != LTX2_JSON_NUMBER || !v->is_int) return false;
    *out = v->integer;
    return true;
}

bool ltx2_json_get_num(const ltx2_json *obj, const char *key, double *out) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v || v->type != LTX2_JSON_NUMBER) return false;
    *out = v->number;
    return true;
}

bool ltx2_json_find_duplicate_key(const ltx2_json *obj, size_t *first, size_t *second) {
    if (!obj || obj->type != LTX2_JSON_OBJECT) return false;
    /* Quadratic, for small objects (config files); large ones are checked by sorting. */
    for (size_t j = 1; j < obj->count; j++)
        for (size_t i = 0; i < j; i++)
            if (obj->key_lens[i] == obj->key_lens[j] &&
                memcmp(obj->keys[i], obj->keys[j], obj->key_lens[i]) == 0) {
                if (first) *first = i;
                if (second) *second = j;
                return true;
            }
    return false;
}

/* ---- ltx2_sbuf ---- */

static bool sbuf_reserve(ltx2_sbuf *s, size_t extra) {
    if (s->oom) return false;
    if (extra > SIZE_MAX - s->len - 1) {
        s->oom = true;
        return false;
    }
    size_t need = s->len + extra + 1;
    if (need <= s->cap) return true;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *n = realloc(s->buf, cap);
    if (!n) {
        s->oom = true;
        return false;
    }
    s->buf = n;
    s->cap = cap;
    return true;
}

void ltx2_sbuf_append(ltx2_sbuf *s, const char *text, size_t n) {
    if (!sbuf_reserve(s, n)) return;
    if (n) memcpy(s->buf + s->len, text, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

void ltx2_sbuf_printf(ltx2_sbuf *s, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        s->oom = true;
    } else if (sbuf_reserve(s, (size_t)n)) {
        vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap2);
        s->len += (size_t)n;
    }
    va_end(ap2);
}

void ltx2_sbuf_json_string(ltx2_sbuf *s, const char *text, size_t n) {
    static const char hex[] = "0123456789abcdef";
    ltx2_sbuf_append(s, "\"", 1);
    size_t run = 0; /* bytes copied verbatim are appended in runs */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *esc = NULL;
        char ubuf[7];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                memcpy(ubuf, "\\u00", 4);
                ubuf[4] = hex[c >> 4];
                ubuf[5] = hex[c & 15];
                ubuf[6] = '\0';
                esc = ubuf;
            }
        }
        if (!esc) {
            run++;
            continue;
        }
        if (run) ltx2_sbuf_append(s, text + i - run, run);
        run = 0;
        ltx2_sbuf_append(s, esc, strlen(esc));
    }
    if (run) ltx2_sbuf_append(s, text + n - run, run);
    ltx2_sbuf_append(s, "\"", 1);
}

void ltx2_sbuf_json_value(ltx2_sbuf *s, const ltx2_json *v) {
    switch (v->type) {
    case LTX2_JSON_NULL: ltx2_sbuf_append(s, "null", 4); return;
    case LTX2_JSON_BOOL:
        if (v->boolean) ltx2_sbuf_append(s, "true", 4);
        else ltx2_sbuf_append(s, "false", 5);
        return;
    case LTX2_JSON_NUMBER:
        if (v->is_int) {
            ltx2_sbuf_printf(s, "%lld", (long long)v->integer);
        } else {
            /* The shortest of %.15g..%.17g that reads back to the same double (%.17g always
             * does), so 1e-06 stays "1e-06"; %g output is always valid JSON number text. */
            char num[40];
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(num, sizeof(num), "%.*g", prec, v->number);
                if (strtod(num, NULL) == v->number) break;
            }
            /* Keep non-integers non-integer on re-read: 100.0 prints "100.0", not "100". */
            if (!strpbrk(num, ".eE")) strcat(num, ".0");
            ltx2_sbuf_append(s, num, strlen(num));
        }
        return;
    case LTX2_JSON_STRING: ltx2_sbuf_json_string(s, v->str, v->str_len); return;
    case LTX2_JSON_ARRAY:
        ltx2_sbuf_append(s, "[", 1);
        for (size_t i = 0; i < v->count; i++) {
            if (i) ltx2_sbuf_append(s, ",", 1);
            ltx2_sbuf_json_value(s, &v->items[i]);
        }
        ltx2_sbuf_append(s, "]", 1);
        return;
    case LTX2_JSON_OBJECT:
        ltx2_sbuf_append(s, "{", 1);
        for (size_t i = 0; i < v->count; i++) {
            if (i) ltx2_sbuf_append(s, ",", 1);
            ltx2_sbuf_json_string(s, v->keys[i], v->key_lens[i]);
            ltx2_sbuf_append(s, ":", 1);
            ltx2_sbuf_json_value(s, &v->items[i]);
        }
        ltx2_sbuf_append(s, "}", 1);
        return;
    }
}

void ltx2_sbuf_free(ltx2_sbuf *s) {
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
    s->oom = false;
}

ltx2_status ltx2_json_parse_file(ltx2_context *ctx, const char *path, ltx2_json_doc **out) {
    char *text = NULL;
    size_t n = 0;
    LTX2_TRY(ltx2_file_read_all(ctx, path, &text, &n));
    const ltx2_status st = ltx2_json_parse(ctx, text, n, path, out);
    free(text);
    return st;
}
