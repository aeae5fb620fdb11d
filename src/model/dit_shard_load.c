/* A rank's weights for the parallel DiT. Every block layer tensor (attention Q/K/V/out/gate,
 * QK norms, FFN in/out) is placed by the profile's layout (sharding.c) on the whole mesh: its heads /
 * mlp dim split over the tensor group in the Megatron pattern, and - under trillium - its `embed` dim
 * split over context x fsdp (FSDP). This rank keeps only its block of each, cut either from a full
 * fp32 copy (ltx2_dit_parallel_create) or read straight from the checkpoint's mapping, converting
 * only the bytes of that block (ltx2_dit_parallel_create_from_file / _sharded: no rank ever holds a
 * whole layer tensor). An FSDP-split tensor is stored as a piece and registered for the per-block
 * gather (dit_fsdp.c). Read from a file, the Linear weights can also be kept as the file's scaled
 * fp8 codes (ltx2_dit_weights_load_fp8's rule, per shard), or rounded to e4m3 values (fp8_cast). The
 * rest (embeddings, AdaLN, output head, the blocks' scale-shift tables) is
 * held whole by every rank, also under trillium (README.md says why): borrowed from the caller, or
 * loaded by and owned by the rank's ltx2_dit_parallel (create_from_file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/context.h"
#include "core/dtype.h"
#include "model/dit_parallel_internal.h"
#include "model/dit_weights.h"
#include "model/fp8_cast.h"
#include "model/lora.h"
#include "model/weight_fetch.h"

/* Name buffers: an attention or FFN under its block ("transformer_blocks.<i>.video_to_audio_attn"),
 * a tensor under its block (+ ".to_gate_logits.weight"), and that with the key prefix in front. */
#define BASE_CAP 128
#define REL_CAP 192
#define KEY_CAP 256

static const char *const pa_names[PA_COUNT] = {"attn1",       "attn2",
                                                "audio_attn1", "audio_attn2",
                                                "audio_to_video_attn", "video_to_audio_attn"};

/* Where this rank's shards come from: floats of a full copy (f NULL) or the tensors prefix + name of f;
 * fb: the block being read, where FSDP pieces are registered. */
typedef struct shard_src {
    ltx2_context *ctx;
    ltx2_dit_parallel *dp;
    const ltx2_st_file *f;
    const char *prefix;
    fsdp_block *fb;
    bool layout;          /* the memory plan: shards allocated with the file's shapes, nothing read */
    ltx2_lora_set *loras; /* adapters fused into the shards read from f (NULL: none) */
    ltx2_dit_shard_weights kind; /* how the Linears read from f are kept */
} shard_src;

/* A scaled fp8 weight's shard: its file tensor and scales (the weight scale is new where LoRAs
 * re-quantised it). */
typedef struct fp8_scales {
    const ltx2_st_tensor *t;
    float w_scale, x_scale;
} fp8_scales;

/* How a Linear is split over `tensor` in the Megatron pattern. */
typedef enum { SPLIT_COL, SPLIT_ROW } split_kind;

/* A new shard buffer of nbytes on dp->be, freed with dp. */
static void *own(ltx2_context *ctx, ltx2_dit_parallel *dp, size_t nbytes) {
    if (dp->n_owned == dp->cap_owned) {
        size_t cap = dp->cap_owned ? 2 * dp->cap_owned : 64;
        void **p = realloc(dp->owned, cap * sizeof *p);
        if (!p) return NULL;
        dp->owned = p;
        dp->cap_owned = cap;
    }
    void *b = NULL;
    if (dp->be->alloc(dp->be, ctx, nbytes ? nbytes : 1, &b) != LTX2_OK) return NULL;
    dp->owned[dp->n_owned++] = b;
    return b;
}

/* The tensor prefix + rel of s->f, which must be [rows, cols] ([rows] when cols is 0). */
static ltx2_status file_tensor(const shard_src *s, const char *rel, int64_t rows, int64_t cols,
                               const ltx2_st_tensor **out) {
    char key[KEY_CAP];
    snprintf(key, sizeof key, "%s%s", s->prefix, rel);
    const char *label = s->f->path ? s->f->path : "checkpoint";
    const ltx2_st_tensor *t = ltx2_st_find(s->f, key);
    if (!t) return LTX2_ERROR(s->ctx, LTX2_ERR_NOT_FOUND, "%s: DiT tensor %s is missing", label, key);
    const int nd = cols ? 2 : 1;
    if (t->ndim != nd || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        char got[96], want[96];
        const int64_t shape[2] = {rows, cols};
        ltx2_shape_str(t->shape, t->ndim, got, sizeof got);
        ltx2_shape_str(shape, nd, want, sizeof want);
        return LTX2_ERROR(s->ctx, LTX2_ERR_SHAPE, "%s: DiT tensor %s has shape %s, expected %s", label, key, got, want);
    }
    *out = t;
    return LTX2_OK;
}

/* The [r0, r0 + nr) x [c0, c0 + nc) block of the [rows, cols] tensor `rel` (cols 0: 1-D, c0 0,
 * nc 1) into dst, host f32: copied from src (the full weights, on their backend in their dtype), or
 * read from the file. */
static ltx2_status read_f32(const shard_src *s, const char *rel, const ltx2_tensor *src, int64_t rows, int64_t cols,
                            int64_t r0, int64_t nr, int64_t c0, int64_t nc, float *dst) {
    const int64_t sc = cols ? cols : 1;
    if (!s->f) {
        if (!src->data)
            return LTX2_ERROR(s->ctx, LTX2_ERR_INVALID_ARG,
                              "dit parallel: %s has no floats (weights loaded with ltx2_dit_weights_load_replicated "
                              "need ltx2_dit_parallel_create_sharded and the checkpoint)",
                              rel);
        if (src->dtype == LTX2_F8_E4M3) /* codes without their scale: the file path keeps them whole */
            return LTX2_ERROR(s->ctx, LTX2_ERR_UNSUPPORTED, "dit parallel: %s is fp8 in the full weights; fp8 shards "
                              "are read from the checkpoint (ltx2_dit_parallel_create_sharded_lora)", rel);
        const ltx2_backend *sbe = s->dp->full->be;
        const size_t es = ltx2_dtype_size(src->dtype);
        for (int64_t i = 0; i < nr; i++) { /* row i of the block: a view of the full tensor on its backend */
            ltx2_tensor row = ltx2_tensor_make((char *)src->data + (size_t)((r0 + i) * sc + c0) * es, src->dtype, 1, &nc);
            row.device = sbe->device;
            LTX2_TRY(ltx2_backend_to_host_f32(s->ctx, sbe, &row, dst + i * nc));
        }
        return LTX2_OK;
    }
    const ltx2_st_tensor *t = NULL;
    LTX2_TRY(file_tensor(s, rel, rows, cols, &t));
    LTX2_TRY(ltx2_weight_slice_to_f32(s->ctx, s->f, t, r0, nr, c0, nc, dst));
    if (s->loras && cols) LTX2_TRY(ltx2_lora_fuse_block(s->ctx, s->loras, rel, dst, rows, cols, r0, nr, c0, nc));
    /* elementwise, so the block's rounding is that block of the whole tensor's */
    if (s->kind == LTX2_DIT_SHARDS_FP8_CAST && ltx2_fp8_cast_applies(rel)) ltx2_fp8_cast_round(dst, (size_t)(nr * nc));
    return LTX2_OK;
}

/* The largest of every rank's v: the whole tensor's amax from each rank's block (every element of a
 * layer tensor lies in some rank's block). */
static ltx2_status world_max(const shard_src *s, float v, float *out) {
    ltx2_comm *w = s->dp->world;
    float *all = malloc((size_t)w->size * sizeof(float));
    if (!all) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: %d amax values", w->size);
    const ltx2_status st = ltx2_comm_all_gather(w, s->ctx, &v, all, 1, LTX2_F32);
    if (st == LTX2_OK) {
        *out = all[0];
        for (int r = 1; r < w->size; r++) *out = all[r] > *out ? all[r] : *out;
    }
    free(all);
    return st;
}

/* That block of the scaled fp8 weight `rel` as e4m3 codes on the host: the file's, or - where LoRAs
 * cover it - the block dequantised, fused (ltx-core's bf16 deltas) and quantised again with the whole
 * tensor's new amax, as ltx2_dit_weights_load_fp8 re-quantises the whole (sc->w_scale updated). */
static ltx2_status fp8_codes(const shard_src *s, const char *rel, int64_t rows, int64_t cols, int64_t r0, int64_t nr,
                             int64_t c0, int64_t nc, uint8_t *dst, fp8_scales *sc) {
    const ltx2_st_tensor *t = sc->t;
    if (!s->loras) return ltx2_weight_slice_fp8_codes(s->ctx, s->f, t, r0, nr, c0, nc, dst);
    const size_t n = (size_t)(nr * nc);
    float *v = malloc((n ? n : 1) * sizeof(float));
    if (!v) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: %s dequantised", rel);
    bool touched = false;
    ltx2_status st = ltx2_weight_slice_to_f32(s->ctx, s->f, t, r0, nr, c0, nc, v);
    if (st == LTX2_OK) st = ltx2_lora_fuse_block_fp8(s->ctx, s->loras, rel, v, rows, cols, r0, nr, c0, nc, &touched);
    float amax = 0.0f;
    if (st == LTX2_OK && touched) st = world_max(s, ltx2_fp8_amax(v, n), &amax);
    if (st == LTX2_OK)
        st = touched ? ltx2_fp8_quantize_amax(s->ctx, t->name, v, n, amax, dst, &sc->w_scale)
                     : ltx2_weight_slice_fp8_codes(s->ctx, s->f, t, r0, nr, c0, nc, dst);
    free(v);
    return st;
}

/* A new shard buffer (own) holding that block of `rel` (read_f32): filled in place on the CPU in
 * f32; elsewhere staged in host f32 and uploaded in dp->dtype, so only one block's bytes are ever
 * on the host. */
static ltx2_status read_block(const shard_src *s, const char *rel, const ltx2_tensor *src, int64_t rows, int64_t cols,
                              int64_t r0, int64_t nr, int64_t c0, int64_t nc, fp8_scales *f8, void **dst) {
    ltx2_dit_parallel *dp = s->dp;
    const size_t n = (size_t)(nr * nc);
    void *b = own(s->ctx, dp, n * (f8 ? 1 : ltx2_dtype_size(dp->dtype)));
    if (!b) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: shard of %s (%zu elements)", rel, n);
    dp->shard_floats += nr * nc;
    dp->gathered_floats += nr * nc; /* slice() adds the rest of an FSDP piece's tensor shard */
    dp->layer_full_floats += rows * (cols ? cols : 1);
    *dst = b;
    if (s->layout) return LTX2_OK;
    if (f8) {
        uint8_t *codes = malloc(n ? n : 1);
        if (!codes) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: staging %s", rel);
        ltx2_status st = fp8_codes(s, rel, rows, cols, r0, nr, c0, nc, codes, f8);
        if (st == LTX2_OK) st = dp->be->upload(dp->be, s->ctx, b, codes, n);
        free(codes);
        return st;
    }
    if (dp->be->device == LTX2_DEVICE_CPU && dp->dtype == LTX2_F32)
        return read_f32(s, rel, src, rows, cols, r0, nr, c0, nc, b);
    float *stage = malloc((n ? n : 1) * sizeof(float));
    if (!stage) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: staging %s", rel);
    const int64_t len = (int64_t)n;
    ltx2_tensor t = ltx2_tensor_make(b, dp->dtype, 1, &len);
    t.device = dp->be->device;
    ltx2_status st = read_f32(s, rel, src, rows, cols, r0, nr, c0, nc, stage);
    if (st == LTX2_OK) st = ltx2_backend_from_host_f32(s->ctx, dp->be, stage, &t);
    free(stage);
    return st;
}

/* Which piece of split dim `dim` rank g of the weight-gather group holds: its mesh coordinates are
 * the world's on context and fsdp, so the layout's offset on that group's mesh is the world's. */
static int piece_of(const ltx2_shard_layout *l, const ltx2_mesh *wg_mesh, int g, int dim) {
    int64_t off[LTX2_MAX_DIMS];
    ltx2_shard_local_offset(l, wg_mesh, g, off);
    return (int)(off[dim] / l->local_shape[dim]);
}

/* Registers dst (just read: this rank's piece) for the block's gather: dst->data becomes NULL until
 * the block runs. The first FSDP tensor fixes which piece each weight-gather rank holds; every other
 * one must agree (they all split `embed`, so they do). */
static ltx2_status add_piece(const shard_src *s, const char *name, const ltx2_shard_layout *l, int dim, int64_t rows,
                             int64_t cols, ltx2_tensor *dst) {
    ltx2_dit_parallel *dp = s->dp;
    const int G = dp->wg->size;
    if (!dp->wg_piece) {
        dp->wg_piece = malloc((size_t)G * sizeof(int));
        if (!dp->wg_piece) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: weight-gather order");
        for (int g = 0; g < G; g++) dp->wg_piece[g] = piece_of(l, &dp->wg->mesh, g, dim);
    }
    for (int g = 0; g < G; g++)
        if (piece_of(l, &dp->wg->mesh, g, dim) != dp->wg_piece[g])
            return LTX2_ERROR(s->ctx, LTX2_ERR_UNSUPPORTED,
                              "dit parallel: %s puts piece %d of dim %d on weight-gather rank %d, other tensors put "
                              "piece %d there; one gather per block needs one order",
                              name, piece_of(l, &dp->wg->mesh, g, dim), dim, g, dp->wg_piece[g]);
    fsdp_block *fb = s->fb;
    if (fb->n == fb->cap) {
        const size_t cap = fb->cap ? 2 * fb->cap : 32;
        fsdp_piece *p = realloc(fb->pieces, cap * sizeof *p);
        if (!p) return LTX2_ERROR(s->ctx, LTX2_ERR_OOM, "dit parallel: FSDP pieces of %s", name);
        fb->pieces = p;
        fb->cap = cap;
    }
    fb->pieces[fb->n++] = (fsdp_piece){dst, dst->data, rows, cols, dim};
    fb->floats += rows * cols;
    if (fb->floats > dp->fsdp_max_block) dp->fsdp_max_block = fb->floats;
    dp->gathered_floats += rows * cols - l->local_numel;
    dst->data = NULL;
    return LTX2_OK;
}

/* This rank's block of a [rows, cols] (or [rows], cols 0) tensor `rel`, placed by the profile's
 * layout on the world mesh. `want_part` is the dim the tensor group must split (-1: none): that is
 * the Megatron split the forward is written for. A dim split over other mesh axes (trillium's
 * `embed` over context x fsdp) is stored as a piece and gathered per block; *lrows / *lcols get the
 * tensor shard's shape either way (what the forward sees). */
static ltx2_status slice(const shard_src *s, const char *rel, const ltx2_tensor *src, int64_t rows, int64_t cols,
                         int want_part, fp8_scales *f8, ltx2_tensor *dst, int64_t *lrows, int64_t *lcols) {
    ltx2_context *ctx = s->ctx;
    ltx2_dit_parallel *dp = s->dp;
    const ltx2_mesh *mesh = &dp->world->mesh;
    const int T = dp->tp->size;
    const char *prof = ltx2_shard_profile_name(dp->opts.profile);
    char name[KEY_CAP];
    snprintf(name, sizeof name, "%s%s", LTX2_DIT_PREFIX, rel); /* the layouts' names */
    int64_t shape[2] = {rows, cols};
    const int ndim = cols ? 2 : 1;
    ltx2_shard_layout l;
    LTX2_TRY(ltx2_shard_layout_of(ctx, dp->opts.profile, mesh, name, ndim, shape, &l));
    int fsdp_dim = -1;
    int64_t ts[2] = {rows, cols ? cols : 1}; /* the tensor shard */
    for (int d = 0; d < ndim; d++) {
        int64_t tparts = 1, oparts = 1;
        for (int j = 0; j < l.n_mesh[d]; j++) {
            const ltx2_mesh_axis ax = l.mesh[d][j];
            if (ax == LTX2_AXIS_TENSOR) tparts *= mesh->size[ax];
            else if (ax == LTX2_AXIS_CONTEXT || ax == LTX2_AXIS_FSDP) oparts *= mesh->size[ax];
            else
                return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                                  "dit parallel: %s dim %d is split over %s under profile %s; only tensor, context "
                                  "and fsdp can split weights",
                                  name, d, ltx2_mesh_axis_name(ax), prof);
        }
        const int64_t want = (d == want_part) ? T : 1;
        if (tparts != want)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "dit parallel: %s dim %d is split in %lld over tensor under profile %s at tensor=%d; "
                              "the parallel DiT needs %lld (Megatron heads/mlp over tensor)",
                              name, d, (long long)tparts, prof, T, (long long)want);
        if (oparts == 1) {
            ts[d] /= tparts;
            continue;
        }
        /* one gather group for every FSDP tensor: the split must span it, and tensor stay off that dim */
        if (tparts > 1 || fsdp_dim >= 0 || oparts != dp->wg->size)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "dit parallel: %s dim %d is split in %lld over tensor and %lld over context x fsdp "
                              "(size %d) under profile %s; FSDP gathers one whole context x fsdp split of one dim",
                              name, d, (long long)tparts, (long long)oparts, dp->wg->size, prof);
        fsdp_dim = d;
    }
    int64_t off[LTX2_MAX_DIMS];
    ltx2_shard_local_offset(&l, mesh, dp->world->rank, off);
    const int64_t lr = l.local_shape[0], lc = cols ? l.local_shape[1] : 1;
    void *buf = NULL;
    LTX2_TRY(read_block(s, rel, src, rows, cols, off[0], lr, cols ? off[1] : 0, lc, f8, &buf));
    /* the tensor the forward sees: the whole tensor shard (an FSDP piece is gathered into it) */
    *dst = ltx2_tensor_make(buf, f8 ? LTX2_F8_E4M3 : s->dp->dtype, cols ? 2 : 1, ts);
    dst->device = s->dp->be->device;
    if (fsdp_dim >= 0) LTX2_TRY(add_piece(s, name, &l, fsdp_dim, ts[0], ts[1], dst));
    if (lrows) *lrows = ts[0];
    if (lcols) *lcols = cols ? ts[1] : 0;
    return LTX2_OK;
}

static ltx2_status slice_linear(const shard_src *s, const char *base, const ltx2_dit_linear *src, split_kind kind,
                                ltx2_dit_linear *dst) {
    char nm[REL_CAP];
    memset(dst, 0, sizeof *dst);
    snprintf(nm, sizeof nm, "%s.weight", base);
    /* a scaled fp8 weight of the file stays fp8 when asked: its codes, its scales */
    fp8_scales sc = {0};
    bool fp8 = false;
    if (s->kind == LTX2_DIT_SHARDS_FP8 && s->f) {
        LTX2_TRY(file_tensor(s, nm, src->out, src->in, &sc.t));
        LTX2_TRY(ltx2_weight_fp8_scales(s->ctx, s->f, sc.t, &fp8, &sc.w_scale, &sc.x_scale));
    }
    LTX2_TRY(slice(s, nm, &src->w, src->out, src->in, kind == SPLIT_COL ? 0 : 1, fp8 ? &sc : NULL, &dst->w, &dst->out,
                   &dst->in));
    if (fp8) {
        dst->w_scale = sc.w_scale, dst->x_scale = sc.x_scale;
        s->dp->n_fp8++;
    }
    /* every LTX-2 Linear has a bias; a full copy without one (random test weights) keeps none */
    if (src->b.data || s->f || s->layout) {
        snprintf(nm, sizeof nm, "%s.bias", base);
        LTX2_TRY(slice(s, nm, &src->b, src->out, 0, kind == SPLIT_COL ? 0 : -1, NULL, &dst->b, NULL, NULL));
    }
    return LTX2_OK;
}

static ltx2_status slice_attn(const shard_src *s, const char *blk, int which, const ltx2_dit_attn_w *a, bool gated,
                              ltx2_dit_attn_w *w) {
    const int T = s->dp->tp->size;
    char base[BASE_CAP], nm[REL_CAP];
    snprintf(base, sizeof base, "%s.%s", blk, pa_names[which]);
    if (a->heads % T != 0)
        return LTX2_ERROR(s->ctx, LTX2_ERR_SHAPE, "dit parallel: %s has %lld heads, not divisible by tensor=%d", base,
                          (long long)a->heads, T);
    memset(w, 0, sizeof *w);
    w->heads_total = a->heads;
    w->heads = a->heads / T;
    w->head0 = (int64_t)s->dp->tp->rank * w->heads;
    w->head_dim = a->head_dim;
    w->query_dim = a->query_dim;
    w->context_dim = a->context_dim;
    snprintf(nm, sizeof nm, "%s.to_q", base);
    LTX2_TRY(slice_linear(s, nm, &a->q, SPLIT_COL, &w->q));
    snprintf(nm, sizeof nm, "%s.to_k", base);
    LTX2_TRY(slice_linear(s, nm, &a->k, SPLIT_COL, &w->k));
    snprintf(nm, sizeof nm, "%s.to_v", base);
    LTX2_TRY(slice_linear(s, nm, &a->v, SPLIT_COL, &w->v));
    snprintf(nm, sizeof nm, "%s.to_out.0", base);
    LTX2_TRY(slice_linear(s, nm, &a->o, SPLIT_ROW, &w->o));
    if (gated) {
        snprintf(nm, sizeof nm, "%s.to_gate_logits", base);
        LTX2_TRY(slice_linear(s, nm, &a->gate, SPLIT_COL, &w->gate));
    }
    /* The QK norm scales cover every head; the sum of squares is all-reduced, the scale applied
     * to this rank's heads only, so the slice is taken whatever the profile says (ironwood and
     * gpu replicate `norm`, trillium splits it over tensor: the same slice). */
    const int64_t inner = a->heads * a->head_dim, il = w->heads * w->head_dim, off = w->head0 * w->head_dim;
    void *qn = NULL, *kn = NULL;
    snprintf(nm, sizeof nm, "%s.q_norm.weight", base);
    LTX2_TRY(read_block(s, nm, &a->q_norm, inner, 0, off, il, 0, 1, NULL, &qn));
    snprintf(nm, sizeof nm, "%s.k_norm.weight", base);
    LTX2_TRY(read_block(s, nm, &a->k_norm, inner, 0, off, il, 0, 1, NULL, &kn));
    w->q_norm = ltx2_tensor_make(qn, s->dp->dtype, 1, &il);
    w->k_norm = ltx2_tensor_make(kn, s->dp->dtype, 1, &il);
    w->q_norm.device = w->k_norm.device = s->dp->be->device;
    return LTX2_OK;
}

static ltx2_status slice_ff(const shard_src *s, const char *blk, const char *name, const ltx2_dit_ff_w *f,
                            ltx2_dit_ff_w *dst) {
    char nm[REL_CAP];
    snprintf(nm, sizeof nm, "%s.%s.net.0.proj", blk, name);
    LTX2_TRY(slice_linear(s, nm, &f->proj_in, SPLIT_COL, &dst->proj_in));
    snprintf(nm, sizeof nm, "%s.%s.net.2", blk, name);
    return slice_linear(s, nm, &f->proj_out, SPLIT_ROW, &dst->proj_out);
}

ltx2_status dit_par_shard_blocks(ltx2_context *ctx, ltx2_dit_parallel *dp, const ltx2_dit_weights *w,
                                 const ltx2_st_file *f, const char *prefix, bool layout, ltx2_lora_set *loras,
                                 ltx2_dit_shard_weights kind) {
    if (!f && !layout && w->layers_skipped)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "dit parallel: the weights hold no block layers (loaded with "
                          "ltx2_dit_weights_load_replicated); build with ltx2_dit_parallel_create_sharded from the "
                          "checkpoint instead");
    if (kind != LTX2_DIT_SHARDS_PLAIN && !f)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel: fp8 shards are read from the checkpoint");
    if (kind == LTX2_DIT_SHARDS_FP8_CAST && loras)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "fp8-cast weights take no LoRA (see ltx2_dit_weights_load_fp8_cast)");
    /* before any shard is read: the single-device loader's refusal */
    if (kind == LTX2_DIT_SHARDS_FP8) LTX2_TRY(ltx2_backend_require_fp8_gemm(ctx, dp->be, "dit parallel: fp8 shards"));
    shard_src s = {ctx, dp, f, prefix ? prefix : LTX2_DIT_PREFIX, NULL, layout, loras, kind};
    const ltx2_dit_config *cfg = &w->cfg;
    for (int64_t i = 0; i < cfg->num_layers; i++) {
        const ltx2_dit_block_w *b = &w->blocks[i];
        ltx2_dit_block_w *pb = &dp->blocks[i];
        s.fb = &dp->fsdp[i];
        char blk[64];
        snprintf(blk, sizeof blk, "transformer_blocks.%lld", (long long)i);
        const ltx2_dit_attn_w *src[PA_COUNT] = {&b->attn1, &b->attn2, &b->audio_attn1,
                                                &b->audio_attn2, &b->a2v, &b->v2a};
        ltx2_dit_attn_w *dst[PA_COUNT] = {&pb->attn1, &pb->attn2, &pb->audio_attn1,
                                          &pb->audio_attn2, &pb->a2v, &pb->v2a};
        /* the scale-shift tables stay whole: views of the replicated weights */
        pb->sst = b->sst, pb->audio_sst = b->audio_sst;
        pb->sst_a2v_video = b->sst_a2v_video, pb->sst_a2v_audio = b->sst_a2v_audio;
        pb->prompt_sst = b->prompt_sst, pb->audio_prompt_sst = b->audio_prompt_sst;
        /* a full copy says by its data whether gates exist; the file path by the config */
        for (int k = 0; k < PA_COUNT; k++)
            LTX2_TRY(slice_attn(&s, blk, k, src[k],
                                (f || layout) ? cfg->apply_gated_attention : src[k]->gate.w.data != NULL,
                                dst[k]));
        LTX2_TRY(slice_ff(&s, blk, "ff", &b->ff, &pb->ff));
        LTX2_TRY(slice_ff(&s, blk, "audio_ff", &b->audio_ff, &pb->audio_ff));
    }
    if (kind == LTX2_DIT_SHARDS_FP8 && dp->n_fp8 == 0) /* ltx2_dit_weights_load_fp8's refusal */
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: fp8 DiT weights need a pre-quantised checkpoint (fp8 e4m3 "
                          "Linear weights with %s and %s siblings, as Lightricks' *-fp8 files hold); this one has none",
                          f->path ? f->path : "checkpoint", LTX2_FP8_WEIGHT_SCALE_SUFFIX, LTX2_FP8_INPUT_SCALE_SUFFIX);
    return LTX2_OK;
}

/* Setup and shards; on failure the world is aborted with this rank's reason and nothing is left. */
static ltx2_status build(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *w, ltx2_dit_weights *owned,
                         const ltx2_st_file *f, const char *prefix, bool layout, ltx2_lora_set *loras,
                         ltx2_dit_shard_weights kind, const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out) {
    ltx2_dit_parallel *dp = NULL;
    ltx2_status st = LTX2_OK;
    /* the shards go where the full weights are, in their dtype: host f32 on the CPU (the reference,
     * bitwise one rank's), bf16 / f32 on a device */
    if (w->be->device == LTX2_DEVICE_CPU && w->dtype != LTX2_F32)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit parallel: on the CPU the ranks' shards are f32; weights in %s "
                        "are not supported", ltx2_dtype_name(w->dtype));
    else if (w->dtype != LTX2_F32 && w->dtype != LTX2_BF16)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit parallel: shards in %s (on %s) are not supported; f32 or bf16",
                        ltx2_dtype_name(w->dtype), w->be->name);
    if (st == LTX2_OK) st = dit_par_setup(ctx, world, &w->cfg, opts, &dp);
    if (st == LTX2_OK) {
        dp->be = w->be;
        dp->dtype = w->dtype;
        dp->full = w;
        dp->owned_full = owned;
        owned = NULL;
        st = dit_par_shard_blocks(ctx, dp, w, f, prefix, layout, loras, kind);
        /* the replicated part took its adapters as it loaded, the shards theirs: none may be left */
        if (st == LTX2_OK && loras) st = ltx2_lora_check_used(ctx, loras);
    }
    if (st != LTX2_OK) {
        ltx2_comm_abort(world, ltx2_last_error(ctx));
        ltx2_dit_parallel_free(dp);
        ltx2_dit_weights_free(owned);
        return st;
    }
    *out = dp;
    return LTX2_OK;
}

ltx2_status ltx2_dit_parallel_create(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *full,
                                     const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out) {
    if (!world || !full || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel create: NULL argument");
    *out = NULL;
    return build(ctx, world, full, NULL, NULL, NULL, false, NULL, LTX2_DIT_SHARDS_PLAIN, opts, out);
}

ltx2_status ltx2_dit_parallel_create_sharded(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *replicated,
                                             const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out) {
    if (!world || !replicated || !f || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel create (sharded): NULL argument");
    *out = NULL;
    return build(ctx, world, replicated, NULL, f, prefix, false, NULL, LTX2_DIT_SHARDS_PLAIN, opts, out);
}

ltx2_status ltx2_dit_parallel_create_sharded_lora(ltx2_context *ctx, ltx2_comm *world,
                                                  const ltx2_dit_weights *replicated, const ltx2_st_file *f,
                                                  const char *prefix, ltx2_lora_set *loras,
                                                  ltx2_dit_shard_weights kind, const ltx2_dit_parallel_opts *opts,
                                                  ltx2_dit_parallel **out) {
    if (!world || !replicated || !f || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel create (sharded, LoRA): NULL argument");
    *out = NULL;
    return build(ctx, world, replicated, NULL, f, prefix, false, loras, kind, opts, out);
}

ltx2_status ltx2_dit_parallel_create_from_file(ltx2_context *ctx, ltx2_comm *world, const ltx2_st_file *f,
                                               const char *prefix, const ltx2_dit_config *cfg,
                                               const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out) {
    if (!world || !f || !cfg || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel create (from file): NULL argument");
    *out = NULL;
    /* Before any collective: a bad checkpoint fails every rank the same way, each with its own
     * message naming the tensor, and the abort only releases ranks that got further. */
    ltx2_dit_weights *rep = NULL;
    ltx2_status st = ltx2_dit_weights_load_replicated(ctx, f, prefix, cfg, &rep);
    if (st != LTX2_OK) {
        ltx2_comm_abort(world, ltx2_last_error(ctx));
        return st;
    }
    return build(ctx, world, rep, rep, f, prefix, false, NULL, LTX2_DIT_SHARDS_PLAIN, opts, out);
}

ltx2_status ltx2_dit_parallel_create_layout(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *replicated,
                                            const ltx2_st_file *fp8_file, const ltx2_dit_parallel_opts *opts,
                                            ltx2_dit_parallel **out) {
    if (!world || !replicated || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel create (layout): NULL argument");
    *out = NULL;
    return build(ctx, world, replicated, NULL, fp8_file, NULL, true, NULL,
                 fp8_file ? LTX2_DIT_SHARDS_FP8 : LTX2_DIT_SHARDS_PLAIN, opts, out);
}

void ltx2_dit_parallel_get_weight_mem(const ltx2_dit_parallel *dp, ltx2_dit_parallel_weight_mem *out) {
    memset(out, 0, sizeof *out);
    out->shard_floats = dp->shard_floats;
    out->layer_full_floats = dp->layer_full_floats;
    /* a full copy also holds the layers; the replicated part is what is not a layer tensor */
    out->replicated_floats = (int64_t)(int64_t)dp->full->store.n_elems - (dp->full->layers_skipped ? 0 : dp->layer_full_floats);
    out->replicated_owned = dp->owned_full != NULL;
    out->gathered_floats = dp->gathered_floats;
    out->scratch_floats = dp->fsdp_max_block;
    out->fsdp_parts = dp->fsdp_max_block > 0 ? dp->wg->size : 1;
    out->fp8_linears = dp->n_fp8;
}
