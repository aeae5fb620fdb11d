/* Tiled-decode working memory is bounded by the tile geometry, not by the video: with tiles from
 * a synthetic source (ltx2_vae_tiled_decode_blocks_from, a weightless decoder description) the
 * tiler's peak buffer bytes (stats.peak_bytes) do not change with the video height, grow with the
 * width only by the horizontal overlap strip (not by a tile-tall band), and with temporal tiling
 * grow with the frame size only by the temporal carry. Blocks cover every pixel of each frame
 * range exactly once, ranges arrive in frame order, and blocks assemble to the frames of the
 * full-frame stream bitwise. (Bitwise parity with ltx-core / batching: test_vae_tiled.c,
 * test_vae_tcond.c.) */
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

/* Checks the block contract and copies blocks into a full video (if given). */
typedef struct block_check {
    int64_t vs[5];
    float *video;
    uint8_t *cover;                 /* per pixel of the current range: blocks seen */
    int64_t next_frame, range_first, range_n, covered, bad;
    bool in_range;
} block_check;

static ltx2_status take_block(ltx2_context *ctx, const ltx2_tensor *blk, const ltx2_vae_block_pos *pos, void *user) {
    (void)ctx;
    block_check *c = user;
    const int64_t B = blk->shape[0], n = blk->shape[1], rows = blk->shape[2], cols = blk->shape[3];
    const int64_t H = c->vs[2], W = c->vs[3], C = c->vs[4];
    if (!c->in_range) {
        c->bad += pos->first_frame != c->next_frame;
        c->range_first = pos->first_frame, c->range_n = n, c->covered = 0, c->in_range = true;
        memset(c->cover, 0, (size_t)(H * W));
    }
    c->bad += pos->first_frame != c->range_first || n != c->range_n || blk->shape[4] != C;
    c->bad += pos->first_row < 0 || pos->first_col < 0 || pos->first_row + rows > H || pos->first_col + cols > W;
    if (c->bad) return LTX2_OK;
    for (int64_t y = 0; y < rows; y++)
        for (int64_t x = 0; x < cols; x++) c->bad += c->cover[(pos->first_row + y) * W + pos->first_col + x]++ != 0;
    c->covered += rows * cols;
    c->bad += pos->range_done != (c->covered == H * W);
    if (pos->range_done) c->in_range = false, c->next_frame = pos->first_frame + n;
    if (c->video)
        for (int64_t b = 0; b < B; b++)
            for (int64_t f = 0; f < n; f++)
                for (int64_t y = 0; y < rows; y++)
                    memcpy(c->video + (((b * c->vs[1] + pos->first_frame + f) * H + pos->first_row + y) * W +
                                       pos->first_col) * C,
                           (const float *)blk->data + ((b * n + f) * rows + y) * cols * C,
                           (size_t)(cols * C) * sizeof(float));
    return LTX2_OK;
}

static ltx2_status take_frames(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first, void *user) {
    (void)ctx;
    block_check *c = user;
    const int64_t fs = c->vs[2] * c->vs[3] * c->vs[4], n = frames->shape[1];
    for (int64_t b = 0; b < c->vs[0]; b++)
        memcpy(c->video + (b * c->vs[1] + first) * fs, (const float *)frames->data + b * n * fs,
               (size_t)(n * fs) * sizeof(float));
    return LTX2_OK;
}

/* Peak bytes of a block decode of latent [B, LAT_F, lh, lw]; checks the block contract on the way. */
static int64_t peak_of(ltx2_context *ctx, const ltx2_video_decoder *dec, int64_t B, int64_t lh, int64_t lw,
                       const ltx2_vae_tiling *t) {
    const int64_t ls[5] = {B, LAT_F, lh, lw, LAT_C};
    block_check c = {0};
    ltx2_vae_tiling_stats st = {0};
    CHECK(ltx2_video_decoder_out_shape(ctx, dec, ls, c.vs) == LTX2_OK, "%s", ltx2_last_error(ctx));
    c.cover = malloc((size_t)(c.vs[2] * c.vs[3]));
    CHECK(c.cover != NULL, "alloc");
    if (!c.cover) return -1;
    CHECK(ltx2_vae_tiled_decode_blocks_from(ctx, dec, ls, t, fake_tile, NULL, take_block, &c, &st) == LTX2_OK, "%s",
          ltx2_last_error(ctx));
    CHECK(c.bad == 0 && c.next_frame == c.vs[1] && !c.in_range, "%lldx%lld: block contract broken (%lld bad)",
          (long long)lh, (long long)lw, (long long)c.bad);
    free(c.cover);
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
    const int64_t F = 8 * (LAT_F - 1) + 1, B = 1, fs = (int64_t)sizeof(float);

    /* Spatial tiling only (tile 128 px = 4 latents, overlap 64 px). Tiles follow the aspect ratio
     * (the short side's tile is max(3, round(4 * short / long)) latents), so heights compare at a
     * fixed aspect class: 512, 1024 and 2048 rows of 256 px all get 128 x 96 px tiles. */
    const ltx2_vae_tiling sp = {.tile_px = 128, .overlap_px = 64, .tile_batch = 1};
    const int64_t p16 = peak_of(ctx, &dec, B, 16, 8, &sp), p32 = peak_of(ctx, &dec, B, 32, 8, &sp);
    const int64_t p64 = peak_of(ctx, &dec, B, 64, 8, &sp);
    CHECK(p16 > 0 && p16 == p32 && p16 == p64,
          "peak depends on the height: %lld / %lld / %lld bytes for 512 / 1024 / 2048 rows", (long long)p16,
          (long long)p32, (long long)p64);

    /* Width, square videos with 256 px tiles and 64 px overlap: live accumulators are the
     * horizontal overlap strip (two of them around the current column) plus the current tile,
     * so each extra column costs at most 2 x 64 rows of accumulators, a quarter of what a
     * tile-tall band window (256 rows) would; the whole peak stays below such a band. */
    const ltx2_vae_tiling wide = {.tile_px = 256, .overlap_px = 64, .tile_batch = 1};
    const int64_t per_px = F * (B * OUT_C + 1) * fs; /* one pixel of accumulator over the group */
    int64_t prev_peak = 0, prev_w = 0;
    for (int64_t lw = 16; lw <= 64; lw *= 2) {
        const int64_t W = 32 * lw, got = peak_of(ctx, &dec, B, lw, lw, &wide);
        const int64_t band = 256 * W * per_px;
        CHECK(got > 0 && got < band, "width %lld: peak %lld bytes, a 256-row band window is %lld", (long long)W,
              (long long)got, (long long)band);
        if (prev_w) {
            const int64_t per_col = (got - prev_peak) / (W - prev_w);
            CHECK(per_col <= 2 * 64 * per_px, "width %lld -> %lld: %lld bytes per extra column, > 2 x 64 rows (%lld)",
                  (long long)prev_w, (long long)W, (long long)per_col, (long long)(2 * 64 * per_px));
            printf("width %lld -> %lld: peak %lld -> %lld bytes (%lld per column; a band window: %lld)\n",
                   (long long)prev_w, (long long)W, (long long)prev_peak, (long long)got, (long long)per_col,
                   (long long)(256 * per_px));
        }
        prev_peak = got, prev_w = W;
    }

    /* Temporal tiling too: only the carry (overlap frames x full frame) grows with the height. */
    const ltx2_vae_tiling tt = {.tile_px = 128, .overlap_px = 64, .tile_frames = 16, .overlap_frames = 8, .tile_batch = 1};
    const int64_t q8 = peak_of(ctx, &dec, B, 8, 8, &tt), q64 = peak_of(ctx, &dec, B, 64, 8, &tt);
    /* Temporal tiles of 2 latents, overlap 1: groups [0,9), [0,17) frames; group 0 carries 9 frames. */
    const int64_t carry_per_row = 9 * 256 * (B * OUT_C + 1) * fs;
    CHECK(q8 > 0 && q64 - q8 <= (2048 - 256) * carry_per_row, "temporal: peak %lld -> %lld bytes for 256 -> 2048 rows",
          (long long)q8, (long long)q64);

    /* Blocks assemble to the full-frame stream's frames bitwise (B = 2, temporal + spatial tiles). */
    {
        const int64_t ls[5] = {2, LAT_F, 7, 5, LAT_C};
        block_check a = {0}, b = {0};
        CHECK(ltx2_video_decoder_out_shape(ctx, &dec, ls, a.vs) == LTX2_OK, "%s", ltx2_last_error(ctx));
        memcpy(b.vs, a.vs, sizeof a.vs);
        const int64_t n = a.vs[0] * a.vs[1] * a.vs[2] * a.vs[3] * a.vs[4];
        a.video = calloc((size_t)n, sizeof(float));
        b.video = calloc((size_t)n, sizeof(float));
        a.cover = malloc((size_t)(a.vs[2] * a.vs[3]));
        ltx2_vae_tiling_stats sa = {0}, sb = {0};
        CHECK(a.video && b.video && a.cover, "alloc");
        if (a.video && b.video && a.cover) {
            CHECK(ltx2_vae_tiled_decode_blocks_from(ctx, &dec, ls, &tt, fake_tile, NULL, take_block, &a, &sa) ==
                      LTX2_OK,
                  "%s", ltx2_last_error(ctx));
            CHECK(ltx2_vae_tiled_decode_stream_from(ctx, &dec, ls, &tt, fake_tile, NULL, take_frames, &b, &sb) ==
                      LTX2_OK,
                  "%s", ltx2_last_error(ctx));
            CHECK(a.bad == 0 && memcmp(a.video, b.video, (size_t)n * sizeof(float)) == 0 && sa.n_tiles == sb.n_tiles &&
                      sa.n_tiles > 4,
                  "blocks and frames differ (%lld bad blocks, %lld tiles)", (long long)a.bad, (long long)sa.n_tiles);
            CHECK(sb.peak_bytes > sa.peak_bytes, "frame assembly not metered: %lld vs %lld", (long long)sb.peak_bytes,
                  (long long)sa.peak_bytes);
        }
        free(a.video);
        free(b.video);
        free(a.cover);
    }
    ltx2_context_free(ctx);
    return test_finish();
}
