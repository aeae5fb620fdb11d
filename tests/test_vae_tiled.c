/* Tiled and tile-batched video-VAE decode / encode against ltx-core 1.0.0's tiled_decode /
 * tiled_encode (goldens: tests/golden/data/vae_tiled_<v>.safetensors from
 * gen_vae_tiled_goldens.py, NCDHW; the decoded video is stored every 4th row/column). Also:
 * tile batching gives bit-identical output for batch 1, 2, 3 and "all" on a plan with several
 * shape groups and a partial last batch; bad settings fail before any work with clear errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/vae_config.h"
#include "model/video_vae.h"
#include "pipeline/tiling.h"
#include "test_util.h"

/* Same budget as test_vae_golden.c (fp32 both sides, different summation orders). */
#define TILED_REL_L2_TOL 1e-5
/* Golden subsampling of the decoded video's rows and columns (gen_vae_tiled_goldens.py). */
#define DEC_STRIDE 4
/* A batch size larger than any shape group. */
#define BIG_BATCH 64

static const ltx2_vae_tiling DEC_TILING = {.tile_px = 96, .overlap_px = 32, .tile_frames = 24, .overlap_frames = 8, .tile_batch = 1};
static const ltx2_vae_tiling ENC_TILING = {.tile_px = 96, .overlap_px = 64, .tile_frames = 24, .overlap_frames = 16, .tile_batch = 1};

static void expect_error(ltx2_context *ctx, ltx2_status st, const char *needle, const char *what) {
    CHECK(st == LTX2_ERR_INVALID_ARG, "%s: status %s (%s)", what, ltx2_status_name(st), ltx2_last_error(ctx));
    CHECK(strstr(ltx2_last_error(ctx), needle) != NULL, "%s: error \"%s\" lacks \"%s\"", what, ltx2_last_error(ctx),
          needle);
    ltx2_clear_error(ctx);
}

static void decode_checks(ltx2_context *ctx, const char *v, const ltx2_video_decoder *dec, const ltx2_st_file *gold) {
    int64_t ls[5], gs[5], vs[5];
    float *lat = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(gold, "tiled_decode.in"), ls);
    float *ref = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(gold, "tiled_decode.out_sub"), gs);
    CHECK(lat && ref, "%s: golden tensors missing", v);
    if (!lat || !ref) goto done;
    CHECK(ltx2_video_decoder_out_shape(ctx, dec, ls, vs) == LTX2_OK, "%s: %s", v, ltx2_last_error(ctx));
    const int64_t n = vs[0] * vs[1] * vs[2] * vs[3] * vs[4];
    float *base = calloc((size_t)n, sizeof(float)), *vid = calloc((size_t)n, sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls), bt = ltx2_tensor_make(base, LTX2_F32, 5, vs);
    ltx2_vae_tiling_stats s1 = {0}, sp = {0};
    ltx2_status st = ltx2_vae_tiled_decode(ctx, dec, &lt, &DEC_TILING, &bt, &s1);
    CHECK(st == LTX2_OK, "%s: tiled decode: %s", v, ltx2_last_error(ctx));
    CHECK(s1.n_tiles == 12 && s1.n_temporal == 2 && s1.n_shapes >= 3 && s1.n_vae_calls == 12,
          "%s: plan %lld tiles %lld temporal %lld shapes %lld calls", v, (long long)s1.n_tiles,
          (long long)s1.n_temporal, (long long)s1.n_shapes, (long long)s1.n_vae_calls);
    /* subsample and compare with ltx-core */
    float *sub = malloc((size_t)(gs[0] * gs[1] * gs[2] * gs[3] * gs[4]) * sizeof(float));
    CHECK(gs[1] == vs[1] && gs[2] == (vs[2] + DEC_STRIDE - 1) / DEC_STRIDE &&
              gs[3] == (vs[3] + DEC_STRIDE - 1) / DEC_STRIDE,
          "%s: golden shape does not match the decoded video", v);
    for (int64_t b = 0; b < gs[0]; b++)
        for (int64_t t = 0; t < gs[1]; t++)
            for (int64_t h = 0; h < gs[2]; h++)
                for (int64_t w = 0; w < gs[3]; w++)
                    for (int64_t c = 0; c < gs[4]; c++)
                        sub[(((b * gs[1] + t) * gs[2] + h) * gs[3] + w) * gs[4] + c] =
                            base[(((b * vs[1] + t) * vs[2] + h * DEC_STRIDE) * vs[3] + w * DEC_STRIDE) * vs[4] + c];
    const double e = test_rel_l2(sub, ref, gs[0] * gs[1] * gs[2] * gs[3] * gs[4]);
    CHECK(e <= TILED_REL_L2_TOL, "%s: tiled decode vs ltx-core rel-L2 %.3g", v, e);
    if (getenv("LTX2_TEST_VERBOSE")) printf("  %s tiled decode rel-L2 %.3g\n", v, e);
    free(sub);

    /* batching: identical bits for every batch size, fewer calls */
    const int batches[] = {2, 3, BIG_BATCH};
    for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
        ltx2_vae_tiling t = DEC_TILING;
        t.tile_batch = batches[i];
        ltx2_vae_tiling_stats s = {0};
        ltx2_tensor vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
        memset(vid, 0xff, (size_t)n * sizeof(float));
        st = ltx2_vae_tiled_decode(ctx, dec, &lt, &t, &vt, &s);
        CHECK(st == LTX2_OK, "%s: batch %d: %s", v, batches[i], ltx2_last_error(ctx));
        CHECK(memcmp(vid, base, (size_t)n * sizeof(float)) == 0, "%s: batch %d differs from batch 1", v, batches[i]);
        CHECK(ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, &sp) == LTX2_OK && sp.n_vae_calls == s.n_vae_calls,
              "%s: batch %d: plan predicts %lld calls, ran %lld", v, batches[i], (long long)sp.n_vae_calls,
              (long long)s.n_vae_calls);
        CHECK(s.n_vae_calls < s1.n_vae_calls, "%s: batch %d made %lld calls", v, batches[i], (long long)s.n_vae_calls);
    }
    /* untiled settings (0 = off) equal the plain decoder */
    {
        ltx2_vae_tiling off = {.tile_batch = 1};
        ltx2_tensor vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
        CHECK(ltx2_vae_tiled_decode(ctx, dec, &lt, &off, &vt, NULL) == LTX2_OK, "%s: untiled: %s", v,
              ltx2_last_error(ctx));
        CHECK(ltx2_video_decoder_decode(ctx, dec, &lt, &bt, NULL, NULL) == LTX2_OK, "%s", ltx2_last_error(ctx));
        CHECK(memcmp(vid, base, (size_t)n * sizeof(float)) == 0, "%s: untiled tiling differs from decode", v);
    }
    /* bad settings: errors before any work */
    {
        ltx2_vae_tiling t = DEC_TILING;
        t.tile_batch = 0;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "batch", "batch 0");
        t = DEC_TILING, t.tile_batch = -3;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "batch", "batch -3");
        t = DEC_TILING, t.tile_px = 100;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "multiples of 32", "tile 100 px");
        t = DEC_TILING, t.overlap_px = 96;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "smaller than", "overlap = tile");
        t = DEC_TILING, t.tile_frames = 12;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "multiples of 8", "12 frames");
        t = DEC_TILING, t.tile_frames = 8, t.overlap_frames = 0;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "minimum", "8-frame tile");
        t = DEC_TILING, t.tile_px = 0;
        expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, ls, &t, NULL), "without a tile size", "overlap only");
        if (dec->cfg.decoder_padding == LTX2_VAE_PAD_REFLECT) {
            /* 2 latents, no overlap on a 3-latent axis leaves a 1-latent edge tile */
            t = DEC_TILING, t.tile_px = 64, t.overlap_px = 0;
            const int64_t l3[5] = {1, 5, 3, 3, 8};
            expect_error(ctx, ltx2_vae_tiled_decode_plan(ctx, dec, l3, &t, NULL), "reflect", "1-latent tile");
        }
        ltx2_tensor vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
        t = DEC_TILING, t.tile_batch = 0;
        memset(vid, 0x7f, (size_t)n * sizeof(float));
        expect_error(ctx, ltx2_vae_tiled_decode(ctx, dec, &lt, &t, &vt, NULL), "batch", "decode with batch 0");
        CHECK(((unsigned char *)vid)[0] == 0x7f, "%s: a failed decode wrote output", v);
    }
    free(base);
    free(vid);
done:
    free(lat);
    free(ref);
}

static void encode_checks(ltx2_context *ctx, const char *v, const ltx2_video_encoder *enc, const ltx2_st_file *gold) {
    int64_t gs[5];
    float *ref = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(gold, "tiled_encode.out"), gs);
    CHECK(ref != NULL, "%s: golden tiled_encode.out missing", v);
    if (!ref) return;
    const int64_t vs[5] = {1, 33, 128, 160, 3};
    float *vid = malloc((size_t)(vs[1] * vs[2] * vs[3] * 3) * sizeof(float));
    for (int64_t f = 0; f < vs[1]; f++)
        for (int64_t h = 0; h < vs[2]; h++)
            for (int64_t w = 0; w < vs[3]; w++)
                for (int64_t c = 0; c < 3; c++)
                    vid[((f * vs[2] + h) * vs[3] + w) * 3 + c] =
                        (float)((7 * f + 3 * h + 5 * w + 11 * c) % 17) / 8.0f - 1.0f;
    const int64_t n = gs[0] * gs[1] * gs[2] * gs[3] * gs[4];
    float *lat = malloc((size_t)n * sizeof(float)), *lat2 = malloc((size_t)n * sizeof(float));
    ltx2_tensor vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs), lt = ltx2_tensor_make(lat, LTX2_F32, 5, gs);
    ltx2_vae_tiling_stats s = {0};
    CHECK(ltx2_vae_tiled_encode(ctx, enc, &vt, &ENC_TILING, &lt, &s) == LTX2_OK, "%s: tiled encode: %s", v,
          ltx2_last_error(ctx));
    const double e = test_rel_l2(lat, ref, n);
    CHECK(e <= TILED_REL_L2_TOL, "%s: tiled encode vs ltx-core rel-L2 %.3g", v, e);
    CHECK(s.n_tiles == 18, "%s: encode plan has %lld tiles, expected 3x2x3", v, (long long)s.n_tiles);
    if (getenv("LTX2_TEST_VERBOSE")) printf("  %s tiled encode rel-L2 %.3g (%lld tiles)\n", v, e, (long long)s.n_tiles);
    ltx2_vae_tiling t = ENC_TILING;
    t.tile_batch = 4;
    ltx2_tensor lt2 = ltx2_tensor_make(lat2, LTX2_F32, 5, gs);
    ltx2_vae_tiling_stats s4 = {0};
    CHECK(ltx2_vae_tiled_encode(ctx, enc, &vt, &t, &lt2, &s4) == LTX2_OK, "%s: %s", v, ltx2_last_error(ctx));
    CHECK(memcmp(lat, lat2, (size_t)n * sizeof(float)) == 0 && s4.n_vae_calls < s.n_vae_calls,
          "%s: batched encode differs (%lld vs %lld calls)", v, (long long)s4.n_vae_calls, (long long)s.n_vae_calls);
    t = ENC_TILING, t.overlap_px = 32;
    expect_error(ctx, ltx2_vae_tiled_encode(ctx, enc, &vt, &t, &lt2, NULL), "encode minimum", "encode overlap 32");
    t = ENC_TILING, t.overlap_frames = 8;
    expect_error(ctx, ltx2_vae_tiled_encode(ctx, enc, &vt, &t, &lt2, NULL), "encode minimum", "encode overlap 8 fr");
    free(vid);
    free(lat);
    free(lat2);
    free(ref);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    const char *versions[] = {"2.0", "2.3"};
    for (int i = 0; i < 2; i++) {
        char wpath[1024], gpath[1024];
        snprintf(wpath, sizeof(wpath), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, versions[i]);
        snprintf(gpath, sizeof(gpath), "%s/tests/golden/data/vae_tiled_%s.safetensors", LTX2_SOURCE_DIR, versions[i]);
        ltx2_st_set *set = NULL;
        ltx2_st_file *gold = NULL;
        ltx2_vae_config cfg;
        ltx2_video_decoder *dec = NULL;
        ltx2_video_encoder *enc = NULL;
        CHECK(ltx2_st_set_open(ctx, wpath, &set) == LTX2_OK, "%s", ltx2_last_error(ctx));
        CHECK(ltx2_st_open(ctx, gpath, &gold) == LTX2_OK, "%s", ltx2_last_error(ctx));
        if (set && gold && ltx2_vae_config_from_file(ctx, set->files[0], &cfg) == LTX2_OK &&
            ltx2_video_decoder_load(ctx, set, "vae.", &cfg, &dec) == LTX2_OK &&
            ltx2_video_encoder_load(ctx, set, "vae.", &cfg, &enc) == LTX2_OK) {
            decode_checks(ctx, versions[i], dec, gold);
            encode_checks(ctx, versions[i], enc, gold);
        } else {
            CHECK(0, "%s: setup failed: %s", versions[i], ltx2_last_error(ctx));
        }
        ltx2_video_decoder_free(dec);
        ltx2_video_encoder_free(enc);
        ltx2_st_close(gold);
        ltx2_st_set_close(set);
    }
    ltx2_context_free(ctx);
    return test_finish();
}
