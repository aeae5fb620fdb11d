/* The tiny 6-layer Gemma-3 (weights/tiny/gemma-6l) on a device backend (bf16 weights and
 * activations, the model's one forward) against the same forward on the CPU backend in fp32, on
 * the golden's two left-padded prompts: every hidden state; and generation's K/V-cached decoding
 * on the device against its own whole forward; and the image features of the vision tower. Shared by test_gemma_cuda (a GPU) and
 * test_emu_gemma (the CPU emulator of the kernels). */
#ifndef LTX2_TEST_GEMMA_DEVICE_CHECK_H
#define LTX2_TEST_GEMMA_DEVICE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/gemma.h"
#include "model/gemma_generate.h"
#include "model/gemma_vision.h"
#include "test_util.h"

/* bf16 storage of the residual stream and every activation through 6 layers of random weights:
 * the direction holds to ~1e-5 and rel-L2 stays near 1e-2 (as the DiT's device check); a wrong
 * kv head, causal bound or window drops the cosine of the affected states well below. */
#define GEMMA_DEVICE_MIN_COSINE 0.9999
#define GEMMA_DEVICE_MAX_REL_L2 2e-2

/* Every hidden state of got against ref ([rows, L1] layer-last, host f32). */
static void gemma_device_compare(const ltx2_backend *dev, const char *how, const float *ref, const float *got,
                                 int64_t rows, int64_t L1) {
    double worst = 0;
    for (int64_t l = 0; l < L1; l++) {
        double ab = 0, aa = 0, bb = 0, d2 = 0;
        bool finite = true;
        for (int64_t r = 0; r < rows; r++) {
            const double x = ref[r * L1 + l], y = got[r * L1 + l];
            finite = finite && isfinite(y);
            ab += x * y, aa += x * x, bb += y * y, d2 += (y - x) * (y - x);
        }
        const double cosine = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0, rel = aa > 0 ? sqrt(d2 / aa) : sqrt(d2);
        if (l == 0 && L1 > 1) { /* a forward's states (not one tensor: the vision checks pass L1 1) */
            /* the scaled embeddings: the CPU's fp32 product rounded once to bf16, bit for bit (the
             * reference's embed * scale in bf16) */
            int64_t bad = 0;
            for (int64_t r = 0; r < rows; r++) bad += got[r * L1] != ltx2_round_bf16(ref[r * L1]);
            CHECK(bad == 0, "hidden state 0 on %s (weights %s): %lld of %lld values are not the CPU's rounded to bf16",
                  dev->name, how, (long long)bad, (long long)rows);
        }
        CHECK(finite && cosine >= GEMMA_DEVICE_MIN_COSINE && rel <= GEMMA_DEVICE_MAX_REL_L2,
              "hidden state %lld on %s (weights %s): cosine %.7f (min %.4f), rel-L2 %.3g (max %.1g)%s", (long long)l,
              dev->name, how, cosine, GEMMA_DEVICE_MIN_COSINE, rel, GEMMA_DEVICE_MAX_REL_L2,
              finite ? "" : ", non-finite");
        if (rel > worst) worst = rel;
    }
    printf("gemma on %s (bf16, weights %s) vs cpu (f32): %lld hidden states, worst rel-L2 %.3g\n", dev->name, how,
           (long long)L1, worst);
}

/* Generation's K/V-cached decoding on the device (w's backend): a left-padded row prefilled up to
 * n0, then one token a call; the final hidden state after the prompt, the first step and the last
 * against the device's whole forward over the same prefix (same dtype: only the attention's row
 * order differs); then generation on the device against the CPU's (wc). */
static void gemma_device_cache_check(ltx2_context *ctx, const ltx2_gemma_weights *w, const ltx2_gemma_weights *wc,
                                     const int32_t *ids, const uint8_t *mask, int64_t S, int64_t n0) {
    const int64_t D = w->cfg.hidden;
    float *a = malloc((size_t)D * sizeof *a), *b = malloc((size_t)D * sizeof *b);
    int64_t *pos = malloc((size_t)S * sizeof *pos);
    ltx2_gemma_kv *kv = NULL;
    ltx2_status st = a && b && pos ? ltx2_gemma_kv_create(ctx, w, S, &kv) : LTX2_ERR_OOM;
    for (int64_t i = 0, real = 0; pos && i < S; i++) pos[i] = mask[i] ? real++ : 1;
    double worst_rel = 0.0, worst_cos = 1.0;
    int64_t step1_allocs = -1; /* the kept pool's allocations after the first decoding step */
    for (int64_t t = n0; st == LTX2_OK && t <= S; t++) {
        const int64_t at = t == n0 ? 0 : t - 1, len = t == n0 ? n0 : 1;
        ltx2_gemma_last_row ka = {w->be, w->cfg.layers, len, D, a}, kb = {w->be, w->cfg.layers, t, D, b};
        st = ltx2_gemma_forward_kv(ctx, w, kv, ids + at, mask + at, pos + at, len, ltx2_gemma_keep_last, &ka);
        if (t == n0 + 1) step1_allocs = ltx2_gemma_kv_act_allocs(kv);
        /* the whole forward (slow on the emulator) at the prompt, the first step past it and the last */
        if (t != n0 && t != n0 + 1 && t != S) continue;
        if (st == LTX2_OK) st = ltx2_gemma_forward_pos(ctx, w, ids, mask, pos, 1, t, ltx2_gemma_keep_last, &kb);
        double ab = 0, aa = 0, bb = 0, d2 = 0;
        for (int64_t d = 0; st == LTX2_OK && d < D; d++)
            ab += (double)a[d] * b[d], aa += (double)b[d] * b[d], bb += (double)a[d] * a[d],
                d2 += ((double)a[d] - b[d]) * ((double)a[d] - b[d]);
        if (st == LTX2_OK) {
            worst_cos = fmin(worst_cos, aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0);
            worst_rel = fmax(worst_rel, aa > 0 ? sqrt(d2 / aa) : sqrt(d2));
        }
    }
    CHECK(st == LTX2_OK, "cached decoding on %s: %s", w->be->name, ltx2_last_error(ctx));
    CHECK(st != LTX2_OK || (step1_allocs > 0 && ltx2_gemma_kv_act_allocs(kv) == step1_allocs),
          "cached decoding on %s: %lld activation allocations after the first step, %lld after the last (the later "
          "steps should take none)", w->be->name, (long long)step1_allocs, (long long)ltx2_gemma_kv_act_allocs(kv));
    /* generation on the device, its LM head there too (the table uploaded), against the CPU's first
     * token (the tiny random model's top logit leads by far: bf16 cannot flip it) */
    if (st == LTX2_OK && wc) {
        int32_t got[4] = {0}, want[4] = {0};
        int64_t ng = 0, nw = 0;
        const ltx2_gemma_gen_params gp = {.max_new_tokens = 4, .align = 8};
        st = ltx2_gemma_generate(ctx, w, ids + n0 - 8, 8, &gp, got, &ng);
        if (st == LTX2_OK) st = ltx2_gemma_generate(ctx, wc, ids + n0 - 8, 8, &gp, want, &nw);
        CHECK(st == LTX2_OK && ng == 4 && nw == 4 && got[0] == want[0], "generation on %s: first token %d, cpu %d: %s",
              w->be->name, got[0], want[0], ltx2_last_error(ctx));
        if (st == LTX2_OK)
            printf("gemma generation on %s (LM head there): first token %d, the CPU's %d\n", w->be->name, got[0],
                   want[0]);
    }
    CHECK(worst_cos >= GEMMA_DEVICE_MIN_COSINE && worst_rel <= GEMMA_DEVICE_MAX_REL_L2,
          "cached decoding on %s: cosine %.7f, rel-L2 %.3g against the whole forward", w->be->name, worst_cos, worst_rel);
    printf("gemma K/V-cached decoding on %s: %lld steps after %lld rows, worst cosine %.7f, rel-L2 %.3g\n",
           w->be->name, (long long)(S - n0), (long long)n0, worst_cos, worst_rel);
    ltx2_gemma_kv_free(kv);
    free(a), free(b), free(pos);
}

/* The image features (the SigLIP tower and the projector, tests/test_gemma_vision.c's small
 * checkpoint: two layers, pooled 2 x 2) on the device in bf16 against the CPU in f32. */
static void gemma_device_vision_check(ltx2_context *ctx, const ltx2_backend *dev) {
    const char *dir = LTX2_SOURCE_DIR "/tests/golden/data/gemma_vision_tiny";
    ltx2_gemma_vision_weights *wc = NULL, *wd = NULL;
    ltx2_status st = ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &wc);
    if (st == LTX2_OK) st = ltx2_gemma_vision_load(ctx, dev, LTX2_BF16, dir, &wd);
    CHECK(st == LTX2_OK, "vision weights on %s: %s", dev->name, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const ltx2_gemma_vision_config *c = &wc->cfg;
        const int64_t n_px = c->channels * c->image_size * c->image_size, n = c->mm_tokens * c->text_hidden;
        float *px = malloc((size_t)n_px * sizeof *px), *ref = malloc((size_t)n * sizeof *ref);
        float *got = malloc((size_t)n * sizeof *got);
        for (int64_t i = 0; px && i < n_px; i++) px[i] = (float)sin(0.37 * (double)i); /* any image */
        st = px && ref && got ? ltx2_gemma_vision_forward(ctx, wc, px, ref) : LTX2_ERR_OOM;
        if (st == LTX2_OK) st = ltx2_gemma_vision_forward(ctx, wd, px, got);
        CHECK(st == LTX2_OK, "vision forward on %s: %s", dev->name, ltx2_last_error(ctx));
        if (st == LTX2_OK) gemma_device_compare(dev, "vision", ref, got, n, 1);
        free(px), free(ref), free(got);
    }
    ltx2_gemma_vision_free(wc);
    ltx2_gemma_vision_free(wd);
}

/* A prompt with an image block (features from the CPU tower, so only the language model differs) on
 * the device against the CPU: the prompt's last final-norm hidden state, through the two-way image
 * block, the window and the causal mask. */
static void gemma_device_image_prompt_check(ltx2_context *ctx, const ltx2_gemma_weights *wc,
                                            const ltx2_gemma_weights *wd, const char *dir) {
    ltx2_gemma_vision_weights *vw = NULL;
    ltx2_status st = ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &vw);
    CHECK(st == LTX2_OK, "vision weights of %s: %s", dir, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    const ltx2_gemma_vision_config *vc = &vw->cfg;
    const int64_t T = vc->mm_tokens, D = wc->cfg.hidden, n_px = vc->channels * vc->image_size * vc->image_size;
    enum { PRE = 23, POST = 20 };
    const int64_t S = PRE + 2 + T + POST;
    int32_t *ids = malloc((size_t)S * sizeof *ids);
    uint8_t *ones = malloc((size_t)S);
    int64_t *pos = malloc((size_t)S * sizeof *pos);
    float *px = malloc((size_t)n_px * sizeof *px), *feat = malloc((size_t)(T * D) * sizeof *feat);
    float *a = malloc((size_t)D * sizeof *a), *b = malloc((size_t)D * sizeof *b);
    for (int64_t i = 0; ids && ones && pos && i < S; i++) {
        ids[i] = i < PRE ? (int32_t)(2 + 7 * i) : i == PRE ? vc->boi_token : i <= PRE + T ? vc->image_token
                 : i == PRE + T + 1 ? vc->eoi_token : (int32_t)(40 + 3 * i);
        ones[i] = 1, pos[i] = i;
    }
    for (int64_t i = 0; px && i < n_px; i++) px[i] = (float)cos(0.11 * (double)i);
    st = ids && ones && pos && px && feat && a && b ? ltx2_gemma_vision_forward(ctx, vw, px, feat) : LTX2_ERR_OOM;
    const ltx2_gemma_images img = {vc->image_token, feat, T};
    const ltx2_gemma_weights *ws[2] = {wc, wd};
    float *outs[2] = {a, b};
    for (int k = 0; k < 2 && st == LTX2_OK; k++) {
        ltx2_gemma_kv *kv = NULL;
        ltx2_gemma_last_row lr = {ws[k]->be, ws[k]->cfg.layers, S, D, outs[k]};
        st = ltx2_gemma_kv_create(ctx, ws[k], S, &kv);
        if (st == LTX2_OK)
            st = ltx2_gemma_forward_kv_images(ctx, ws[k], kv, ids, ones, pos, S, &img, ltx2_gemma_keep_last, &lr);
        ltx2_gemma_kv_free(kv);
    }
    CHECK(st == LTX2_OK, "a prompt with an image on %s: %s", wd->be->name, ltx2_last_error(ctx));
    if (st == LTX2_OK) gemma_device_compare(wd->be, "image prompt", a, b, D, 1);
    free(ids), free(ones), free(pos), free(px), free(feat), free(a), free(b);
    ltx2_gemma_vision_free(vw);
}

static void gemma_device_check(ltx2_context *ctx, const ltx2_backend *dev) {
    const char *dir = LTX2_SOURCE_DIR "/weights/tiny/gemma-6l", *golden = LTX2_SOURCE_DIR
        "/tests/golden/data/gemma_tiny.safetensors";
    ltx2_gemma_weights *wc = NULL, *wd = NULL;
    ltx2_st_file *f = NULL;
    ltx2_status st = ltx2_gemma_weights_load_on(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &wc);
    if (st == LTX2_OK) st = ltx2_gemma_weights_load_on(ctx, dev, LTX2_BF16, dir, &wd);
    if (st == LTX2_OK) st = ltx2_st_open(ctx, golden, &f);
    CHECK(st == LTX2_OK, "gemma device check: %s", ltx2_last_error(ctx));
    const ltx2_st_tensor *ti = f ? ltx2_st_find(f, "input.ids") : NULL, *tm = f ? ltx2_st_find(f, "input.mask") : NULL;
    if (st == LTX2_OK && ti && tm) {
        const int64_t B = ti->shape[0], S = ti->shape[1], D = wc->cfg.hidden, L1 = wc->cfg.layers + 1;
        int32_t *ids = malloc((size_t)(B * S) * sizeof *ids);
        uint8_t *mask = malloc((size_t)(B * S));
        float *ref = malloc((size_t)(B * S * D * L1) * sizeof(float)), *got = malloc((size_t)(B * S * D * L1) * sizeof(float));
        for (int64_t i = 0; i < B * S; i++) {
            int64_t a, m;
            memcpy(&a, (const char *)ti->data + 8 * i, 8);
            memcpy(&m, (const char *)tm->data + 8 * i, 8);
            ids[i] = (int32_t)a, mask[i] = (uint8_t)m;
        }
        st = ltx2_gemma_forward(ctx, wc, ids, mask, B, S, ref);
        if (st == LTX2_OK) st = ltx2_gemma_forward(ctx, wd, ids, mask, B, S, got);
        CHECK(st == LTX2_OK, "gemma forward on %s: %s", dev->name, ltx2_last_error(ctx));
        if (st == LTX2_OK) gemma_device_compare(dev, "loaded", ref, got, B * S * D, L1);
        /* row 0 is left-padded: prefill through its first real token, then decode the rest */
        if (st == LTX2_OK) gemma_device_cache_check(ctx, wd, wc, ids, mask, S, S - 16);
        if (st == LTX2_OK) gemma_device_image_prompt_check(ctx, wc, wd, dir);
        /* weights copied from the CPU's f32 ones (what the bench does): the (1 + w) gains are
         * rounded to bf16 from f32 there, from the file's f32 here; both within the same bounds */
        ltx2_gemma_weights *wt = NULL;
        st = ltx2_gemma_weights_to(ctx, wc, dev, LTX2_BF16, &wt);
        if (st == LTX2_OK) st = ltx2_gemma_forward(ctx, wt, ids, mask, B, S, got);
        CHECK(st == LTX2_OK, "gemma weights copied to %s: %s", dev->name, ltx2_last_error(ctx));
        if (st == LTX2_OK) gemma_device_compare(dev, "copied", ref, got, B * S * D, L1);
        ltx2_gemma_weights_free(wt);
        /* fp8-stored Linears (test_gemma_fp8): on dev the e4m3 weights widen to bf16 before each GEMM;
         * against the CPU's fp8 forward, within the same bounds (the weights hold the same values) */
        ltx2_gemma_weights *fc = NULL, *fd = NULL;
        st = ltx2_gemma_weights_load_fp8_on(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &fc);
        if (st == LTX2_OK) st = ltx2_gemma_weights_load_fp8_on(ctx, dev, LTX2_BF16, dir, &fd);
        if (st == LTX2_OK) st = ltx2_gemma_forward(ctx, fc, ids, mask, B, S, ref);
        if (st == LTX2_OK) st = ltx2_gemma_forward(ctx, fd, ids, mask, B, S, got);
        CHECK(st == LTX2_OK, "gemma fp8 weights on %s: %s", dev->name, ltx2_last_error(ctx));
        if (st == LTX2_OK) gemma_device_compare(dev, "fp8-stored", ref, got, B * S * D, L1);
        ltx2_gemma_weights_free(fc);
        ltx2_gemma_weights_free(fd);
        free(ids), free(mask), free(ref), free(got);
    }
    ltx2_st_close(f);
    ltx2_gemma_weights_free(wc);
    ltx2_gemma_weights_free(wd);
    gemma_device_vision_check(ctx, dev);
}

#endif
