/* MaxDiffusion's converted-weights cache opened as the diffusers transformer it came from (md_weights.h).
 * The renames invert, for the keys an LTX-2 DiT has, what MaxDiffusion 7cfb880 does to a diffusers key:
 * modeling_flax_pytorch_utils.rename_key (`name.N` -> `name_N`), ltx2_utils.rename_for_ltx2_transformer
 * (`to_out_0` -> `to_out`, the feed-forward's `.proj` dropped) and rename_key_and_reshape_tensor
 * (`weight` -> `kernel` transposed, or `scale` for a norm). Checked against both tiny DiTs' full key sets
 * (tests/test_md_weights.c). */
#include "model/md_weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/names.h"

#define NAME_CAP 512
#define BLOCKS "transformer_blocks"
/* square tiles of the transpose: 32 x 32 elements of up to 4 bytes stay in L1 on both sides */
#define TRANSPOSE_TILE 32

struct ltx2_md_weights {
    ltx2_st_file *src;   /* the cache: its mapping backs every view */
    ltx2_st_file file;   /* Lightricks names */
    unsigned char *copy; /* the transposed kernels, one block */
    int64_t layers;
};

const ltx2_st_file *ltx2_md_weights_file(const ltx2_md_weights *m) { return m ? &m->file : NULL; }
int64_t ltx2_md_weights_layers(const ltx2_md_weights *m) { return m ? m->layers : 0; }

bool ltx2_md_weights_is_cache(const ltx2_st_file *f) { return f && ltx2_st_find(f, LTX2_MD_CACHE_MARK) != NULL; }

/* Components MaxDiffusion renames inside a key, back to diffusers': rename_key's `to_out.0`,
 * rename_for_ltx2_transformer's `to_out_0` -> `to_out`; the GELU projection `net.0.proj` -> `net_0` (its
 * `.proj` dropped) and `net.2` -> `net_2` under `ff` / `audio_ff`. */
typedef struct md_part {
    const char *after; /* the component before it must be this (NULL: any) */
    const char *md, *df;
} md_part;
static const md_part k_parts[] = {
    {NULL, "to_out", "to_out.0"},
    {"ff", "net_0", "net.0.proj"},
    {"audio_ff", "net_0", "net.0.proj"},
    {"ff", "net_2", "net.2"},
    {"audio_ff", "net_2", "net.2"},
};

static bool append(char *out, size_t cap, size_t *len, const char *s, size_t n) {
    if (*len + n + 1 > cap) return false;
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
    return true;
}

bool ltx2_md_key_to_df(const char *flax, char *out, size_t cap, bool *kernel) {
    if (!flax || !out || cap == 0) return false;
    size_t len = 0;
    out[0] = '\0';
    if (kernel) *kernel = false;
    const char *prev = NULL;
    size_t prev_n = 0;
    for (const char *p = flax;;) {
        const char *dot = strchr(p, '.');
        const size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const char *rep = NULL;
        if (!dot) { /* the parameter itself */
            if (n == 6 && !strncmp(p, "kernel", n)) {
                rep = "weight";
                if (kernel) *kernel = true;
            } else if (n == 5 && !strncmp(p, "scale", n)) {
                rep = "weight";
            }
        }
        for (size_t i = 0; dot && !rep && i < sizeof k_parts / sizeof k_parts[0]; i++) {
            const md_part *r = &k_parts[i];
            if (strlen(r->md) != n || strncmp(p, r->md, n)) continue;
            if (r->after && !(prev && strlen(r->after) == prev_n && !strncmp(prev, r->after, prev_n))) continue;
            rep = r->df;
        }
        if (!append(out, cap, &len, rep ? rep : p, rep ? strlen(rep) : n)) return false;
        if (!dot) return true;
        if (!append(out, cap, &len, ".", 1)) return false;
        prev = p;
        prev_n = n;
        p = dot + 1;
    }
}

void ltx2_md_weights_close(ltx2_md_weights *m) {
    if (!m) return;
    for (size_t i = 0; i < m->file.n_tensors; i++) free((char *)m->file.tensors[i].name);
    free(m->file.tensors);
    free(m->file.path);
    free(m->copy);
    ltx2_st_close(m->src);
    free(m);
}

bool ltx2_md_block_key(const char *name, int64_t *layer, const char **rest) {
    const size_t nb = strlen(BLOCKS);
    if (strncmp(name, BLOCKS, nb) || name[nb] != '.') return false;
    const char *p = name + nb + 1;
    *layer = -1;
    *rest = p;
    if (*p < '0' || *p > '9') return true;
    int64_t v = 0;
    while (*p >= '0' && *p <= '9' && v < ((int64_t)1 << 40)) v = v * 10 + (*p++ - '0');
    if (*p != '.') { /* `transformer_blocks.12abc`: a stacked key whose first component starts with a digit */
        *rest = name + nb + 1;
        return true;
    }
    *layer = v;
    *rest = p + 1;
    return true;
}

/* dst[c][r] = src[r][c] for a [rows, cols] matrix of isz-byte elements, in tiles. */
static void transpose(unsigned char *dst, const unsigned char *src, int64_t rows, int64_t cols, size_t isz) {
#pragma omp parallel for schedule(static)
    for (int64_t r0 = 0; r0 < rows; r0 += TRANSPOSE_TILE)
        for (int64_t c0 = 0; c0 < cols; c0 += TRANSPOSE_TILE) {
            const int64_t r1 = r0 + TRANSPOSE_TILE < rows ? r0 + TRANSPOSE_TILE : rows;
            const int64_t c1 = c0 + TRANSPOSE_TILE < cols ? c0 + TRANSPOSE_TILE : cols;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++)
                    memcpy(dst + (size_t)(c * rows + r) * isz, src + (size_t)(r * cols + c) * isz, isz);
        }
}

static int cmp_tensor(const void *a, const void *b) {
    return strcmp(((const ltx2_st_tensor *)a)->name, ((const ltx2_st_tensor *)b)->name);
}

/* One output tensor: layer `layer` of src (whole when not stacked), renamed, transposed into *copy_at
 * when it is a 2-D kernel. */
static ltx2_status put(ltx2_context *ctx, ltx2_md_weights *m, const ltx2_st_tensor *t, bool stacked, int64_t layer,
                       const char *rest, size_t *copy_at) {
    char df[NAME_CAP], lt[NAME_CAP], path[NAME_CAP];
    bool kernel = false;
    int n = layer >= 0 ? snprintf(path, sizeof path, BLOCKS ".%lld.", (long long)layer) : 0;
    if (n < 0 || (size_t)n >= sizeof path || !ltx2_md_key_to_df(rest, df, sizeof df, &kernel) ||
        snprintf(path + n, sizeof path - (size_t)n, "%s", df) >= (int)(sizeof path - (size_t)n) ||
        !ltx2_names_df_to_lt(LTX2_DF_TRANSFORMER, path, lt, sizeof lt))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: key %.200s: name too long", m->src->path, t->name);
    ltx2_st_tensor *d = &m->file.tensors[m->file.n_tensors];
    memset(d, 0, sizeof *d);
    d->dtype = t->dtype;
    d->ndim = stacked ? t->ndim - 1 : t->ndim;
    for (int k = 0; k < d->ndim; k++) d->shape[k] = t->shape[k + (stacked ? 1 : 0)];
    const uint64_t bytes = (t->end - t->begin) / (uint64_t)(stacked ? t->shape[0] : 1);
    const unsigned char *data = (const unsigned char *)t->data + (stacked ? (uint64_t)layer * bytes : 0);
    d->begin = t->begin + (uint64_t)(data - (const unsigned char *)t->data);
    d->end = d->begin + bytes;
    d->data = data;
    if (kernel && d->ndim == 2) { /* flax [in, out] -> torch [out, in] */
        unsigned char *dst = m->copy + *copy_at;
        transpose(dst, data, d->shape[0], d->shape[1], ltx2_dtype_size(d->dtype));
        const int64_t in = d->shape[0];
        d->shape[0] = d->shape[1];
        d->shape[1] = in;
        d->data = dst;
        d->begin = *copy_at;
        d->end = *copy_at + bytes;
        *copy_at += bytes;
    }
    d->name = malloc(strlen(lt) + 1);
    if (!d->name) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: names", m->src->path);
    memcpy((char *)d->name, lt, strlen(lt) + 1);
    m->file.n_tensors++;
    return LTX2_OK;
}

static ltx2_status build(ltx2_context *ctx, ltx2_md_weights *m) {
    const ltx2_st_file *f = m->src;
    if (!ltx2_md_weights_is_cache(f))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: not a MaxDiffusion converted-weights cache of an LTX-2 DiT (no "
                          LTX2_MD_CACHE_MARK ")", f->path);
    /* the layer count and the layout: every stacked tensor's leading axis, or the largest block index + 1 */
    int64_t stacked_l = -1, max_index = -1;
    const char *stacked_key = NULL, *indexed_key = NULL;
    size_t n_out = 0, copy_bytes = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        int64_t layer;
        const char *rest;
        const bool in_blocks = ltx2_md_block_key(t->name, &layer, &rest);
        if (in_blocks && layer < 0) {
            if (t->ndim < 1 || t->shape[0] < 1)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: stacked block tensor %.200s has no layer axis", f->path,
                                  t->name);
            if (stacked_l >= 0 && t->shape[0] != stacked_l)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: stacked block tensors disagree on the layer count: "
                                  "%.200s has %lld, %.200s %lld", f->path, stacked_key, (long long)stacked_l,
                                  t->name, (long long)t->shape[0]);
            stacked_l = t->shape[0];
            stacked_key = t->name;
        } else if (in_blocks) {
            if (layer > max_index) max_index = layer;
            indexed_key = t->name;
        }
        const int64_t copies = in_blocks && layer < 0 ? t->shape[0] : 1;
        n_out += (size_t)copies;
        char df[NAME_CAP];
        bool kernel = false;
        if (!ltx2_md_key_to_df(in_blocks ? rest : t->name, df, sizeof df, &kernel))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: key %.200s: name too long", f->path, t->name);
        if (kernel && t->ndim - (in_blocks && layer < 0 ? 1 : 0) == 2) copy_bytes += (size_t)(t->end - t->begin);
    }
    if (stacked_key && indexed_key)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: both stacked (%.200s) and per-block (%.200s) keys; MaxDiffusion "
                          "writes one layout (scan_layers true or false)", f->path, stacked_key, indexed_key);
    m->layers = stacked_key ? stacked_l : max_index + 1;
    m->file.tensors = calloc(n_out ? n_out : 1, sizeof *m->file.tensors);
    m->copy = malloc(copy_bytes ? copy_bytes : 1);
    const size_t plen = strlen(f->path) + 1;
    m->file.path = malloc(plen);
    if (!m->file.tensors || !m->copy || !m->file.path)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: %zu tensors, %zu bytes of transposed kernels", f->path, n_out,
                          copy_bytes);
    memcpy(m->file.path, f->path, plen);
    size_t copy_at = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        int64_t layer;
        const char *rest;
        if (!ltx2_md_block_key(t->name, &layer, &rest)) {
            LTX2_TRY(put(ctx, m, t, false, -1, t->name, &copy_at));
        } else if (layer >= 0) {
            LTX2_TRY(put(ctx, m, t, false, layer, rest, &copy_at));
        } else {
            for (int64_t l = 0; l < t->shape[0]; l++) LTX2_TRY(put(ctx, m, t, true, l, rest, &copy_at));
        }
    }
    qsort(m->file.tensors, m->file.n_tensors, sizeof *m->file.tensors, cmp_tensor);
    for (size_t i = 1; i < m->file.n_tensors; i++)
        if (!strcmp(m->file.tensors[i - 1].name, m->file.tensors[i].name))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: two keys map to the LTX-2 name %s", f->path,
                              m->file.tensors[i].name);
    return LTX2_OK;
}

ltx2_status ltx2_md_weights_open(ltx2_context *ctx, const char *path, ltx2_md_weights **out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "MaxDiffusion weights: NULL argument");
    *out = NULL;
    ltx2_md_weights *m = calloc(1, sizeof *m);
    if (!m) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "MaxDiffusion weights");
    ltx2_status st = ltx2_st_open(ctx, path, &m->src);
    if (st == LTX2_OK) st = build(ctx, m);
    if (st != LTX2_OK) {
        ltx2_md_weights_close(m);
        return st;
    }
    *out = m;
    return LTX2_OK;
}
