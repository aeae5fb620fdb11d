/* The weight table of weight_table.h: entries appended by a model's list builder, one aligned
 * allocation per store, and the load / copy / random fills over it. */
#include "model/weight_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "io/json.h"
#include "model/weight_fetch.h"

/* How many offenders of each kind an error message names. */
#define REPORT_FIRST 3
/* Zeroing a device store goes through a host buffer of at most this many bytes. */
#define ZERO_PIECE_BYTES ((size_t)1 << 24)

void ltx2_wtable_add(ltx2_wtable *t, const char *name, int ndim, int64_t s0, int64_t s1, ltx2_tensor *dst) {
    if (t->oom) return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        ltx2_wspec *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            t->oom = true;
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    ltx2_wspec *s = &t->v[t->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ndim = ndim;
    s->shape[0] = s0;
    s->shape[1] = s1;
    s->dst = dst;
    s->layer = false;
    s->matrix = false;
    s->fp8 = false;
    s->w_scale = s->x_scale = NULL;
}

void ltx2_wtable_add_linear(ltx2_wtable *t, const char *prefix, int64_t out, int64_t in, bool bias, ltx2_linear *lin) {
    char n[LTX2_WNAME_CAP];
    /* only the shape is written: a table built over a copy of loaded weights keeps their views */
    lin->out = out;
    lin->in = in;
    snprintf(n, sizeof n, "%.180s.weight", prefix);
    ltx2_wtable_add(t, n, 2, out, in, &lin->w);
    if (!t->oom && t->n) {
        t->v[t->n - 1].matrix = true;
        t->v[t->n - 1].w_scale = &lin->w_scale;
        t->v[t->n - 1].x_scale = &lin->x_scale;
    }
    if (bias) {
        snprintf(n, sizeof n, "%.180s.bias", prefix);
        ltx2_wtable_add(t, n, 1, out, 0, &lin->b);
    }
}

void ltx2_wtable_mark_layers(ltx2_wtable *t, size_t n0) {
    for (size_t i = n0; i < t->n; i++) t->v[i].layer = true;
}

void ltx2_wtable_free(ltx2_wtable *t) {
    free(t->v);
    memset(t, 0, sizeof *t);
}

static int64_t spec_numel(const ltx2_wspec *s) { return s->ndim == 1 ? s->shape[0] : s->shape[0] * s->shape[1]; }
static size_t align_up(size_t n) { return (n + LTX2_W_TENSOR_ALIGN - 1) / LTX2_W_TENSOR_ALIGN * LTX2_W_TENSOR_ALIGN; }

static int64_t max_numel(const ltx2_wtable *t) {
    int64_t m = 1;
    for (size_t i = 0; i < t->n; i++) m = spec_numel(&t->v[i]) > m ? spec_numel(&t->v[i]) : m;
    return m;
}

static ltx2_status zero_fill(ltx2_context *ctx, const ltx2_backend *be, void *mem, size_t total) {
    if (be->device == LTX2_DEVICE_CPU) {
        memset(mem, 0, total);
        return LTX2_OK;
    }
    const size_t piece = total < ZERO_PIECE_BYTES ? total : ZERO_PIECE_BYTES;
    void *z = calloc(piece ? piece : 1, 1);
    if (!z) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "weights: zero staging");
    ltx2_status st = LTX2_OK;
    for (size_t o = 0; st == LTX2_OK && o < total; o += piece)
        st = be->upload(be, ctx, (char *)mem + o, z, total - o < piece ? total - o : piece);
    free(z);
    return st;
}

static ltx2_dtype spec_dtype(const ltx2_wstore *s, const ltx2_wspec *w) {
    if (w->fp8) return LTX2_F8_E4M3;
    return w->matrix ? s->matrix_dtype : s->dtype;
}

/* Whether an entry has storage in the allocation: not a skipped layer, not a mapped matrix. */
static bool allocated(const ltx2_wstore *s, const ltx2_wspec *w, bool skip_layers) {
    return !(skip_layers && w->layer) && !(s->mapping && w->matrix && !w->fp8);
}

/* mapping: the retained file mapping the matrices will view (NULL: they are stored); the store
 * takes the reference. */
static ltx2_status layout_checks(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_backend *be, ltx2_dtype dtype,
                                 ltx2_dtype matrix_dtype, bool fp8_gemm) {
    if (t->oom) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "weights: tensor list");
    bool fp8 = false;
    for (size_t i = 0; i < t->n; i++) fp8 = fp8 || t->v[i].fp8;
    if (fp8 && !fp8_gemm && !ltx2_backend_supports(be, LTX2_OP_FP8, dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "weights: backend %s cannot widen fp8 weights to %s", be->name,
                          ltx2_dtype_name(dtype));
    if (fp8 && fp8_gemm) LTX2_TRY(ltx2_backend_require_fp8_gemm(ctx, be, "weights"));
    if (!ltx2_backend_supports(be, LTX2_OP_GEMM_EX, dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "weights: backend %s has no %s GEMM", be->name,
                          ltx2_dtype_name(dtype));
    if (matrix_dtype != dtype && !(be->gemm_bf16_weights && dtype == LTX2_F32 && matrix_dtype == LTX2_BF16))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "weights: backend %s has no GEMM of %s weights under %s",
                          be->name, ltx2_dtype_name(matrix_dtype), ltx2_dtype_name(dtype));
    return LTX2_OK;
}

/* mapping: the retained file mapping the (non-fp8) matrices will view (NULL: they are stored); the
 * store takes the reference, also on failure. The entries' fp8 flags are set; fp8_gemm: they run
 * through the fp8 GEMM (else they are widened before use and need only the fp8 conversion). */
static ltx2_status layout_as(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                             ltx2_dtype dtype, ltx2_dtype matrix_dtype, bool skip_layers, ltx2_st_mapping *mapping,
                             bool fp8_gemm) {
    memset(s, 0, sizeof *s);
    s->mapping = mapping;
    const ltx2_status chk = layout_checks(ctx, t, be, dtype, matrix_dtype, fp8_gemm);
    if (chk != LTX2_OK) {
        ltx2_wstore_free(s);
        return chk;
    }
    s->be = be;
    s->dtype = dtype;
    s->matrix_dtype = matrix_dtype;
    for (size_t i = 0; i < t->n; i++) {
        if (skip_layers && t->v[i].layer) continue;
        s->n_fp8 += t->v[i].fp8;
        const size_t bytes = (size_t)spec_numel(&t->v[i]) * ltx2_dtype_size(spec_dtype(s, &t->v[i]));
        if (allocated(s, &t->v[i], skip_layers))
            s->n_bytes += align_up(bytes);
        else
            s->n_mapped_bytes += bytes;
        s->n_elems += (size_t)spec_numel(&t->v[i]);
        s->n_tensors++;
    }
    ltx2_status st = be->alloc(be, ctx, s->n_bytes ? s->n_bytes : 1, &s->mem);
    if (st == LTX2_OK) st = zero_fill(ctx, be, s->mem, s->n_bytes);
    if (st != LTX2_OK) {
        ltx2_wstore_free(s);
        return st;
    }
    char *cur = s->mem;
    for (size_t i = 0; i < t->n; i++) {
        ltx2_wspec *w = &t->v[i];
        const bool stored = allocated(s, w, skip_layers);
        const ltx2_dtype dt = spec_dtype(s, w);
        *w->dst = ltx2_tensor_make(stored ? cur : NULL, dt, w->ndim, w->shape);
        w->dst->device = be->device;
        if (stored) cur += align_up((size_t)spec_numel(w) * ltx2_dtype_size(dt));
    }
    return LTX2_OK;
}

static ltx2_status layout(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                          ltx2_dtype dtype, ltx2_dtype matrix_dtype, bool skip_layers, ltx2_st_mapping *mapping) {
    return layout_as(ctx, s, t, be, dtype, matrix_dtype, skip_layers, mapping, true);
}

ltx2_status ltx2_wstore_layout_fp8_stored(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t,
                                          const ltx2_backend *be, ltx2_dtype dtype) {
    for (size_t i = 0; i < t->n; i++) t->v[i].fp8 = t->v[i].matrix;
    return layout_as(ctx, s, t, be, dtype, dtype, false, NULL, false);
}

ltx2_status ltx2_wstore_layout(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                               ltx2_dtype dtype, bool skip_layers) {
    for (size_t i = 0; i < t->n; i++) t->v[i].fp8 = false;
    return layout(ctx, s, t, be, dtype, dtype, skip_layers, NULL);
}

ltx2_status ltx2_wstore_layout_fp8(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                                   ltx2_dtype dtype) {
    for (size_t i = 0; i < t->n; i++) t->v[i].fp8 = t->v[i].matrix && t->v[i].layer;
    return layout(ctx, s, t, be, dtype, dtype, false, NULL);
}

/* What f holds of t's Linear weights (under prefix): how many are bf16, stored in another dtype or
 * missing (the loader reports those), and whether every bf16 one is at an address the GEMM may
 * read bf16 from (2-byte aligned: safetensors does not promise it). */
typedef struct matrix_scan {
    size_t n_bf16, n_other, n_missing;
    bool aligned;
} matrix_scan;

static matrix_scan scan_matrices(const ltx2_wtable *t, const ltx2_st_file *f, const char *prefix) {
    matrix_scan m = {.aligned = true};
    for (size_t i = 0; i < t->n; i++) {
        if (!t->v[i].matrix || t->v[i].fp8) continue;
        char full[LTX2_WNAME_CAP + 128];
        snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", t->v[i].name);
        const ltx2_st_tensor *ft = ltx2_st_find(f, full);
        if (!ft) {
            m.n_missing++;
        } else if (ft->dtype != LTX2_BF16) {
            m.n_other++;
        } else {
            m.n_bf16++;
            if ((uintptr_t)ft->data & 1u) m.aligned = false;
        }
    }
    return m;
}

/* The matrices f holds as scaled fp8 get the fp8 flag (only with keep_fp8; not skipped layers). */
static ltx2_status mark_fp8(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_st_file *f, const char *prefix,
                            bool skip_layers, bool keep_fp8) {
    for (size_t i = 0; i < t->n; i++) {
        ltx2_wspec *w = &t->v[i];
        w->fp8 = false;
        if (!keep_fp8 || !w->matrix || (skip_layers && w->layer)) continue;
        char full[LTX2_WNAME_CAP + 128];
        snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", w->name);
        const ltx2_st_tensor *ft = ltx2_st_find(f, full);
        float ws, xs;
        if (ft) LTX2_TRY(ltx2_weight_fp8_scales(ctx, f, ft, &w->fp8, &ws, &xs));
    }
    return LTX2_OK;
}

ltx2_status ltx2_wstore_layout_for(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                                   ltx2_dtype dtype, const ltx2_st_file *f, const char *prefix, bool skip_layers,
                                   bool keep_fp8) {
    LTX2_TRY(mark_fp8(ctx, t, f, prefix, skip_layers, keep_fp8));
    const matrix_scan m = scan_matrices(t, f, prefix);
    const bool keep_bf16 = be->gemm_bf16_weights && dtype == LTX2_F32 && m.n_bf16 > 0 && m.n_other == 0;
    ltx2_st_mapping *map = NULL;
    if (keep_bf16 && be->device == LTX2_DEVICE_CPU && !skip_layers && m.n_missing == 0 && m.aligned)
        map = ltx2_st_mapping_retain(f);
    return layout(ctx, s, t, be, dtype, keep_bf16 ? LTX2_BF16 : dtype, skip_layers, map);
}

ltx2_status ltx2_wstore_layout_fp8_from(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t,
                                        const ltx2_backend *be, ltx2_dtype dtype, const ltx2_st_file *f,
                                        const char *prefix) {
    LTX2_TRY(mark_fp8(ctx, t, f, prefix, false, true));
    return layout(ctx, s, t, be, dtype, dtype, false, NULL);
}

void ltx2_wstore_free(ltx2_wstore *s) {
    if (s->be && s->mem) s->be->free(s->be, s->mem);
    ltx2_st_mapping_release(s->mapping);
    memset(s, 0, sizeof *s);
}

/* Host buffers for filling a store: f32 values and the target-dtype staging; none for a host f32
 * store, which is filled in place. */
typedef struct stage {
    float *f32;
    void *dt;
} stage;

static ltx2_status stage_alloc(ltx2_context *ctx, const ltx2_wstore *s, const ltx2_wtable *t, bool always,
                               stage *g) {
    memset(g, 0, sizeof *g);
    if (!always && s->be->device == LTX2_DEVICE_CPU && s->dtype == LTX2_F32 && s->matrix_dtype == LTX2_F32)
        return LTX2_OK;
    const size_t n = (size_t)max_numel(t), es = ltx2_dtype_size(s->dtype), ems = ltx2_dtype_size(s->matrix_dtype);
    g->f32 = malloc(n * sizeof(float));
    g->dt = malloc(n * (es > ems ? es : ems));
    if (!g->f32 || !g->dt) {
        free(g->f32);
        free(g->dt);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "weights: staging of %zu elements", n);
    }
    return LTX2_OK;
}

static void stage_free(stage *g) {
    free(g->f32);
    free(g->dt);
}

/* One destination tensor from host f32 values (converted to its dtype, uploaded to a device). */
static ltx2_status put_f32(ltx2_context *ctx, const ltx2_wstore *s, ltx2_tensor *dst, const float *src,
                           const stage *g) {
    const size_t n = (size_t)ltx2_tensor_numel(dst);
    if (s->be->device == LTX2_DEVICE_CPU && dst->dtype == LTX2_F32) {
        if (dst->data != src) memcpy(dst->data, src, n * sizeof(float));
        return LTX2_OK;
    }
    LTX2_TRY(ltx2_convert(ctx, g->dt, dst->dtype, src, LTX2_F32, n));
    return s->be->upload(s->be, ctx, dst->data, g->dt, ltx2_tensor_nbytes(dst));
}

/* The fp8 entry after the weight hook (ltx-core's _fuse_delta_with_scaled_fp8): the dequantised
 * values adjusted and, where they changed, re-quantised with a new weight scale into q. *fresh:
 * q holds new codes (else the file's stand). */
static ltx2_status adjust_fp8(ltx2_context *ctx, const ltx2_wload *how, const ltx2_st_tensor *ft, const ltx2_wspec *w,
                              uint8_t *q, bool *fresh) {
    const size_t n = (size_t)spec_numel(w);
    float *v = malloc(n * sizeof(float));
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: %s dequantised", how->what, ft->name);
    ltx2_status st = ltx2_weight_to_f32(ctx, how->f, ft, v, n);
    if (st == LTX2_OK) st = how->adjust_fp8(ctx, w->name, v, w->shape[0], w->shape[1], fresh, how->adjust_user);
    if (st == LTX2_OK && *fresh) st = ltx2_fp8_quantize_per_tensor(ctx, ft->name, v, n, q, w->w_scale);
    free(v);
    return st;
}

/* An fp8 entry from its scaled e4m3 file tensor: the bytes as they are (a NaN code refused, as
 * the f32 path refuses NaN weights) and its two scales, or what the weight hook makes of them. */
static ltx2_status put_fp8(ltx2_context *ctx, const ltx2_wstore *s, const ltx2_wload *how, const ltx2_st_tensor *ft,
                           const ltx2_wspec *w) {
    const char *label = how->f->path ? how->f->path : "checkpoint";
    if (how->adjust && !how->adjust_fp8)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "%s: %s is fp8 and the weight hook has no fp8 rule", label, ft->name);
    bool scaled;
    LTX2_TRY(ltx2_weight_fp8_scales(ctx, how->f, ft, &scaled, w->w_scale, w->x_scale));
    const size_t n = (size_t)spec_numel(w);
    if (!scaled && how->quantize_fp8) { /* quantised here, per tensor */
        float *v = malloc(n * sizeof(float));
        uint8_t *q = malloc(n ? n : 1);
        ltx2_status st = v && q ? ltx2_weight_to_f32(ctx, how->f, ft, v, n)
                                : LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: %s quantised", how->what, ft->name);
        if (st == LTX2_OK) st = ltx2_fp8_quantize_per_tensor(ctx, ft->name, v, n, q, w->w_scale);
        if (st == LTX2_OK) *w->x_scale = 0.0f;
        if (st == LTX2_OK) st = s->be->upload(s->be, ctx, w->dst->data, q, n);
        free(v);
        free(q);
        return st;
    }
    if (!scaled) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "%s: %s laid out as fp8 but not scaled fp8", label, ft->name);
    const uint8_t *q = ft->data;
    for (size_t i = 0; i < n; i++)
        if (ltx2_fp8e4m3_is_nan(q[i]))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor %s holds an fp8 NaN at element %zu", label, ft->name, i);
    if (!how->adjust_fp8) return s->be->upload(s->be, ctx, w->dst->data, ft->data, n);
    uint8_t *fused = malloc(n ? n : 1);
    bool fresh = false;
    ltx2_status st = fused ? adjust_fp8(ctx, how, ft, w, fused, &fresh)
                           : LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: %s re-quantised", how->what, ft->name);
    if (st == LTX2_OK) st = s->be->upload(s->be, ctx, w->dst->data, fresh ? fused : ft->data, n);
    free(fused);
    return st;
}

/* Appends "name[extra]" to a short list of offenders (the first REPORT_FIRST), counting the rest. */
static void note(ltx2_sbuf *b, size_t *count, const char *name, const char *extra) {
    if (*count < REPORT_FIRST) {
        if (*count) ltx2_sbuf_append(b, ", ", 2);
        ltx2_sbuf_printf(b, "%s%s", name, extra);
    }
    (*count)++;
}

typedef struct offenders {
    ltx2_sbuf missing, shapes, dtypes, unexpected;
    size_t n_missing, n_shape, n_dtype, n_unexpected;
} offenders;

static const char *listed(size_t n, const ltx2_sbuf *b, int part) {
    if (!n) return "";
    if (part == 0) return " [";
    if (part == 1) return b->buf;
    return n > REPORT_FIRST ? ", ...]" : "]";
}

static ltx2_status report(ltx2_context *ctx, const ltx2_wload *how, offenders *o) {
    if (o->missing.oom || o->shapes.oom || o->unexpected.oom || o->dtypes.oom)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: error message", how->what);
    if (!o->n_missing && !o->n_shape && !o->n_dtype && !o->n_unexpected) return LTX2_OK;
    const ltx2_status code = o->n_missing ? LTX2_ERR_NOT_FOUND
                             : o->n_shape ? LTX2_ERR_SHAPE
                             : o->n_dtype ? LTX2_ERR_DTYPE
                                          : LTX2_ERR_FORMAT;
    const char *label = how->f->path ? how->f->path : "checkpoint";
    return LTX2_ERROR(ctx, code,
                      "%s: %s do not match the config (%s): %zu missing%s%s%s; %zu wrong shape%s%s%s; "
                      "%zu unsupported dtype%s%s%s; %zu unexpected%s%s%s",
                      label, how->what, how->cfgdesc ? how->cfgdesc : "", o->n_missing,
                      listed(o->n_missing, &o->missing, 0), listed(o->n_missing, &o->missing, 1),
                      listed(o->n_missing, &o->missing, 2), o->n_shape, listed(o->n_shape, &o->shapes, 0),
                      listed(o->n_shape, &o->shapes, 1), listed(o->n_shape, &o->shapes, 2), o->n_dtype,
                      listed(o->n_dtype, &o->dtypes, 0), listed(o->n_dtype, &o->dtypes, 1),
                      listed(o->n_dtype, &o->dtypes, 2), o->n_unexpected, listed(o->n_unexpected, &o->unexpected, 0),
                      listed(o->n_unexpected, &o->unexpected, 1), listed(o->n_unexpected, &o->unexpected, 2));
}

ltx2_status ltx2_wtable_load(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_wstore *s, const ltx2_wload *how) {
    const ltx2_st_file *f = how->f;
    const char *prefix = how->prefix ? how->prefix : "";
    bool *used = calloc(f->n_tensors ? f->n_tensors : 1, sizeof *used);
    offenders o;
    memset(&o, 0, sizeof o);
    stage g = {0};
    ltx2_status st = used ? stage_alloc(ctx, s, t, false, &g) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: tensor list", how->what);
    char full[LTX2_WNAME_CAP + 128];
    for (size_t i = 0; st == LTX2_OK && i < t->n; i++) {
        const ltx2_wspec *w = &t->v[i];
        snprintf(full, sizeof full, "%s%s", prefix, w->name);
        const ltx2_st_tensor *ft = ltx2_st_find(f, full);
        if (!ft) {
            note(&o.missing, &o.n_missing, full, "");
            continue;
        }
        used[ft - f->tensors] = true;
        const bool ok = ft->ndim == w->ndim && ft->shape[0] == w->shape[0] && (w->ndim == 1 || ft->shape[1] == w->shape[1]);
        if (!ok) {
            char got[96], want[96], both[224];
            ltx2_shape_str(ft->shape, ft->ndim, got, sizeof got);
            ltx2_shape_str(w->shape, w->ndim, want, sizeof want);
            snprintf(both, sizeof both, " (expected %s, got %s)", want, got);
            note(&o.shapes, &o.n_shape, full, both);
            continue;
        }
        if (!ltx2_weight_dtype_ok(ft->dtype)) {
            char what[64];
            snprintf(what, sizeof what, " (%s)", ltx2_dtype_name(ft->dtype));
            note(&o.dtypes, &o.n_dtype, full, what);
            continue;
        }
        if (w->fp8) {
            st = put_fp8(ctx, s, how, ft, w);
            continue;
        }
        if (s->mapping && w->matrix && how->adjust) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "%s: a weight hook on a store viewing the file", how->what);
            break;
        }
        if (s->mapping && w->matrix) { /* a view of the file: read once for the finite check, not copied */
            st = ltx2_weight_to_f32(ctx, f, ft, g.f32, (size_t)spec_numel(w));
            if (st == LTX2_OK) w->dst->data = (void *)ft->data;
            continue;
        }
        if (!w->dst->data) continue; /* a skipped layer: checked; its reader takes a slice */
        float *vals = g.f32 ? g.f32 : w->dst->data;
        st = ltx2_weight_to_f32(ctx, f, ft, vals, (size_t)spec_numel(w));
        if (st == LTX2_OK && w->matrix && how->adjust)
            st = how->adjust(ctx, w->name, vals, w->shape[0], w->shape[1], how->adjust_user);
        if (st == LTX2_OK) st = put_f32(ctx, s, w->dst, vals, &g);
    }
    for (size_t i = 0; st == LTX2_OK && i < f->n_tensors; i++) {
        const char *name = f->tensors[i].name;
        if (used[i] || !how->owns(name, how->owns_user) || ltx2_weight_is_fp8_aux(f, name)) continue;
        note(&o.unexpected, &o.n_unexpected, name, "");
    }
    if (st == LTX2_OK) st = report(ctx, how, &o);
    ltx2_sbuf_free(&o.missing);
    ltx2_sbuf_free(&o.shapes);
    ltx2_sbuf_free(&o.dtypes);
    ltx2_sbuf_free(&o.unexpected);
    stage_free(&g);
    free(used);
    return st;
}

ltx2_status ltx2_wtable_copy(ltx2_context *ctx, const ltx2_wtable *src, const ltx2_wstore *src_store,
                             const ltx2_wtable *dst, const ltx2_wstore *dst_store) {
    if (src->n != dst->n) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "weights copy: tensor lists differ");
    if (src_store->n_fp8 || dst_store->n_fp8)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "weights copy: fp8 layer weights are not copied yet");
    stage g = {0};
    LTX2_TRY(stage_alloc(ctx, dst_store, dst, true, &g));
    ltx2_status st = LTX2_OK;
    for (size_t i = 0; st == LTX2_OK && i < dst->n; i++) {
        if (!src->v[i].dst->data || !dst->v[i].dst->data) continue;
        st = ltx2_backend_to_host_f32(ctx, src_store->be, src->v[i].dst, g.f32);
        if (st == LTX2_OK) st = put_f32(ctx, dst_store, dst->v[i].dst, g.f32, &g);
    }
    stage_free(&g);
    return st;
}

ltx2_status ltx2_wtable_random(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_wstore *s, uint64_t seed,
                               float scale) {
    if (s->be->device != LTX2_DEVICE_CPU || s->dtype != LTX2_F32 || s->matrix_dtype != LTX2_F32 || s->n_fp8)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "random weights: the store must be host f32");
    uint64_t off = 0;
    for (size_t i = 0; i < t->n; i++) {
        float *d = t->v[i].dst->data;
        const size_t n = (size_t)spec_numel(&t->v[i]);
        if (!d) continue;
        ltx2_rng_normal(seed, 0, off, n, d);
        for (size_t k = 0; k < n; k++) d[k] *= scale;
        off += n;
    }
    return LTX2_OK;
}
