/* Gemma-3 with its Linear weights stored in fp8 (ltx2_gemma_weights_load_fp8_on, #13 item 5) on the tiny
 * 6-layer checkpoint and the golden prompts of test_gemma_golden, on the CPU:
 * - every Linear weight is stored e4m3 with a positive per-tensor scale, the norms as before;
 * - the forward equals, bit for bit, the forward of an f32 copy of the plain weights whose Linears were
 *   quantised and dequantised the same way here (so the widening before each GEMM is exactly
 *   e4m3 * scale, and nothing else moved);
 * - the hidden states stay near the plain forward's (the e4m3 weight rounding only), measured;
 * - the resident weights: the Linears at a byte a value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/gemma.h"
#include "model/weight_fetch.h"
#include "test_util.h"

#define GEMMA_DIR LTX2_SOURCE_DIR "/weights/tiny/gemma-6l"
#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/gemma_tiny.safetensors"
/* e4m3 keeps 3 mantissa bits: a weight moves by up to 1/16 of itself, about 1/40 on average; over six
 * layers the hidden states of the tiny random model move by a few percent (measured 1.8e-2). The
 * bound says "the weights' rounding, not a broken widening" (a lost scale is off by orders). */
#define FP8_HIDDEN_MAX_REL_L2 0.1

static ltx2_context *g_ctx;

typedef struct prompts {
    int64_t B, S;
    int32_t *ids;
    uint8_t *mask;
} prompts;

static bool prompts_load(prompts *p) {
    ltx2_st_file *f = NULL;
    memset(p, 0, sizeof *p);
    if (ltx2_st_open(g_ctx, GOLDEN, &f) != LTX2_OK) return false;
    const ltx2_st_tensor *ti = ltx2_st_find(f, "input.ids"), *tm = ltx2_st_find(f, "input.mask");
    bool ok = ti && tm && ti->ndim == 2;
    if (ok) {
        p->B = ti->shape[0], p->S = ti->shape[1];
        p->ids = malloc((size_t)(p->B * p->S) * sizeof *p->ids);
        p->mask = malloc((size_t)(p->B * p->S));
        ok = p->ids && p->mask;
        for (int64_t i = 0; ok && i < p->B * p->S; i++) {
            int64_t a, m;
            memcpy(&a, (const char *)ti->data + 8 * i, 8);
            memcpy(&m, (const char *)tm->data + 8 * i, 8);
            p->ids[i] = (int32_t)a, p->mask[i] = (uint8_t)m;
        }
    }
    ltx2_st_close(f);
    return ok;
}

static float *forward(const ltx2_gemma_weights *w, const prompts *p) {
    const int64_t n = p->B * p->S * w->cfg.hidden * (w->cfg.layers + 1);
    float *h = malloc((size_t)n * sizeof *h);
    if (h && ltx2_gemma_forward(g_ctx, w, p->ids, p->mask, p->B, p->S, h) == LTX2_OK) return h;
    CHECK(false, "forward: %s", ltx2_last_error(g_ctx));
    free(h);
    return NULL;
}

/* The Linears of layer L, in a fixed order. */
static void layer_linears(ltx2_gemma_layer_w *L, ltx2_linear *out[7]) {
    ltx2_linear *v[7] = {&L->q, &L->k, &L->v, &L->o, &L->gate, &L->up, &L->down};
    memcpy(out, v, sizeof v);
}

/* w (f32 CPU weights): every Linear quantised per tensor and dequantised in place, as the fp8 load
 * quantises and the forward widens. */
static bool round_as_fp8(ltx2_gemma_weights *w) {
    for (int64_t l = 0; l < w->cfg.layers; l++) {
        ltx2_linear *lin[7];
        layer_linears(&w->layers[l], lin);
        for (int k = 0; k < 7; k++) {
            const size_t n = (size_t)ltx2_tensor_numel(&lin[k]->w);
            float *v = lin[k]->w.data, scale = 0;
            uint8_t *q = malloc(n);
            if (!q || ltx2_fp8_quantize_per_tensor(g_ctx, "gemma linear", v, n, q, &scale) != LTX2_OK) {
                free(q);
                return false;
            }
            for (size_t i = 0; i < n; i++) v[i] = ltx2_fp8e4m3_to_f32(q[i]) * scale;
            free(q);
        }
    }
    return true;
}

int main(void) {
    g_ctx = test_context_quiet();
    if (!g_ctx) return 1;
    prompts p;
    CHECK(prompts_load(&p), "golden prompts: %s", ltx2_last_error(g_ctx));
    ltx2_gemma_weights *plain = NULL, *fp8 = NULL, *copy = NULL;
    const ltx2_backend *cpu = ltx2_backend_cpu();
    bool ok = ltx2_gemma_weights_load_on(g_ctx, cpu, LTX2_F32, GEMMA_DIR, &plain) == LTX2_OK &&
              ltx2_gemma_weights_load_fp8_on(g_ctx, cpu, LTX2_F32, GEMMA_DIR, &fp8) == LTX2_OK &&
              ltx2_gemma_weights_to(g_ctx, plain, cpu, LTX2_F32, &copy) == LTX2_OK;
    size_t n_fp8 = 0;
    CHECK(ok, "loads: %s", ltx2_last_error(g_ctx));
    if (ok) {
        size_t linear_elems = 0;
        bool scales = true;
        for (int64_t l = 0; l < fp8->cfg.layers; l++) {
            ltx2_linear *lin[7];
            layer_linears(&fp8->layers[l], lin);
            for (int k = 0; k < 7; k++) {
                n_fp8 += lin[k]->w.dtype == LTX2_F8_E4M3;
                scales = scales && lin[k]->w_scale > 0 && isfinite(lin[k]->w_scale);
                linear_elems += (size_t)ltx2_tensor_numel(&lin[k]->w);
            }
        }
        CHECK(n_fp8 == (size_t)(7 * fp8->cfg.layers) && scales && fp8->store.n_fp8 == n_fp8 &&
                  fp8->layers[0].in_norm.dtype == LTX2_F32,
              "%zu of %lld Linears stored fp8 (store: %zu), scales %s", n_fp8, (long long)(7 * fp8->cfg.layers),
              fp8->store.n_fp8, scales ? "ok" : "missing");
        /* against the f32 copy's store: the Linears at 1 byte instead of 4, each tensor padded to the
         * store's alignment (LTX2_W_TENSOR_ALIGN) */
        const size_t saved = copy->store.n_bytes - fp8->store.n_bytes, pad = n_fp8 * LTX2_W_TENSOR_ALIGN;
        CHECK(saved + pad >= 3 * linear_elems && saved <= 3 * linear_elems + pad,
              "fp8 store %zu bytes saves %zu on the f32 one, want 3 x %zu", fp8->store.n_bytes, saved, linear_elems);
        ok = round_as_fp8(copy);
        CHECK(ok, "rounding the copy: %s", ltx2_last_error(g_ctx));
    }
    float *hp = ok ? forward(plain, &p) : NULL, *h8 = ok ? forward(fp8, &p) : NULL, *hr = ok ? forward(copy, &p) : NULL;
    if (hp && h8 && hr) {
        const int64_t n = p.B * p.S * plain->cfg.hidden * (plain->cfg.layers + 1);
        CHECK(!memcmp(h8, hr, (size_t)n * sizeof(float)), "fp8 forward differs from the pre-rounded f32 forward");
        int64_t s1[1] = {n};
        ltx2_tensor a = ltx2_tensor_make(hp, LTX2_F32, 1, s1), b = ltx2_tensor_make(h8, LTX2_F32, 1, s1);
        ltx2_diff_stats ds;
        ltx2_diff(&a, &b, 0, 0, &ds);
        CHECK(ds.rel_l2 > 0 && ds.rel_l2 <= FP8_HIDDEN_MAX_REL_L2, "fp8 vs plain hidden states rel-L2 %.3g", ds.rel_l2);
        printf("Gemma-3 tiny, fp8-stored Linears: bitwise the pre-rounded f32 forward; %.3g rel-L2 from the plain "
               "forward (all %lld hidden states)\n", ds.rel_l2, (long long)(plain->cfg.layers + 1));
    }
    free(hp), free(h8), free(hr);
    ltx2_gemma_weights_free(copy);
    ltx2_gemma_weights_free(fp8);
    ltx2_gemma_weights_free(plain);
    free(p.ids), free(p.mask);
    ltx2_context_free(g_ctx);
    return test_finish();
}
