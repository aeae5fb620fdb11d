/* Safetensors writer. The header lists `__metadata__` first and then tensors sorted by name; the
 * data section is laid out like the reference library does it: by item size (largest first),
 * then by name, with no gaps, so every tensor starts at a multiple of its own item size. The
 * header is padded with spaces so the data section starts 8-byte aligned. Written to a temp file
 * and renamed, so a failed write leaves nothing behind. A tensor without data is zeros, left as a
 * hole. */
#include "io/safetensors.h"

#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"
#include "io/json.h"

/* The data section starts at a multiple of this (8 + header length), as the reference writer does. */
#define ST_DATA_ALIGN 8

typedef struct st_entry {
    char *name;
    ltx2_tensor t;
    uint64_t begin, end;
} st_entry;

struct ltx2_st_writer {
    st_entry *entries;
    size_t n, cap;
    ltx2_st_meta *meta; /* owned copies */
    size_t n_meta, cap_meta;
};

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

ltx2_status ltx2_st_writer_create(ltx2_context *ctx, ltx2_st_writer **out) {
    *out = calloc(1, sizeof(**out));
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
    return LTX2_OK;
}

void ltx2_st_writer_free(ltx2_st_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) free(w->entries[i].name);
    for (size_t i = 0; i < w->n_meta; i++) {
        free((char *)w->meta[i].key);
        free((char *)w->meta[i].value);
    }
    free(w->entries);
    free(w->meta);
    free(w);
}

ltx2_status ltx2_st_writer_add(ltx2_context *ctx, ltx2_st_writer *w, const char *name,
                               const ltx2_tensor *t) {
    if (!w || !name || !t)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "safetensors writer: NULL argument");
    if (name[0] == '\0' || strcmp(name, "__metadata__") == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "safetensors writer: tensor name '%s' is not allowed", name);
    if (!ltx2_utf8_valid(name, strlen(name)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "safetensors writer: tensor name '%s' is not valid UTF-8", name);
    if (t->device != LTX2_DEVICE_CPU)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "safetensors writer: tensor '%s' is not on the CPU", name);
    if ((unsigned)t->dtype >= LTX2_DTYPE_COUNT)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "safetensors writer: tensor '%s' has dtype %d",
                          name, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "safetensors writer: tensor '%s' has ndim %d",
                          name, t->ndim);
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "safetensors writer: tensor '%s' has negative shape[%d] = %lld", name,
                              i, (long long)t->shape[i]);
    if (!ltx2_tensor_is_contiguous(t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "safetensors writer: tensor '%s' is not contiguous", name);
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->entries[i].name, name) == 0)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "safetensors writer: tensor '%s' added twice", name);
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        st_entry *n = realloc(w->entries, cap * sizeof(*n));
        if (!n) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
        w->entries = n;
        w->cap = cap;
    }
    st_entry *e = &w->entries[w->n];
    memset(e, 0, sizeof(*e));
    e->name = dup_str(name);
    if (!e->name) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
    e->t = *t;
    w->n++;
    return LTX2_OK;
}

ltx2_status ltx2_st_writer_set_meta(ltx2_context *ctx, ltx2_st_writer *w, const char *key,
                                    const char *value) {
    if (!w || !key || !value)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "safetensors writer: NULL metadata argument");
    if (!ltx2_utf8_valid(key, strlen(key)) || !ltx2_utf8_valid(value, strlen(value)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "safetensors writer: metadata '%s' is not valid UTF-8", key);
    char *v = dup_str(value);
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
    for (size_t i = 0; i < w->n_meta; i++) {
        if (strcmp(w->meta[i].key, key) == 0) {
            free((char *)w->meta[i].value);
            w->meta[i].value = v;
            return LTX2_OK;
        }
    }
    if (w->n_meta == w->cap_meta) {
        size_t cap = w->cap_meta ? w->cap_meta * 2 : 8;
        ltx2_st_meta *n = realloc(w->meta, cap * sizeof(*n));
        if (!n) {
            free(v);
            return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
        }
        w->meta = n;
        w->cap_meta = cap;
    }
    char *k = dup_str(key);
    if (!k) {
        free(v);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "safetensors writer: out of memory");
    }
    w->meta[w->n_meta].key = k;
    w->meta[w->n_meta].value = v;
    w->n_meta++;
    return LTX2_OK;
}

static int cmp_entry_name(const void *a, const void *b) {
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int cmp_entry_layout(const void *a, const void *b) {
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    size_t sx = ltx2_dtype_size(x->t.dtype), sy = ltx2_dtype_size(y->t.dtype);
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->name, y->name);
}

ltx2_status ltx2_st_writer_write(ltx2_context *ctx, ltx2_st_writer *w, const char *path) {
    if (!w || !path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "safetensors writer: NULL argument");
    if (w->n > 1) qsort(w->entries, w->n, sizeof(*w->entries), cmp_entry_name);

    st_entry **layout = malloc((w->n ? w->n : 1) * sizeof(*layout));
    if (!layout) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    for (size_t i = 0; i < w->n; i++) layout[i] = &w->entries[i];
    if (w->n > 1) qsort(layout, w->n, sizeof(*layout), cmp_entry_layout);
    uint64_t off = 0;
    for (size_t i = 0; i < w->n; i++) {
        layout[i]->begin = off;
        off += ltx2_tensor_nbytes(&layout[i]->t);
        layout[i]->end = off;
    }

    ltx2_sbuf h = {0};
    ltx2_sbuf_append(&h, "{", 1);
    bool first = true;
    if (w->n_meta) {
        ltx2_sbuf_append(&h, "\"__metadata__\":{", 16);
        for (size_t i = 0; i < w->n_meta; i++) {
            if (i) ltx2_sbuf_append(&h, ",", 1);
            ltx2_sbuf_json_string(&h, w->meta[i].key, strlen(w->meta[i].key));
            ltx2_sbuf_append(&h, ":", 1);
            ltx2_sbuf_json_string(&h, w->meta[i].value, strlen(w->meta[i].value));
        }
        ltx2_sbuf_append(&h, "}", 1);
        first = false;
    }
    for (size_t i = 0; i < w->n; i++) {
        const st_entry *e = &w->entries[i];
        if (!first) ltx2_sbuf_append(&h, ",", 1);
        first = false;
        ltx2_sbuf_json_string(&h, e->name, strlen(e->name));
        ltx2_sbuf_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", ltx2_dtype_st_name(e->t.dtype));
        for (int d = 0; d < e->t.ndim; d++)
            ltx2_sbuf_printf(&h, "%s%lld", d ? "," : "", (long long)e->t.shape[d]);
        ltx2_sbuf_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)e->begin,
                         (unsigned long long)e->end);
    }
    ltx2_sbuf_append(&h, "}", 1);
    while (!h.oom && (8 + h.len) % ST_DATA_ALIGN) ltx2_sbuf_append(&h, " ", 1);
    if (h.oom) {
        free(layout);
        ltx2_sbuf_free(&h);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory building the header", path);
    }
    if (h.len > LTX2_ST_MAX_HEADER) {
        free(layout);
        ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                                    "%s: header would be %zu bytes, over the %llu-byte limit", path,
                                    h.len, (unsigned long long)LTX2_ST_MAX_HEADER);
        ltx2_sbuf_free(&h);
        return st;
    }

    unsigned char len_le[8];
    for (int i = 0; i < 8; i++) len_le[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
    ltx2_file_writer fw;
    ltx2_status st = ltx2_file_writer_open(ctx, path, &fw);
    if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &fw, len_le, 8);
    if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &fw, h.buf, h.len);
    for (size_t i = 0; st == LTX2_OK && i < w->n; i++) {
        const uint64_t nb = layout[i]->end - layout[i]->begin;
        if (nb && layout[i]->t.data)
            st = ltx2_file_writer_write(ctx, &fw, layout[i]->t.data, (size_t)nb);
        else if (nb)
            st = ltx2_file_writer_zeros(ctx, &fw, nb);
    }
    if (st == LTX2_OK) st = ltx2_file_writer_commit(ctx, &fw);
    /* write/commit failures already removed the temp file */
    free(layout);
    ltx2_sbuf_free(&h);
    return st;
}
