/* fp32 conversion of checkpoint weights, including scaled fp8 (see weight_fetch.h). */
#include "model/weight_fetch.h"

#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "ltx2/tensor.h"

/* Longest key we look a sibling up for (real keys are < 120 characters). */
#define SIBLING_CAP 512

bool ltx2_weight_dtype_ok(ltx2_dtype dt) {
    return dt == LTX2_F32 || dt == LTX2_BF16 || dt == LTX2_F16 || dt == LTX2_F8_E4M3;
}

static int64_t numel(const ltx2_st_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

/* name with its trailing `from` replaced by `to`; false when it does not end in `from`. */
static bool swap_suffix(const char *name, const char *from, const char *to, char *out, size_t cap) {
    size_t n = strlen(name), f = strlen(from);
    if (n < f || strcmp(name + n - f, from) != 0) return false;
    int w = snprintf(out, cap, "%.*s%s", (int)(n - f), name, to);
    return w > 0 && (size_t)w < cap;
}

ltx2_status ltx2_weight_to_f32(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, float *dst,
                               size_t n) {
    const char *label = f && f->path ? f->path : "checkpoint";
    if (!ltx2_weight_dtype_ok(t->dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s: tensor %s has unsupported dtype %s (need f32/bf16/f16/f8_e4m3)",
                          label, t->name, ltx2_dtype_name(t->dtype));
    if (t->dtype != LTX2_F8_E4M3) {
        ltx2_status st = ltx2_convert(ctx, dst, LTX2_F32, t->data, t->dtype, n);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "%s: tensor %s", label, t->name);
        return st;
    }
    const uint8_t *q = t->data;
    float scale = 1.0f;
    char key[SIBLING_CAP];
    const ltx2_st_tensor *s = NULL;
    if (swap_suffix(t->name, ".weight", LTX2_FP8_WEIGHT_SCALE_SUFFIX, key, sizeof key)) s = ltx2_st_find(f, key);
    if (s) {
        if (numel(s) != 1 || (s->dtype != LTX2_F32 && s->dtype != LTX2_BF16 && s->dtype != LTX2_F16))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: %s must be one f32/bf16/f16 value (a per-tensor fp8 scale), got %s with %lld "
                              "elements",
                              label, key, ltx2_dtype_name(s->dtype), (long long)numel(s));
        LTX2_TRY(ltx2_convert(ctx, &scale, LTX2_F32, s->data, s->dtype, 1));
    }
    /* fp32 product of the decoded fp8 value and the fp32 scale, as torch computes it */
    for (size_t i = 0; i < n; i++) dst[i] = ltx2_fp8e4m3_to_f32(q[i]) * scale;
    return LTX2_OK;
}

bool ltx2_weight_is_fp8_aux(const ltx2_st_file *f, const char *name) {
    char key[SIBLING_CAP];
    if (!swap_suffix(name, LTX2_FP8_WEIGHT_SCALE_SUFFIX, ".weight", key, sizeof key) &&
        !swap_suffix(name, LTX2_FP8_INPUT_SCALE_SUFFIX, ".weight", key, sizeof key))
        return false;
    const ltx2_st_tensor *w = ltx2_st_find(f, key);
    return w && w->dtype == LTX2_F8_E4M3;
}
