/* Contexts and sigmas read from files (see injection.h). */
#include "pipeline/injection.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "io/tensor_set.h"

/* The tensor `name` of set as [S, width] floats (a leading 1 allowed), copied into *out. */
static ltx2_status take_rows(ltx2_context *ctx, const ltx2_tensor_set *set, const char *path, const char *name,
                             int64_t width, int64_t *S, float **out) {
    const ltx2_named_tensor *t = ltx2_tensor_set_find(set, name);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "contexts %s: no tensor '%s'", path, name);
    const ltx2_tensor *x = &t->t;
    const bool lead = x->ndim == 3 && x->shape[0] == 1;
    if (!(x->ndim == 2 || lead) || x->shape[x->ndim - 1] != width || x->shape[x->ndim - 2] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "contexts %s: '%s' must be [1, S, %lld] (this model's width)", path, name,
                          (long long)width);
    const int64_t rows = x->shape[x->ndim - 2];
    if (*S && rows != *S)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "contexts %s: '%s' has %lld tokens, the others %lld", path, name,
                          (long long)rows, (long long)*S);
    *S = rows;
    *out = malloc((size_t)(rows * width) * sizeof(float));
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "contexts %s: '%s'", path, name);
    LTX2_TRY(ltx2_convert(ctx, *out, LTX2_F32, x->data, x->dtype, (size_t)ltx2_tensor_numel(x)));
    const int64_t shape[2] = {rows, width};
    return ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, *out, 2, shape, "contexts %s: '%s' [token, channel]", path,
                             name);
}

ltx2_status ltx2_inject_contexts(ltx2_context *ctx, const char *path, int64_t dv, int64_t da, bool need_neg,
                                 ltx2_pipe_context *pos, ltx2_pipe_context *neg) {
    ltx2_tensor_set *set = NULL;
    LTX2_TRY(ltx2_tensor_set_open(ctx, path, &set));
    int64_t S = 0;
    ltx2_status st = take_rows(ctx, set, path, "video_context", dv, &S, &pos->video);
    if (st == LTX2_OK) st = take_rows(ctx, set, path, "audio_context", da, &S, &pos->audio);
    if (st == LTX2_OK && need_neg) {
        st = take_rows(ctx, set, path, "negative_video_context", dv, &S, &neg->video);
        if (st == LTX2_OK) st = take_rows(ctx, set, path, "negative_audio_context", da, &S, &neg->audio);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "CFG is on, so the negative contexts are needed too");
        neg->S = S;
    }
    pos->S = S;
    ltx2_tensor_set_free(set);
    return st;
}

ltx2_status ltx2_inject_sigmas(ltx2_context *ctx, const char *path, int stage, float **out, int *steps) {
    *out = NULL;
    *steps = 0;
    ltx2_tensor_set *set = NULL;
    LTX2_TRY(ltx2_tensor_set_open(ctx, path, &set));
    const ltx2_named_tensor *t = stage == 2 ? ltx2_tensor_set_find(set, "stage_2_sigmas") : ltx2_tensor_set_find(set, "sigmas");
    if (!t && stage == 1) t = ltx2_tensor_set_find(set, "stage_1_sigmas");
    if (!t && stage == 1 && set->n == 1 && !strcmp(set->kind, "npy")) t = &set->items[0]; /* a lone .npy: its name */
    ltx2_status st = LTX2_OK;
    if (!t) {
        if (stage == 1) st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "sigmas %s: no tensor 'sigmas' (or 'stage_1_sigmas')", path);
        ltx2_tensor_set_free(set);
        return st;
    }
    const ltx2_tensor *x = &t->t;
    const int64_t n = x->ndim == 1 ? x->shape[0] : 0;
    if (n < 2 || n > LTX2_INJECT_MAX_SIGMAS)
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "sigmas %s: '%s' must be 1-D with 2 to %d values (steps + 1)", path,
                        t->name, LTX2_INJECT_MAX_SIGMAS);
    float *v = st == LTX2_OK ? malloc((size_t)n * sizeof(float)) : NULL;
    if (st == LTX2_OK && !v) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "sigmas %s", path);
    if (st == LTX2_OK) st = ltx2_convert(ctx, v, LTX2_F32, x->data, x->dtype, (size_t)n);
    for (int64_t i = 0; st == LTX2_OK && i < n; i++) {
        const bool last = i == n - 1;
        if (!isfinite(v[i]) || v[i] < 0 || v[i] > 1 || (!last && v[i] == 0) || (i && v[i] > v[i - 1]))
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sigmas %s: '%s'[%lld] = %g: the sigmas must fall from at most 1 "
                            "to at least 0, only the last one 0", path, t->name, (long long)i, (double)v[i]);
    }
    ltx2_tensor_set_free(set);
    if (st != LTX2_OK) {
        free(v);
        return st;
    }
    *out = v;
    *steps = (int)(n - 1);
    return LTX2_OK;
}
