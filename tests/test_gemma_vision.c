/* Gemma-3's image features (ltx2_gemma_vision_forward: the SigLIP tower and the multimodal
 * projector) against transformers' get_image_features (tests/golden/gen_gemma_vision.py) on two
 * checkpoints: the embedded tiny Gemma in Google's layout (a 2 x 2 patch grid, no pooling) and a
 * small one in transformers' save layout (two layers, a 4 x 4 grid pooled 2 x 2), within
 * VISION_TOL; then the tiny Gemma's language model with those features in its prompt (the image
 * tokens' embeddings replaced, the image block attending to itself both ways): the prompt's last
 * final-norm hidden state within VISION_TOL and greedy generation id for id; a missing directory
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_plan.h"
#include "io/safetensors.h"
#include "model/gemma_generate.h"
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

/* The tiny Gemma's language model with the golden's image in its prompt. */
static void check_lm(ltx2_context *ctx, const ltx2_st_file *f) {
    const char *dir = LTX2_SOURCE_DIR "/weights/tiny/gemma";
    ltx2_gemma_vision_weights *vw = NULL;
    ltx2_gemma_weights *w = NULL;
    ltx2_status st = ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &vw);
    if (st == LTX2_OK) st = ltx2_gemma_weights_load_on(ctx, ltx2_backend_cpu(), LTX2_F32, dir, &w);
    int64_t n_px = 0, n_ids = 0, n_h = 0, n_gen = 0;
    float *pixels = ltx2_st_read_f32(ctx, f, "tiny.pixels", &n_px), *want_h = ltx2_st_read_f32(ctx, f, "lm.hidden_last", &n_h);
    const ltx2_st_tensor *ti = ltx2_st_find(f, "lm.ids"), *tg = ltx2_st_find(f, "lm.generated");
    CHECK(st == LTX2_OK && pixels && want_h && ti && tg, "lm golden and weights: %s", ltx2_last_error(ctx));
    if (st != LTX2_OK || !pixels || !want_h || !ti || !tg) goto out;
    n_ids = ti->shape[0], n_gen = tg->shape[0];
    const int64_t D = w->cfg.hidden, T = vw->cfg.mm_tokens;
    int32_t *ids = malloc((size_t)n_ids * sizeof *ids), *gen = malloc((size_t)(n_gen + 1) * sizeof *gen);
    uint8_t *ones = malloc((size_t)n_ids);
    int64_t *pos = malloc((size_t)n_ids * sizeof *pos);
    float *feat = malloc((size_t)(T * D) * sizeof *feat), *h = malloc((size_t)D * sizeof *h);
    for (int64_t i = 0; ids && ones && pos && i < n_ids; i++) {
        int64_t a;
        memcpy(&a, (const char *)ti->data + 8 * i, 8);
        ids[i] = (int32_t)a, ones[i] = 1, pos[i] = i;
    }
    st = ids && gen && ones && pos && feat && h ? ltx2_gemma_vision_forward(ctx, vw, pixels, feat) : LTX2_ERR_OOM;
    const ltx2_gemma_images img = {vw->cfg.image_token, feat, T};
    ltx2_gemma_kv *kv = NULL;
    if (st == LTX2_OK) st = ltx2_gemma_kv_create(ctx, w, n_ids, &kv);
    ltx2_gemma_last_row lr = {w->be, w->cfg.layers, n_ids, D, h};
    if (st == LTX2_OK) st = ltx2_gemma_forward_kv_images(ctx, w, kv, ids, ones, pos, n_ids, &img, ltx2_gemma_keep_last, &lr);
    CHECK(st == LTX2_OK, "the prompt with its image: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const double e = test_rel_l2(h, want_h, D);
        printf("prompt with an image (%lld tokens, %lld image): last hidden state rel-L2 %.3g to transformers'\n",
               (long long)n_ids, (long long)T, e);
        CHECK(e <= VISION_TOL, "last hidden state rel-L2 %.3g", e);
    }
    /* greedy generation after ltx-core's left padding, stopping at the config's EOS ids */
    const int32_t stops[2] = {1, 106};
    const ltx2_gemma_gen_params gp = {.max_new_tokens = n_gen, .stop_ids = stops, .n_stop = 2, .align = 8,
                                      .pad_id = 0, .images = &img};
    int64_t n_out = 0;
    if (st == LTX2_OK) st = ltx2_gemma_generate(ctx, w, ids, n_ids, &gp, gen, &n_out);
    bool same = st == LTX2_OK && n_out == n_gen;
    for (int64_t t = 0; same && t < n_gen; t++) {
        int64_t a;
        memcpy(&a, (const char *)tg->data + 8 * t, 8);
        same = gen[t] == (int32_t)a;
    }
    CHECK(same, "generation with the image: %lld ids, %lld expected: %s", (long long)n_out, (long long)n_gen,
          ltx2_last_error(ctx));
    if (same) printf("generation with the image: %lld new ids equal transformers' greedy generate\n", (long long)n_gen);
    /* one feature row short: refused by count */
    const ltx2_gemma_images short_img = {vw->cfg.image_token, feat, T - 1};
    const ltx2_gemma_gen_params gs = {.max_new_tokens = 1, .images = &short_img};
    CHECK(ltx2_gemma_generate(ctx, w, ids, n_ids, &gs, gen, &n_out) == LTX2_ERR_SHAPE,
          "a feature count unlike the image tokens' is refused: %s", ltx2_last_error(ctx));
    ltx2_gemma_kv_free(kv);
    free(ids), free(gen), free(ones), free(pos), free(feat), free(h);
out:
    free(pixels), free(want_h);
    ltx2_gemma_weights_free(w);
    ltx2_gemma_vision_free(vw);
}

/* ltx2_gemma_vision_device_bytes against what the code holds: both towers loaded onto the planning
 * backend in bf16 and their forward run there (each allocation rounded to 256 bytes); and the 12B's
 * SigLIP-400M by its config alone. */
static void check_device_bytes(ltx2_context *ctx, const char *dir) {
    ltx2_backend *plan = NULL;
    ltx2_gemma_vision_weights *w = NULL;
    ltx2_status st = ltx2_backend_plan_create(ctx, &plan);
    if (st == LTX2_OK) st = ltx2_gemma_vision_load(ctx, plan, LTX2_BF16, dir, &w);
    CHECK(st == LTX2_OK, "%s on the plan backend: %s", dir, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const ltx2_gemma_vision_config *c = &w->cfg;
        float *px = calloc((size_t)(c->channels * c->image_size * c->image_size), sizeof *px);
        float *feat = malloc((size_t)(c->mm_tokens * c->text_hidden) * sizeof *feat);
        st = px && feat ? ltx2_gemma_vision_forward(ctx, w, px, feat) : LTX2_ERR_OOM;
        CHECK(st == LTX2_OK, "vision forward on the plan backend: %s", ltx2_last_error(ctx));
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(plan, &cur, &peak);
        const uint64_t est = ltx2_gemma_vision_device_bytes(c, LTX2_BF16);
        /* at most one 256-byte rounding per tensor: ~16 per layer and ~20 more */
        const uint64_t slack = (uint64_t)(16 * c->layers + 20) * 256;
        CHECK(est <= peak && peak - est <= slack, "%s: vision device bytes: estimated %llu, held %zu", dir,
              (unsigned long long)est, peak);
        printf("%s: vision device bytes estimated %llu, measured peak %zu\n", dir, (unsigned long long)est, peak);
        free(px), free(feat);
    }
    ltx2_gemma_vision_free(w);
    ltx2_backend_free(plan);
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    ltx2_st_file *f = NULL;
    CHECK(ltx2_st_open(ctx, GOLDEN, &f) == LTX2_OK, "golden: %s", ltx2_last_error(ctx));
    if (f) {
        check(ctx, f, "tiny", LTX2_SOURCE_DIR "/weights/tiny/gemma");
        check(ctx, f, "small", LTX2_SOURCE_DIR "/tests/golden/data/gemma_vision_tiny");
        check_lm(ctx, f);
    }
    check_device_bytes(ctx, LTX2_SOURCE_DIR "/weights/tiny/gemma");
    check_device_bytes(ctx, LTX2_SOURCE_DIR "/tests/golden/data/gemma_vision_tiny");
    ltx2_st_close(f);
    /* a directory without the tower: the text-only layout the test goldens also use */
    ltx2_gemma_vision_weights *w = NULL;
    CHECK(ltx2_gemma_vision_load(ctx, ltx2_backend_cpu(), LTX2_F32, LTX2_SOURCE_DIR "/weights/tiny/nonexistent",
                                 &w) != LTX2_OK && !w,
          "a missing directory is refused");
    ltx2_context_free(ctx);
    return test_finish();
}
