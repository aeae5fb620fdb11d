/* Tiled-decode working memory is bounded by one row band, not by the video: with tiles from a
 * synthetic source (ltx2_vae_tiled_decode_bands_from, a weightless decoder description) the
 * tiler's peak buffer bytes (stats.peak_bytes) do not change with the video height (number of
 * row bands), equal exactly one band window + one output band + one tile for two widths, and
 * with temporal tiling grow with the height only by the temporal carry. Bands arrive top to
 * bottom per frame range, frame ranges in order, and assemble to the frames of the full-frame
 * stream bitwise. (Bitwise parity with ltx-core / batching: test_vae_tiled.c, test_vae_tcond.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/video_vae.h"
#include "pipeline/tiling.h"
#include "test_util.h"

#define LAT_C 4 /* latent channels of the synthetic decoder */
#define OUT_C 3 /* video channels */
#define LAT_F 3 /* 17 frames */

/* Deterministic tile values from the tile index (an LCG), standing in for decoded tiles. */
static ltx2_status fake_tile(ltx2_context *ctx, const ltx2_vae_tile_info *info, float *out, void *user) {
    (void)ctx;
    (void)user;
    const int64_t *o = info->out_shape, n = o[0] * o[1] * o[2] * o[3] * o[4];
    uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)info->index;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        out[i] = (float)(s >> 40) / (float)(1 << 24) - 0.5f;
    }
    return LTX2_OK;
}

/* Checks the band order and copies bands into a full video (if given). */
typedef struct band_check {
    int64_t vs[5];
    float *video;
    int64_t next_frame, range_first, range_n, next_row, bad;
} band_check;

static ltx2_status take_band(ltx2_context *ctx, const ltx2_tensor *band, int64_t first_frame, int64_t first_row,
                             void *user) {
    (void)ctx;
    band_check *c = user;
    const int64_t B = band->shape[0], n = band->shape[1], rows = band->shape[2], rs = c->vs[3] * c->vs[4];
    if (first_row == 0) {
        c->bad += c->next_row != 0 || first_frame != c->next_frame;
        c->range_first = first_frame, c->range_n = n;
    } else {
        c->bad += first_row != c->next_row || first_frame != c->range_first || n != c->range_n;
    }
    c->bad += band->shape[3] != c->vs[3] || band->shape[4] != c->vs[4] || first_row + rows > c->vs[2];
    c->next_row = first_row + rows;
    if (c->next_row == c->vs[2]) c->next_row = 0, c->next_frame = first_frame + n;
    if (c->video)
        for (int64_t b = 0; b < B; b++)
            for (int64_t f = 0; f < n; f++)
                memcpy(c->video + ((b * c->vs[1] + first_frame + f) * c->vs[2] + first_row) * rs,
                       (const float *)band->data + (b * n + f) * rows * rs, (size_t)(rows * rs) * sizeof(float));
    return LTX2_OK;
}

static ltx2_status take_frames(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first, void *user) {
    (void)ctx;
    band_check *c = user;
    const int64_t fs = c->vs[2] * c->vs[3] * c->vs[4], n = frames->shape[1];
    for (int64_t b = 0; b < c->vs[0]; b++)
        memcpy(c->video + (b * c->vs[1] + first) * fs, (const float *)frames->data + b * n * fs,
               (size_t)(n * fs) * sizeof(float));
    return LTX2_OK;
}

/* Peak bytes of a band decode of latent [B, LAT_F, lh, lw]; checks the band order on the way. */
static int64_t peak_of(ltx2_context *ctx, const ltx2_video_decoder *dec, int64_t B, int64_t lh, int64_t lw,
                       const ltx2_vae_tiling *t) {
    const int64_t ls[5] = {B, LAT_F, lh, lw, LAT_C};
    band_check c = {0};
    ltx2_vae_tiling_stats st = {0};
    CHECK(ltx2_video_decoder_out_shape(ctx, dec, ls, c.vs) == LTX2_OK, "%s", ltx2_last_error(ctx));
    CHECK(ltx2_vae_tiled_decode_bands_from(ctx, dec, ls, t, fake_tile, NULL, take_band, &c, &st) == LTX2_OK, "%s",
          ltx2_last_error(ctx));
    CHECK(c.bad == 0 && c.next_frame == c.vs[1] && c.next_row == 0, "%lldx%lld: bands out of order (%lld bad)",
          (long long)lh, (long long)lw, (long long)c.bad);
    return st.peak_bytes;
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    ltx2_video_decoder dec; /* shapes only: the source supplies the tiles */
    memset(&dec, 0, sizeof dec);
    dec.cfg.latent_channels = LAT_C;
    dec.cfg.out_channels = OUT_C;
    dec.cfg.decoder_padding = LTX2_VAE_PAD_ZEROS;
    dec.space_factor = 32;
    dec.time_factor = 8;
    const int64_t F = 8 * (LAT_F - 1) + 1, B = 1;

    /* Spatial tiling only (tile 128 px = 4 latents, overlap 64 px). Tiles follow the aspect ratio
     * (the short side's tile is max(3, round(4 * short / long)) latents), so heights compare at a
     * fixed aspect class: 512, 1024 and 2048 rows of 256 px all get 128 x 96 px tiles. */
    const ltx2_vae_tiling sp = {.tile_px = 128, .overlap_px = 64, .tile_batch = 1};
    const int64_t p16 = peak_of(ctx, &dec, B, 16, 8, &sp), p32 = peak_of(ctx, &dec, B, 32, 8, &sp);
    const int64_t p64 = peak_of(ctx, &dec, B, 64, 8, &sp);
    CHECK(p16 > 0 && p16 == p32 && p16 == p64,
          "peak depends on the height: %lld / %lld / %lld bytes for 512 / 1024 / 2048 rows", (long long)p16,
          (long long)p32, (long long)p64);
    /* Square videos: exactly one band, whatever the width: window [F, 128 rows, W] x (B*C sums +
     * 1 weight), output band [B, F, 128, W, C] and one 128 x 128 tile (a full-frame buffer of the
     * 1024 px video would be 8x the window). */
    for (int64_t lw = 8; lw <= 32; lw *= 4) {
        const int64_t W = 32 * lw, rows = 128, fs = (int64_t)sizeof(float);
        const int64_t want = F * rows * W * (B * OUT_C + 1) * fs + B * F * rows * W * OUT_C * fs +
                             B * F * rows * rows * OUT_C * fs;
        const int64_t got = peak_of(ctx, &dec, B, lw, lw, &sp);
        CHECK(got == want, "width %lld: peak %lld bytes, one band is %lld", (long long)W, (long long)got,
              (long long)want);
    }

    /* Temporal tiling too: only the carry (overlap frames x full frame) grows with the height. */
    const ltx2_vae_tiling tt = {.tile_px = 128, .overlap_px = 64, .tile_frames = 16, .overlap_frames = 8, .tile_batch = 1};
    const int64_t q8 = peak_of(ctx, &dec, B, 8, 8, &tt), q64 = peak_of(ctx, &dec, B, 64, 8, &tt);
    /* Temporal tiles of 2 latents, overlap 1: groups [0,9), [0,17) frames; group 0 carries 9 frames. */
    const int64_t carry_per_row = 9 * 256 * (B * OUT_C + 1) * (int64_t)sizeof(float);
    CHECK(q8 > 0 && q64 - q8 <= (2048 - 256) * carry_per_row, "temporal: peak %lld -> %lld bytes for 256 -> 2048 rows",
          (long long)q8, (long long)q64);

    /* Bands assemble to the full-frame stream's frames bitwise (B = 2, temporal + spatial tiles). */
    {
        const int64_t ls[5] = {2, LAT_F, 7, 5, LAT_C};
        band_check a = {0}, b = {0};
        CHECK(ltx2_video_decoder_out_shape(ctx, &dec, ls, a.vs) == LTX2_OK, "%s", ltx2_last_error(ctx));
        memcpy(b.vs, a.vs, sizeof a.vs);
        const int64_t n = a.vs[0] * a.vs[1] * a.vs[2] * a.vs[3] * a.vs[4];
        a.video = calloc((size_t)n, sizeof(float));
        b.video = calloc((size_t)n, sizeof(float));
        ltx2_vae_tiling_stats sa = {0}, sb = {0};
        CHECK(a.video && b.video, "alloc");
        if (a.video && b.video) {
            CHECK(ltx2_vae_tiled_decode_bands_from(ctx, &dec, ls, &tt, fake_tile, NULL, take_band, &a, &sa) == LTX2_OK,
                  "%s", ltx2_last_error(ctx));
            CHECK(ltx2_vae_tiled_decode_stream_from(ctx, &dec, ls, &tt, fake_tile, NULL, take_frames, &b, &sb) ==
                      LTX2_OK,
                  "%s", ltx2_last_error(ctx));
            CHECK(a.bad == 0 && memcmp(a.video, b.video, (size_t)n * sizeof(float)) == 0 && sa.n_tiles == sb.n_tiles &&
                      sa.n_tiles > 4,
                  "bands and frames differ (%lld bad bands, %lld tiles)", (long long)a.bad, (long long)sa.n_tiles);
            CHECK(sb.peak_bytes > sa.peak_bytes, "frame assembly not metered: %lld vs %lld", (long long)sb.peak_bytes,
                  (long long)sa.peak_bytes);
        }
        free(a.video);
        free(b.video);
    }
    ltx2_context_free(ctx);
    return test_finish();
}
