/* Gemma-3's image features (ltx2_gemma_vision_forward: the SigLIP tower and the multimodal
 * projector) against transformers' get_image_features (tests/golden/gen_gemma_vision.py) on two
 * checkpoints: the embedded tiny Gemma in Google's layout (a 2 x 2 patch grid, no pooling) and a
 * small one in transformers' save layout (two layers, a 4 x 4 grid pooled 2 x 2), within
 * VISION_TOL; then a text-only Gemma refused by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "io/safetensors.h"
#include "model/gemma_vision.h"
#include "test_util.h"

#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/gemma_vision.safetensors"
/* fp32 against fp32 through a few layers: the GEMMs' and norms' summation orders, ~1e-7 per op */
#define VISION_TOL 1e-5

static void check(ltx2_context *ctx, const ltx2_st_file *f, const char *name, const char *dir) {
    ltx2_gemma_vision_weights *w = NULL;
    const ltx2_status st = ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &w);
    CHECK(st == LTX2_OK, "%s: load: %s", name, ltx2_last_error(ctx));
    if (!w) return;
    char key[64];
    int64_t n_px = 0, n_ft = 0;
    snprintf(key, sizeof key, "%s.pixels", name);
    float *pixels = ltx2_st_read_f32(ctx, f, key, &n_px);
    snprintf(key, sizeof key, "%s.features", name);
    float *want = ltx2_st_read_f32(ctx, f, key, &n_ft);
    float *got = malloc((size_t)(n_ft ? n_ft : 1) * sizeof *got);
    const bool shapes = w && pixels && want && got && n_ft == w->cfg.mm_tokens * w->cfg.text_hidden &&
                        n_px == w->cfg.channels * w->cfg.image_size * w->cfg.image_size;
    CHECK(shapes, "%s: golden tensors and their shapes against the config", name);
    if (shapes) {
        const ltx2_status fs = ltx2_gemma_vision_forward(ctx, w, pixels, got);
        CHECK(fs == LTX2_OK, "%s: forward: %s", name, ltx2_last_error(ctx));
        if (fs == LTX2_OK) {
            const double e = test_rel_l2(got, want, n_ft);
            printf("%s (%s): %lld px, %lld layers, %lld image tokens: rel-L2 %.3g to transformers'\n", name,
                   w->tower, (long long)w->cfg.image_size, (long long)w->cfg.layers, (long long)w->cfg.mm_tokens, e);
            CHECK(e <= VISION_TOL, "%s: features rel-L2 %.3g", name, e);
        }
    }
    free(pixels), free(want), free(got);
    ltx2_gemma_vision_free(w);
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    ltx2_st_file *f = NULL;
    CHECK(ltx2_st_open(ctx, GOLDEN, &f) == LTX2_OK, "golden: %s", ltx2_last_error(ctx));
    if (f) {
        check(ctx, f, "tiny", LTX2_SOURCE_DIR "/weights/tiny/gemma");
        check(ctx, f, "small", LTX2_SOURCE_DIR "/tests/golden/data/gemma_vision_tiny");
    }
    ltx2_st_close(f);
    /* a directory without the tower: the text-only layout the test goldens also use */
    ltx2_gemma_vision_weights *w = NULL;
    CHECK(ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, LTX2_SOURCE_DIR "/weights/tiny/nonexistent",
                                 &w) != LTX2_OK && !w,
          "a missing directory is refused");
    ltx2_context_free(ctx);
    return test_finish();
}
