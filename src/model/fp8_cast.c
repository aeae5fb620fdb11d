/* ltx-core's fp8_cast policy on the DiT's weights (fp8_cast.h). */
#include "model/fp8_cast.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/context.h"
#include "core/dtype.h"

#define BLOCKS_PREFIX "transformer_blocks."

/* The module suffixes TRANSFORMER_LINEAR_DOWNCAST_MAP matches (its key_suffix minus ".weight" / ".bias";
 * "ff.net.*" also matches audio_ff's, as the reference's endswith does). */
static const char *const k_suffixes[] = {".to_q", ".to_k", ".to_v", ".to_out.0", "ff.net.0.proj", "ff.net.2"};

static bool ends_with(const char *s, size_t n, const char *suffix) {
    const size_t m = strlen(suffix);
    return n >= m && !memcmp(s + n - m, suffix, m);
}

bool ltx2_fp8_cast_applies(const char *name) {
    if (!name || strncmp(name, BLOCKS_PREFIX, strlen(BLOCKS_PREFIX))) return false;
    size_t n = strlen(name);
    if (ends_with(name, n, ".weight")) n -= strlen(".weight");
    else if (ends_with(name, n, ".bias")) n -= strlen(".bias");
    else return false;
    for (size_t i = 0; i < sizeof k_suffixes / sizeof k_suffixes[0]; i++)
        if (ends_with(name, n, k_suffixes[i])) return true;
    return false;
}

void ltx2_fp8_cast_round(float *v, size_t n) {
    for (size_t i = 0; i < n; i++) v[i] = ltx2_fp8e4m3_to_f32(ltx2_f32_to_fp8e4m3(v[i]));
}

ltx2_status ltx2_fp8_cast_adjust(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, void *user) {
    (void)ctx, (void)user;
    if (ltx2_fp8_cast_applies(name)) ltx2_fp8_cast_round(w, (size_t)(out * in));
    return LTX2_OK;
}

typedef struct bias_walk {
    ltx2_context *ctx;
    const ltx2_backend *be;
} bias_walk;

/* One Linear's bias: to the host in f32, rounded, back in its dtype on the backend. */
static ltx2_status round_bias(void *user, const char *name, ltx2_dit_linear *lin) {
    const bias_walk *bw = user;
    ltx2_context *ctx = bw->ctx;
    const ltx2_backend *be = bw->be;
    char bias[LTX2_WNAME_CAP];
    const size_t n = strlen(name);
    if (n < strlen(".weight") || n - strlen(".weight") + sizeof ".bias" > sizeof bias) return LTX2_OK;
    memcpy(bias, name, n - strlen(".weight"));
    memcpy(bias + n - strlen(".weight"), ".bias", sizeof ".bias");
    ltx2_tensor *b = &lin->b;
    if (!b->data || !ltx2_fp8_cast_applies(bias)) return LTX2_OK;
    const int64_t k = ltx2_tensor_numel(b);
    float *f = malloc((size_t)k * sizeof *f);
    ltx2_status st = f ? ltx2_backend_to_host_f32(ctx, be, b, f) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "fp8-cast: bias %s", bias);
    if (st == LTX2_OK) {
        ltx2_fp8_cast_round(f, (size_t)k);
        st = ltx2_backend_from_host_f32(ctx, be, f, b);
    }
    free(f);
    return st;
}

ltx2_status ltx2_fp8_cast_biases(ltx2_context *ctx, ltx2_dit_weights *w) {
    bias_walk bw = {ctx, w->be};
    return ltx2_dit_weights_each_linear(ctx, w, round_bias, &bw);
}
