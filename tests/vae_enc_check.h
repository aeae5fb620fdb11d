/* The video VAE encoder's one forward (src/model/video_vae_encode.c) on a device backend against
 * the same forward on the CPU backend in fp32 (ltx2_video_encoder_encode, the reference), on the
 * same video, compared on the normalized latent (and, verbose, every down block of the chained
 * run). Two encoders: a synthetic one whose every conv the CUDA conv3d takes (channel counts
 * multiples of 8, the three SpaceToDepthDownsample kinds, and a 17-wide conv_out that a device
 * widens to 24, as the real 129-wide one to 136), written to a temporary file with random weights;
 * and the tiny checkpoints' encoders (golden video "encoder.in"), whose 4-wide downsample convs a
 * device must refuse naming the stage. Uses the backends and comparison of vae_device_check.h. */
#ifndef LTX2_TEST_VAE_ENC_CHECK_H
#define LTX2_TEST_VAE_ENC_CHECK_H

#include <math.h>
#include <unistd.h>

#include "vae_device_check.h"

/* The synthetic encoder: latent channels (conv_in width), and the video it encodes (4k+1 frames,
 * multiples of the 16-pixel space factor). */
#define WIDE_LATENT 16
#define WIDE_FRAMES 5
#define WIDE_HW 32
/* Philox seeds of the synthetic weights and video. */
#define WIDE_WEIGHT_SEED 21
#define WIDE_VIDEO_SEED 22

typedef struct enc_case {
    const char *label;
    ltx2_st_set *w;
    ltx2_video_encoder *enc;
    float *video;
    int64_t vs[5], ls[5];
    float *ref_lat;
    stages ref;
    bool narrow; /* has convs narrower than 8 channels (beyond the CUDA conv3d) */
} enc_case;

static void enc_case_free(enc_case *c) {
    ltx2_video_encoder_free(c->enc);
    ltx2_st_set_close(c->w);
    free(c->video);
    free(c->ref_lat);
    stages_free(&c->ref);
}

/* The synthetic encoder's config: res_x(16), compress_space_res x2 (conv 16 -> 8), compress_time_res
 * x2 (32 -> 32), compress_all_res x2 (64 -> 16), res_x(128), conv_out 128 -> 17 (uniform logvar). */
static ltx2_vae_config wide_config(void) {
    ltx2_vae_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.dims = 3;
    cfg.in_channels = cfg.out_channels = 3;
    cfg.latent_channels = WIDE_LATENT;
    cfg.patch_size = 4;
    cfg.latent_log_var = LTX2_VAE_LOGVAR_UNIFORM;
    cfg.encoder_padding = LTX2_VAE_PAD_ZEROS;
    cfg.n_decoder_blocks = -1;
    const ltx2_vae_block blocks[] = {
        {.kind = LTX2_VAE_RES_X, .num_layers = 1},
        {.kind = LTX2_VAE_COMPRESS_SPACE_RES, .multiplier = 2},
        {.kind = LTX2_VAE_COMPRESS_TIME_RES, .multiplier = 2},
        {.kind = LTX2_VAE_COMPRESS_ALL_RES, .multiplier = 2},
        {.kind = LTX2_VAE_RES_X, .num_layers = 1},
    };
    cfg.n_encoder_blocks = (int)(sizeof(blocks) / sizeof(blocks[0]));
    memcpy(cfg.encoder_blocks, blocks, sizeof(blocks));
    return cfg;
}

/* The tensors of wide_config under "vae.", torch layouts, N(0, 1/fan_in) weights. */
typedef struct wide_tensor {
    const char *name;
    int64_t c_out, c_in; /* a conv [c_out, c_in, 3, 3, 3] + bias, or c_in 0: a vector [c_out] */
} wide_tensor;

static bool wide_write(const char *path) {
    static const wide_tensor ts[] = {
        {"conv_in", WIDE_LATENT, 48},
        {"down_blocks.0.res_blocks.0.conv1", 16, 16}, {"down_blocks.0.res_blocks.0.conv2", 16, 16},
        {"down_blocks.1.conv", 8, 16},
        {"down_blocks.2.conv", 32, 32},
        {"down_blocks.3.conv", 16, 64},
        {"down_blocks.4.res_blocks.0.conv1", 128, 128}, {"down_blocks.4.res_blocks.0.conv2", 128, 128},
        {"conv_out", WIDE_LATENT + 1, 128},
    };
    const size_t nt = sizeof(ts) / sizeof(ts[0]);
    ltx2_st_writer *wr = NULL;
    bool ok = ltx2_st_writer_create(g_ctx, &wr) == LTX2_OK;
    float *bufs[2 * 16 + 2] = {0};
    ltx2_tensor views[2 * 16 + 2];
    char names[2 * 16 + 2][128];
    size_t nb = 0;
    for (size_t i = 0; ok && i < nt; i++) {
        const int64_t ws[5] = {ts[i].c_out, ts[i].c_in, 3, 3, 3}, n = ts[i].c_out * ts[i].c_in * 27;
        const float sd = 1.0f / sqrtf((float)(ts[i].c_in * 27));
        for (int part = 0; part < 2; part++, nb++) {
            const int64_t cnt = part ? ts[i].c_out : n;
            bufs[nb] = malloc((size_t)cnt * sizeof(float));
            ok = bufs[nb] != NULL;
            if (!ok) break;
            ltx2_rng_normal(WIDE_WEIGHT_SEED, nb, 0, (size_t)cnt, bufs[nb]);
            for (int64_t k = 0; k < cnt; k++) bufs[nb][k] *= part ? 0.1f : sd;
            snprintf(names[nb], sizeof(names[nb]), "vae.encoder.%s.conv.%s", ts[i].name, part ? "bias" : "weight");
            views[nb] = part ? ltx2_tensor_make(bufs[nb], LTX2_F32, 1, &ts[i].c_out)
                             : ltx2_tensor_make(bufs[nb], LTX2_F32, 5, ws);
            ok = ltx2_st_writer_add(g_ctx, wr, names[nb], &views[nb]) == LTX2_OK;
        }
    }
    const int64_t L = WIDE_LATENT;
    for (int part = 0; ok && part < 2; part++, nb++) {
        bufs[nb] = malloc((size_t)L * sizeof(float));
        ok = bufs[nb] != NULL;
        if (!ok) break;
        ltx2_rng_normal(WIDE_WEIGHT_SEED, nb, 0, (size_t)L, bufs[nb]);
        /* std-of-means kept well away from 0 */
        for (int64_t k = 0; part && k < L; k++) bufs[nb][k] = 0.5f + 0.25f * fabsf(bufs[nb][k]);
        snprintf(names[nb], sizeof(names[nb]), "vae.per_channel_statistics.%s", part ? "std-of-means" : "mean-of-means");
        views[nb] = ltx2_tensor_make(bufs[nb], LTX2_F32, 1, &L);
        ok = ltx2_st_writer_add(g_ctx, wr, names[nb], &views[nb]) == LTX2_OK;
    }
    if (ok) ok = ltx2_st_writer_write(g_ctx, wr, path) == LTX2_OK;
    CHECK(ok, "writing the synthetic encoder %s: %s", path, ltx2_last_error(g_ctx));
    ltx2_st_writer_free(wr);
    for (size_t k = 0; k < nb; k++) free(bufs[k]);
    return ok;
}

/* Loads c's encoder and runs the CPU reference encode (stages + latent). */
static bool enc_case_reference(enc_case *c, const ltx2_vae_config *cfg) {
    bool ok = ltx2_video_encoder_load(g_ctx, c->w, "vae.", cfg, &c->enc) == LTX2_OK &&
              ltx2_video_encoder_out_shape(g_ctx, c->enc, c->vs, c->ls) == LTX2_OK;
    CHECK(ok, "%s: encoder load / shape: %s", c->label, ltx2_last_error(g_ctx));
    if (!ok) return false;
    c->ref_lat = malloc((size_t)(c->ls[0] * c->ls[1] * c->ls[2] * c->ls[3] * c->ls[4]) * sizeof(float));
    ltx2_tensor vt = ltx2_tensor_make(c->video, LTX2_F32, 5, c->vs), lt = ltx2_tensor_make(c->ref_lat, LTX2_F32, 5, c->ls);
    ok = c->ref_lat && ltx2_video_encoder_encode(g_ctx, c->enc, &vt, &lt, capture, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference encode: %s", c->label, ltx2_last_error(g_ctx));
    return ok;
}

static bool wide_case_load(enc_case *c) {
    memset(c, 0, sizeof(*c));
    c->label = "wide encoder";
    char dir[] = "/tmp/ltx2_vae_enc_XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return false;
    }
    snprintf(path, sizeof(path), "%s/enc.safetensors", dir);
    bool ok = wide_write(path) && ltx2_st_set_open(g_ctx, path, &c->w) == LTX2_OK;
    CHECK(ok, "%s: open: %s", c->label, ltx2_last_error(g_ctx));
    unlink(path); /* the mapping stays valid */
    rmdir(dir);
    if (!ok) return false;
    const int64_t vs[5] = {1, WIDE_FRAMES, WIDE_HW, WIDE_HW, 3};
    memcpy(c->vs, vs, sizeof(vs));
    const size_t n = (size_t)(WIDE_FRAMES * WIDE_HW * WIDE_HW * 3);
    c->video = malloc(n * sizeof(float));
    if (!c->video) return false;
    ltx2_rng_normal(WIDE_VIDEO_SEED, 0, 0, n, c->video);
    for (size_t k = 0; k < n; k++) c->video[k] = tanhf(c->video[k]); /* pixels in [-1, 1] */
    const ltx2_vae_config cfg = wide_config();
    return enc_case_reference(c, &cfg);
}

static bool tiny_enc_case_load(enc_case *c, const char *label, const char *wrel, const char *grel) {
    memset(c, 0, sizeof(*c));
    c->label = label;
    c->narrow = true;
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof(wpath), "%s/%s", LTX2_SOURCE_DIR, wrel);
    snprintf(gpath, sizeof(gpath), "%s/%s", LTX2_SOURCE_DIR, grel);
    ltx2_st_file *golden = NULL;
    ltx2_vae_config cfg;
    bool ok = ltx2_st_set_open(g_ctx, wpath, &c->w) == LTX2_OK && ltx2_st_open(g_ctx, gpath, &golden) == LTX2_OK &&
              ltx2_vae_config_from_file(g_ctx, c->w->files[0], &cfg) == LTX2_OK;
    if (ok) ok = (c->video = ltx2_st_tensor_to_ndhwc(g_ctx, ltx2_st_find(golden, "encoder.in"), c->vs)) != NULL;
    CHECK(ok, "%s: loading %s / %s: %s", label, wrel, grel, ltx2_last_error(g_ctx));
    ltx2_st_close(golden);
    return ok && enc_case_reference(c, &cfg);
}

/* The encode on bc's backend against the CPU reference. */
static void enc_check(const be_case *bc, const enc_case *c) {
    if (!c->enc || !c->ref_lat) return;
    ltx2_vae_enc_device *dv = NULL;
    ltx2_status st = ltx2_vae_enc_device_create(g_ctx, bc->be, c->enc, &dv);
    CHECK(st == LTX2_OK, "%s %s: device weights: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const int64_t nl = c->ls[0] * c->ls[1] * c->ls[2] * c->ls[3] * c->ls[4];
    float *lat = malloc((size_t)nl * sizeof(float));
    ltx2_tensor vt = ltx2_tensor_make(c->video, LTX2_F32, 5, c->vs), lt = ltx2_tensor_make(lat, LTX2_F32, 5, c->ls);
    stages got = {.n = 0};
    st = ltx2_vae_enc_device_encode(g_ctx, dv, &vt, &lt, capture, &got);
    if (c->narrow && !bc->f32 && !bc->emulate) {
        /* the tiny encoders' first downsample conv is 4 wide: refused, naming the stage */
        CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "encoder.down_blocks.1 (compress_space_res)"),
              "%s %s: want the 4-wide conv refused by name, got %s: %s", bc->be->name, c->label, ltx2_status_name(st),
              ltx2_last_error(g_ctx));
        printf("%s %s: refused as expected (%s)\n", bc->be->name, c->label, ltx2_last_error(g_ctx));
        ltx2_clear_error(g_ctx);
    } else {
        CHECK(st == LTX2_OK, "%s %s encode: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
        if (st == LTX2_OK) {
            CHECK(got.n == c->ref.n, "%s %s: device dumped %d stages, CPU %d", bc->be->name, c->label, got.n, c->ref.n);
            for (int i = 0; getenv("LTX2_TEST_VERBOSE") && i < got.n; i++) {
                const stage *r = find_stage(&c->ref, got.s[i].name);
                if (!r || memcmp(r->shape, got.s[i].shape, sizeof(r->shape)) != 0) continue;
                ltx2_tensor a = ltx2_tensor_make(r->d, LTX2_F32, 5, r->shape);
                ltx2_tensor b = ltx2_tensor_make(got.s[i].d, LTX2_F32, 5, r->shape);
                ltx2_diff_stats s;
                ltx2_diff(&a, &b, 0.0, 0.0, &s);
                printf("  %s %s chained %-40s cosine %.7f\n", bc->be->name, c->label, got.s[i].name, s.cosine);
            }
            const stage *co = find_stage(&got, "encoder.conv_out.out"), *cr = find_stage(&c->ref, "encoder.conv_out.out");
            CHECK(co && cr && memcmp(co->shape, cr->shape, sizeof(co->shape)) == 0,
                  "%s %s: conv_out dump must hold the real channels only", bc->be->name, c->label);
            char what[96];
            snprintf(what, sizeof(what), "%s encode (latent)", c->label);
            if (compare(bc, what, c->ref_lat, lat, c->ls)) printf("%s %s: encode matches\n", bc->be->name, c->label);
        }
    }
    stages_free(&got);
    free(lat);
    ltx2_vae_enc_device_free(dv);
}

/* The synthetic encoder and the two tiny ones (n = 3), or the synthetic one alone (n = 1). */
static int enc_cases_load(enc_case cases[3], bool tiny) {
    wide_case_load(&cases[0]);
    if (!tiny) return 1;
    tiny_enc_case_load(&cases[1], "2.0 encoder", "weights/tiny/ltx2-tiny-2.0.safetensors",
                       "tests/golden/data/vae_2.0.safetensors");
    tiny_enc_case_load(&cases[2], "2.3 encoder", "weights/tiny/ltx2-tiny-2.3.safetensors",
                       "tests/golden/data/vae_2.3.safetensors");
    return 3;
}

#endif
