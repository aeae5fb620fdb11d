/* Shared audio weight loader (see audio_weights.h). */
#include "model/audio_weights.h"

#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"

ltx2_status ltx2_audio_load_f32(ltx2_audio_loader *L, const char *key, int ndim, const int64_t *shape, float **out) {
    const ltx2_st_tensor *t = ltx2_st_set_find(L->set, key, NULL);
    if (!t) return LTX2_ERROR(L->ctx, LTX2_ERR_NOT_FOUND, "%s: missing tensor %s", L->what, key);
    char got[96], want[96];
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    if (!ok)
        return LTX2_ERROR(L->ctx, LTX2_ERR_SHAPE, "%s: tensor %s has shape %s, expected %s", L->what, key,
                          ltx2_shape_str(t->shape, t->ndim, got, sizeof(got)), ltx2_shape_str(shape, ndim, want, sizeof(want)));
    if (!ltx2_dtype_is_float(t->dtype))
        return LTX2_ERROR(L->ctx, LTX2_ERR_DTYPE, "%s: tensor %s has dtype %s, expected a float type", L->what, key,
                          ltx2_dtype_name(t->dtype));
    if (L->n_used == L->cap_used) {
        size_t cap = L->cap_used ? 2 * L->cap_used : 64;
        const ltx2_st_tensor **p = realloc(L->used, cap * sizeof(*p));
        if (!p) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "%s: key list", L->what);
        L->used = p;
        L->cap_used = cap;
    }
    L->used[L->n_used++] = t;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!buf) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "%s: %s (%lld floats)", L->what, key, (long long)n);
    ltx2_status st = ltx2_convert(L->ctx, buf, LTX2_F32, t->data, t->dtype, (size_t)n);
    if (st == LTX2_OK) st = ltx2_check_finite(L->ctx, LTX2_ERR_FORMAT, buf, ndim, shape, "tensor");
    if (st != LTX2_OK) {
        free(buf);
        ltx2_error_prefix(L->ctx, "%s: %s", L->what, key);
        return st;
    }
    *out = buf;
    return LTX2_OK;
}

bool ltx2_audio_has(const ltx2_audio_loader *L, const char *key) { return ltx2_st_set_find(L->set, key, NULL) != NULL; }

ltx2_status ltx2_audio_check_all_used(ltx2_audio_loader *L, const char *prefix) {
    const size_t plen = strlen(prefix);
    for (size_t i = 0; i < L->set->n_tensors; i++) {
        const ltx2_st_tensor *t = L->set->tensors[i];
        if (strncmp(t->name, prefix, plen) != 0) continue;
        bool used = false;
        for (size_t j = 0; j < L->n_used && !used; j++) used = L->used[j] == t;
        if (!used)
            return LTX2_ERROR(L->ctx, LTX2_ERR_UNSUPPORTED, "%s: unexpected tensor %s (not part of the configured model)",
                              L->what, t->name);
    }
    return LTX2_OK;
}

void ltx2_audio_loader_free(ltx2_audio_loader *L) {
    free(L->used);
    L->used = NULL;
    L->n_used = L->cap_used = 0;
}
