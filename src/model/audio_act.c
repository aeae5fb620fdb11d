/* Audio activation buffers (see audio_act.h). */
#include "model/audio_act.h"

#include <stdlib.h>

#include "core/context.h"

int64_t ltx2_audio_act_numel(const ltx2_audio_act *a) { return a->n * a->t * a->f * a->c; }

ltx2_status ltx2_audio_act_alloc(ltx2_context *ctx, ltx2_audio_act *a, int64_t n, int64_t t, int64_t f, int64_t c) {
    a->n = n, a->t = t, a->f = f, a->c = c;
    const int64_t numel = ltx2_audio_act_numel(a);
    a->d = malloc((size_t)(numel > 0 ? numel : 1) * sizeof(float));
    if (!a->d)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio: activation [%lld, %lld, %lld, %lld]", (long long)n, (long long)t,
                          (long long)f, (long long)c);
    return LTX2_OK;
}

void ltx2_audio_act_free(ltx2_audio_act *a) {
    free(a->d);
    a->d = NULL;
}

void ltx2_audio_act_dump(ltx2_audio_dump_fn dump, void *user, const char *name, const ltx2_audio_act *a) {
    if (!dump) return;
    float *tmp = malloc((size_t)ltx2_audio_act_numel(a) * sizeof(float));
    if (!tmp) return;
    for (int64_t b = 0; b < a->n; b++)
        for (int64_t t = 0; t < a->t; t++)
            for (int64_t f = 0; f < a->f; f++)
                for (int64_t c = 0; c < a->c; c++)
                    tmp[((b * a->c + c) * a->t + t) * a->f + f] = a->d[((b * a->t + t) * a->f + f) * a->c + c];
    const int64_t shape[4] = {a->n, a->c, a->t, a->f};
    ltx2_tensor v = ltx2_tensor_make(tmp, LTX2_F32, 4, shape);
    dump(name, &v, user);
    free(tmp);
}
