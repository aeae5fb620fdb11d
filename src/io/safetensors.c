/* Safetensors reader: maps the file read-only and validates the whole header before handing out
 * any tensor, so later code can trust every offset. Layout: u64 little-endian header length N,
 * N bytes of JSON (may be padded with trailing spaces), then the data section.
 * Where we differ from the reference Rust library: gaps between tensors and trailing bytes after
 * the last one are tolerated (they cannot make us read out of bounds); overlap is refused, as are
 * duplicate names, unknown entry keys and unknown dtypes. Names and metadata strings may not
 * contain NUL bytes (we hand them out as C strings). */
#include "io/safetensors.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/file.h"
#include "io/json.h"

/* Names longer than this are cut in error messages so the expected-vs-got part still fits. */
#define ST_NAME_IN_MSG 200

/* A file's mapping, shared by the file and whatever retained it (ltx2_st_mapping_retain): the
 * last release unmaps. Loads are single-threaded, but a release may come from any thread. */
struct ltx2_st_mapping {
    ltx2_file_map map;
    atomic_int refs;
};

typedef struct st_impl {
    ltx2_st_mapping *mapping; /* NULL for ltx2_st_open_memory */
    ltx2_json_doc *doc;
} st_impl;

ltx2_st_mapping *ltx2_st_mapping_retain(const ltx2_st_file *f) {
    st_impl *impl = f ? f->impl_ : NULL;
    if (!impl || !impl->mapping) return NULL;
    atomic_fetch_add(&impl->mapping->refs, 1);
    return impl->mapping;
}

void ltx2_st_mapping_release(ltx2_st_mapping *m) {
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    ltx2_file_map_close(&m->map);
    free(m);
}

static const char *json_type_name(ltx2_json_type t) {
    switch (t) {
    case LTX2_JSON_NULL: return "null";
    case LTX2_JSON_BOOL: return "a boolean";
    case LTX2_JSON_NUMBER: return "a number";
    case LTX2_JSON_STRING: return "a string";
    case LTX2_JSON_ARRAY: return "an array";
    case LTX2_JSON_OBJECT: return "an object";
    }
    return "?";
}

static uint64_t read_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int cmp_tensor_name(const void *a, const void *b) {
    return strcmp(((const ltx2_st_tensor *)a)->name, ((const ltx2_st_tensor *)b)->name);
}

static int cmp_meta_key(const void *a, const void *b) {
    return strcmp(((const ltx2_st_meta *)a)->key, ((const ltx2_st_meta *)b)->key);
}

static int cmp_tensor_begin(const void *a, const void *b) {
    const ltx2_st_tensor *x = *(const ltx2_st_tensor *const *)a;
    const ltx2_st_tensor *y = *(const ltx2_st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static ltx2_status parse_metadata(ltx2_context *ctx, ltx2_st_file *f, const ltx2_json *m) {
    const char *label = f->path;
    if (m->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: __metadata__ must be an object of string to string, got %s", label,
                          json_type_name(m->type));
    if (m->count == 0) return LTX2_OK;
    f->meta = calloc(m->count, sizeof(*f->meta));
    if (!f->meta) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
    for (size_t i = 0; i < m->count; i++) {
        const ltx2_json *v = &m->items[i];
        if (strlen(m->keys[i]) != m->key_lens[i])
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: __metadata__ key contains a NUL byte",
                              label);
        if (v->type != LTX2_JSON_STRING)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: __metadata__ value for '%.*s' must be a string, got %s", label,
                              ST_NAME_IN_MSG, m->keys[i], json_type_name(v->type));
        if (strlen(v->str) != v->str_len)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: __metadata__ value for '%.*s' contains a NUL byte", label,
                              ST_NAME_IN_MSG, m->keys[i]);
        f->meta[i].key = m->keys[i];
        f->meta[i].value = v->str;
    }
    f->n_meta = m->count;
    ltx2_st_meta *sorted = malloc(m->count * sizeof(*sorted));
    if (!sorted) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
    memcpy(sorted, f->meta, m->count * sizeof(*sorted));
    qsort(sorted, m->count, sizeof(*sorted), cmp_meta_key);
    for (size_t i = 1; i < m->count; i++) {
        if (strcmp(sorted[i - 1].key, sorted[i].key) == 0) {
            ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                        "%s: __metadata__ key '%.*s' appears more than once",
                                        label, ST_NAME_IN_MSG, sorted[i].key);
            free(sorted);
            return st;
        }
    }
    free(sorted);
    return LTX2_OK;
}

/* Reads a JSON integer that must be >= 0; false otherwise. */
static bool json_uint(const ltx2_json *v, uint64_t *out) {
    if (!v || v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < 0) return false;
    *out = (uint64_t)v->integer;
    return true;
}

static ltx2_status parse_entry(ltx2_context *ctx, const ltx2_st_file *f, const char *name,
                               const ltx2_json *e, uint64_t data_size, ltx2_st_tensor *t) {
    const char *label = f->path;
    const int nl = ST_NAME_IN_MSG;
    if (e->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s' must be an object with dtype, shape and "
                          "data_offsets, got %s", label, nl, name, json_type_name(e->type));
    const ltx2_json *jd = NULL, *js = NULL, *jo = NULL;
    for (size_t i = 0; i < e->count; i++) {
        const char *k = e->keys[i];
        size_t kl = e->key_lens[i];
        const ltx2_json **slot = NULL;
        if (kl == 5 && memcmp(k, "dtype", 5) == 0) slot = &jd;
        else if (kl == 5 && memcmp(k, "shape", 5) == 0) slot = &js;
        else if (kl == 12 && memcmp(k, "data_offsets", 12) == 0) slot = &jo;
        if (!slot)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: tensor '%.*s' has unknown key '%.*s' (expected only dtype, "
                              "shape, data_offsets)", label, nl, name, nl, k);
        if (*slot)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor '%.*s' has key '%s' twice", label,
                              nl, name, k);
        *slot = &e->items[i];
    }
    if (!jd || !js || !jo)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor '%.*s' is missing '%s'", label, nl,
                          name, !jd ? "dtype" : !js ? "shape" : "data_offsets");

    if (jd->type != LTX2_JSON_STRING)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor '%.*s': dtype must be a string, got %s",
                          label, nl, name, json_type_name(jd->type));
    if (!ltx2_dtype_from_st_name(jd->str, jd->str_len, &t->dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE,
                          "%s: tensor '%.*s' has dtype '%.*s', which ltx2c does not support "
                          "(supported: F32 F16 BF16 F8_E4M3 F8_E5M2 F64 I64 I32 I16 I8 U8 BOOL)",
                          label, nl, name, 32, jd->str);

    if (js->type != LTX2_JSON_ARRAY)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s': shape must be an array of integers, got %s", label,
                          nl, name, json_type_name(js->type));
    if (js->count > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: tensor '%.*s' has %zu dimensions, at most %d "
                          "are supported", label, nl, name, js->count, LTX2_MAX_DIMS);
    t->ndim = (int)js->count;
    /* The product of the non-zero dims must fit int64 even when another dim is 0, because
     * strides are computed from it. */
    uint64_t nonzero_prod = 1;
    bool any_zero = false;
    for (size_t i = 0; i < js->count; i++) {
        uint64_t d;
        if (!json_uint(&js->items[i], &d))
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "%s: tensor '%.*s': shape[%zu] must be a non-negative integer", label,
                              nl, name, i);
        t->shape[i] = (int64_t)d;
        if (d == 0) {
            any_zero = true;
            continue;
        }
        if (nonzero_prod > (uint64_t)INT64_MAX / d)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "%s: tensor '%.*s': element count of its shape overflows int64", label,
                              nl, name);
        nonzero_prod *= d;
    }
    uint64_t numel = any_zero ? 0 : nonzero_prod;
    uint64_t item = ltx2_dtype_size(t->dtype);
    char shape_buf[256];
    ltx2_shape_str(t->shape, t->ndim, shape_buf, sizeof(shape_buf));
    if (item && numel > UINT64_MAX / item)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: tensor '%.*s': shape %s x %llu bytes overflows",
                          label, nl, name, shape_buf, (unsigned long long)item);
    uint64_t nbytes = numel * item;

    if (jo->type != LTX2_JSON_ARRAY || jo->count != 2)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s': data_offsets must be [begin, end], got %s%s", label,
                          nl, name, json_type_name(jo->type),
                          jo->type == LTX2_JSON_ARRAY ? " of another length" : "");
    if (!json_uint(&jo->items[0], &t->begin) || !json_uint(&jo->items[1], &t->end))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s': data_offsets must be non-negative integers", label,
                          nl, name);
    if (t->begin > t->end)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s': data_offsets [%llu, %llu] has begin > end", label, nl,
                          name, (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > data_size)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: tensor '%.*s': data_offsets [%llu, %llu] end past the data section "
                          "of %llu bytes (file truncated?)", label, nl, name,
                          (unsigned long long)t->begin, (unsigned long long)t->end,
                          (unsigned long long)data_size);
    if (t->end - t->begin != nbytes)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "%s: tensor '%.*s' has shape %s (%llu x %llu bytes = %llu) but "
                          "data_offsets span %llu bytes", label, nl, name, shape_buf,
                          (unsigned long long)numel, (unsigned long long)item,
                          (unsigned long long)nbytes, (unsigned long long)(t->end - t->begin));
    return LTX2_OK;
}

static ltx2_status check_overlap(ltx2_context *ctx, const ltx2_st_file *f) {
    if (f->n_tensors < 2) return LTX2_OK;
    const ltx2_st_tensor **by_off = malloc(f->n_tensors * sizeof(*by_off));
    if (!by_off) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", f->path);
    size_t n = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (f->tensors[i].end > f->tensors[i].begin) by_off[n++] = &f->tensors[i];
    qsort(by_off, n, sizeof(*by_off), cmp_tensor_begin);
    ltx2_status st = LTX2_OK;
    for (size_t i = 1; i < n; i++) {
        const ltx2_st_tensor *a = by_off[i - 1], *b = by_off[i];
        if (b->begin < a->end) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                            "%s: tensors '%.*s' [%llu, %llu) and '%.*s' [%llu, %llu) overlap",
                            f->path, ST_NAME_IN_MSG, a->name, (unsigned long long)a->begin,
                            (unsigned long long)a->end, ST_NAME_IN_MSG, b->name,
                            (unsigned long long)b->begin, (unsigned long long)b->end);
            break;
        }
    }
    free(by_off);
    return st;
}

static ltx2_status parse_file(ltx2_context *ctx, ltx2_st_file *f, const unsigned char *buf,
                              uint64_t size) {
    const char *label = f->path;
    st_impl *impl = f->impl_;
    if (size < 8)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: file is %llu bytes, too short for the 8-byte header length", label,
                          (unsigned long long)size);
    uint64_t n = read_le64(buf);
    if (n > LTX2_ST_MAX_HEADER)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: header length %llu exceeds the limit of %llu bytes (not a "
                          "safetensors file, or corrupt)", label, (unsigned long long)n,
                          (unsigned long long)LTX2_ST_MAX_HEADER);
    if (n > size - 8)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: header length %llu but only %llu bytes follow the length field "
                          "(file size %llu; truncated?)", label, (unsigned long long)n,
                          (unsigned long long)(size - 8), (unsigned long long)size);
    f->header_len = n;
    uint64_t data_size = size - 8 - n;

    char jlabel[LTX2_ERROR_CAP / 2];
    snprintf(jlabel, sizeof(jlabel), "%s header", label);
    LTX2_TRY(ltx2_json_parse(ctx, (const char *)buf + 8, (size_t)n, jlabel, &impl->doc));
    const ltx2_json *root = ltx2_json_root(impl->doc);
    if (root->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: header must be a JSON object, got %s", label,
                          json_type_name(root->type));

    size_t n_meta_keys = 0;
    for (size_t i = 0; i < root->count; i++)
        if (strcmp(root->keys[i], "__metadata__") == 0 && root->key_lens[i] == 12) n_meta_keys++;
    if (n_meta_keys > 1)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: __metadata__ appears more than once", label);
    size_t n_tensors = root->count - n_meta_keys;
    if (n_tensors) {
        f->tensors = calloc(n_tensors, sizeof(*f->tensors));
        if (!f->tensors) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", label);
    }
    const unsigned char *data = buf + 8 + n;
    for (size_t i = 0; i < root->count; i++) {
        const char *name = root->keys[i];
        if (strlen(name) != root->key_lens[i])
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: a tensor name contains a NUL byte ('%.*s...')", label,
                              ST_NAME_IN_MSG, name);
        if (root->key_lens[i] == 12 && strcmp(name, "__metadata__") == 0) {
            LTX2_TRY(parse_metadata(ctx, f, &root->items[i]));
            continue;
        }
        ltx2_st_tensor *t = &f->tensors[f->n_tensors];
        t->name = name;
        LTX2_TRY(parse_entry(ctx, f, name, &root->items[i], data_size, t));
        t->data = data + t->begin;
        f->n_tensors++;
    }
    if (f->n_tensors > 1) qsort(f->tensors, f->n_tensors, sizeof(*f->tensors), cmp_tensor_name);
    for (size_t i = 1; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor name '%.*s' appears more than once",
                              label, ST_NAME_IN_MSG, f->tensors[i].name);
    return check_overlap(ctx, f);
}

static ltx2_status new_file(ltx2_context *ctx, const char *path, ltx2_st_file **out) {
    ltx2_st_file *f = calloc(1, sizeof(*f));
    st_impl *impl = calloc(1, sizeof(*impl));
    size_t n = strlen(path) + 1;
    char *p = malloc(n);
    if (!f || !impl || !p) {
        free(f);
        free(impl);
        free(p);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    }
    memcpy(p, path, n);
    f->path = p;
    f->impl_ = impl;
    *out = f;
    return LTX2_OK;
}

ltx2_status ltx2_st_open_memory(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                                ltx2_st_file **out) {
    *out = NULL;
    if (!label) label = "<memory>";
    if (!buf && size) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL buffer", label);
    ltx2_st_file *f;
    LTX2_TRY(new_file(ctx, label, &f));
    f->file_size = size;
    ltx2_status st = parse_file(ctx, f, buf, size);
    if (st != LTX2_OK) {
        ltx2_st_close(f);
        return st;
    }
    *out = f;
    return LTX2_OK;
}

ltx2_status ltx2_st_open(ltx2_context *ctx, const char *path, ltx2_st_file **out) {
    *out = NULL;
    ltx2_st_file *f;
    LTX2_TRY(new_file(ctx, path, &f));
    st_impl *impl = f->impl_;
    impl->mapping = calloc(1, sizeof(*impl->mapping));
    if (!impl->mapping) {
        ltx2_st_close(f);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    }
    atomic_init(&impl->mapping->refs, 1);
    ltx2_status st = ltx2_file_map_open(ctx, path, &impl->mapping->map);
    if (st == LTX2_OK) {
        f->file_size = impl->mapping->map.size;
        st = parse_file(ctx, f, impl->mapping->map.data, impl->mapping->map.size);
    }
    if (st != LTX2_OK) {
        ltx2_st_close(f);
        return st;
    }
    *out = f;
    return LTX2_OK;
}

void ltx2_st_close(ltx2_st_file *f) {
    if (!f) return;
    st_impl *impl = f->impl_;
    if (impl) {
        ltx2_json_free(impl->doc);
        ltx2_st_mapping_release(impl->mapping);
        free(impl);
    }
    free(f->tensors);
    free(f->meta);
    free(f->path);
    free(f);
}

const ltx2_st_tensor *ltx2_st_find(const ltx2_st_file *f, const char *name) {
    if (!f || !name) return NULL;
    size_t lo = 0, hi = f->n_tensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->tensors[mid].name, name);
        if (c == 0) return &f->tensors[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const char *ltx2_st_meta_get(const ltx2_st_file *f, const char *key) {
    if (!f || !key) return NULL;
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}

ltx2_tensor ltx2_st_view(const ltx2_st_tensor *t) {
    return ltx2_tensor_make((void *)t->data, t->dtype, t->ndim, t->shape);
}

ltx2_status ltx2_st_meta_json(ltx2_context *ctx, const ltx2_st_file *f, const char *key, const char *why,
                              ltx2_json_doc **out) {
    *out = NULL;
    if (!f) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "metadata \"%s\": NULL file", key);
    const char *label = f->path ? f->path : "checkpoint";
    const char *text = ltx2_st_meta_get(f, key);
    if (!text) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: no __metadata__ \"%s\" (%s)", label, key, why);
    if (ltx2_json_parse(ctx, text, strlen(text), "metadata config", out) != LTX2_OK)
        return ltx2_error_prefix(ctx, "%s", label);
    return LTX2_OK;
}

float *ltx2_st_read_f32(ltx2_context *ctx, const ltx2_st_file *f, const char *name, int64_t *numel) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    if (!t) {
        LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: no tensor '%s'", f->path ? f->path : "safetensors", name);
        return NULL;
    }
    ltx2_tensor v = ltx2_st_view(t);
    const int64_t n = ltx2_tensor_numel(&v);
    float *buf = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!buf) {
        LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: no memory for tensor '%s' (%lld floats)", f->path ? f->path : "safetensors",
                   name, (long long)n);
        return NULL;
    }
    if (ltx2_convert(ctx, buf, LTX2_F32, t->data, t->dtype, (size_t)n) != LTX2_OK) {
        free(buf);
        return NULL;
    }
    if (numel) *numel = n;
    return buf;
}

float *ltx2_st_tensor_to_ndhwc(ltx2_context *ctx, const ltx2_st_tensor *t, int64_t shape_out[5]) {
    if (!t || t->ndim != 5) {
        LTX2_ERROR(ctx, t ? LTX2_ERR_SHAPE : LTX2_ERR_NOT_FOUND, "NCDHW tensor '%s': %s", t ? t->name : "?",
                   t ? "not 5-D" : "missing");
        return NULL;
    }
    const int64_t B = t->shape[0], C = t->shape[1], V = t->shape[2] * t->shape[3] * t->shape[4], n = B * C * V;
    float *src = malloc((size_t)(n ? n : 1) * sizeof(float)), *dst = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!src || !dst) {
        free(src);
        free(dst);
        LTX2_ERROR(ctx, LTX2_ERR_OOM, "NCDHW tensor '%s': no memory for %lld floats", t->name, (long long)n);
        return NULL;
    }
    if (ltx2_convert(ctx, src, LTX2_F32, t->data, t->dtype, (size_t)n) != LTX2_OK) {
        free(src);
        free(dst);
        return NULL;
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < V; i++) dst[(b * V + i) * C + c] = src[(b * C + c) * V + i];
    free(src);
    shape_out[0] = B, shape_out[1] = t->shape[2], shape_out[2] = t->shape[3], shape_out[3] = t->shape[4];
    shape_out[4] = C;
    return dst;
}
