/* The video VAE decoder's one forward (src/model/video_vae_decode.c) on a device backend against
 * the same forward on the CPU backend in fp32 (ltx2_video_decoder_decode_ex, the reference), on
 * the same latent: the tiny LTX-2.0 and LTX-2.3 checkpoints on the golden latent "decoder.in" of
 * vae_<v>.safetensors, and the timestep-conditioned, noise-injecting tiny decoder (vae_tcond_tiny,
 * Philox noise) on its golden latent. For each: every up block alone (fed the reference's input to
 * that block, compared with its output) so a failure names the stage, then the whole decode
 * compared on the video. Then the encoder's one forward (video_vae_encode.c) the same way on the
 * latent: a synthetic encoder whose every conv the CUDA conv3d takes (vae_enc_check.h), and the
 * tiny checkpoints' encoders, whose 4-wide downsample convs a device must refuse by stage name.
 * Shared by test_vae_cuda (the CPU backend run through the block-alone entry, a CPU backend rounding
 * every op output to bf16, and CUDA) and test_emu_vae (the kernel emulator). */
#ifndef LTX2_TEST_VAE_DEVICE_CHECK_H
#define LTX2_TEST_VAE_DEVICE_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "core/rng.h"
#include "io/safetensors.h"
#include "model/vae_config.h"
#include "model/video_vae.h"
#include "test_util.h"

/* bf16 storage of every activation (2^-9 relative rounding per op output, ~20 convs each behind a
 * PixelNorm) keeps each up block alone at cosine ~0.999995 and the whole decoded video at
 * 0.99995-0.99998 (measured with the bf16-rounding CPU backend below: 2.3 is the lowest, rel-L2
 * 1e-2); a wrong padding mode, residual channel map, modulation row or noise draw drops it to
 * ~0.99 or below. The floor is issue #6's. */
#define VAE_DEVICE_MIN_COSINE 0.9999
/* f32 storage on the CPU backend runs the CPU decoder's own conv / norm kernels; only the fused
 * norm + modulate and the host-formed noise term round differently (~1e-7 relative per op). */
#define VAE_F32_BACKEND_MAX_REL_L2 1e-5
/* The tcond golden's decode settings (metadata "vae_tcond_goldens", as test_vae_tcond.c). */
#define TCOND_TIMESTEP 0.07
#define TCOND_NOISE_SCALE 0.04
/* Stage dumps one CPU decode makes (tiny decoders: < 20). */
#define MAX_STAGES 64

static ltx2_context *g_ctx;


typedef struct stage {
    char name[128];
    int64_t shape[5];
    float *d;
} stage;

typedef struct stages {
    stage s[MAX_STAGES];
    int n;
} stages;

static void capture(const char *name, const ltx2_tensor *t, void *user) {
    stages *st = user;
    if (st->n >= MAX_STAGES || t->ndim != 5) return;
    stage *s = &st->s[st->n];
    const int64_t n = ltx2_tensor_numel(t);
    s->d = malloc((size_t)n * sizeof(float));
    if (!s->d) return;
    memcpy(s->d, t->data, (size_t)n * sizeof(float));
    memcpy(s->shape, t->shape, sizeof(s->shape));
    snprintf(s->name, sizeof(s->name), "%s", name);
    st->n++;
}

static const stage *find_stage(const stages *st, const char *name) {
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->s[i].name, name) == 0) return &st->s[i];
    return NULL;
}

static void stages_free(stages *st) {
    for (int i = 0; i < st->n; i++) free(st->s[i].d);
    st->n = 0;
}

typedef struct be_case {
    const ltx2_backend *be;
    bool whole_only; /* the whole decode only (the emulator: every up block alone doubles its cost) */
    bool f32;     /* CPU backend: f32 storage, tight rel-L2; else (bf16 values) the cosine floor */
    bool emulate; /* the CPU backend rounding every op output to bf16 (see bf16_backend) */
} be_case;

/* ---- a CPU backend that rounds every op's output to bf16 ----
 * It stores bf16-representable f32 values, i.e. the CUDA run's storage precision with fp32 math
 * inside each op, so the cosine floor above is checked on machines without a GPU too. Uploads are
 * not rounded (the CUDA run rounds the latent and noise terms but keeps the modulation tables in
 * f32; the weights are bf16 in the checkpoints either way). */

static ltx2_status round_bf16(ltx2_context *ctx, ltx2_tensor *y) {
    const size_t n = (size_t)ltx2_tensor_numel(y);
    uint16_t *tmp = malloc((n ? n : 1) * sizeof(uint16_t));
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "bf16 rounding buffer");
    ltx2_status st = ltx2_convert(ctx, tmp, LTX2_BF16, y->data, LTX2_F32, n);
    if (st == LTX2_OK) st = ltx2_convert(ctx, y->data, LTX2_F32, tmp, LTX2_BF16, n);
    free(tmp);
    return st;
}

static ltx2_status em_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                             const ltx2_tensor *w, const ltx2_tensor *bias, bool silu, ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->conv3d(ltx2_backend_cpu(), ctx, d, x, w, bias, silu, y));
    return round_bf16(ctx, y);
}

static ltx2_status em_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float eps, bool silu,
                                 ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->pixel_norm(ltx2_backend_cpu(), ctx, x, eps, silu, y));
    return round_bf16(ctx, y);
}

static ltx2_status em_d2s(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_d2s_args *a,
                          const ltx2_tensor *residual, ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->depth_to_space(ltx2_backend_cpu(), ctx, x, a, residual, y));
    return round_bf16(ctx, y);
}

static ltx2_status em_s2d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_s2d_args *a,
                          const ltx2_tensor *residual, ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->space_to_depth(ltx2_backend_cpu(), ctx, x, a, residual, y));
    return round_bf16(ctx, y);
}

static ltx2_status em_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                    ltx2_norm_kind norm, float eps, const ltx2_tensor *scale, const ltx2_tensor *shift,
                                    const ltx2_mod_rows *m, ltx2_tensor *y, const ltx2_fp8_outs *q) {
    (void)be;
    if (q) return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "vae check backend: no fp8 copies (the VAE makes none)");
    LTX2_TRY(ltx2_backend_cpu()->norm_modulate(ltx2_backend_cpu(), ctx, x, norm, eps, scale, shift, m, y, NULL));
    return round_bf16(ctx, y);
}

static ltx2_status em_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                const ltx2_tensor *gate, const ltx2_mod_rows *m) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->gated_add(ltx2_backend_cpu(), ctx, x, y, gate, m));
    return round_bf16(ctx, x);
}

static ltx2_status em_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha, const ltx2_tensor *x,
                            ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->unary(ltx2_backend_cpu(), ctx, op, alpha, x, y));
    return round_bf16(ctx, y);
}

static ltx2_status em_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *a,
                             const ltx2_tensor *b, ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_backend_cpu()->binary(ltx2_backend_cpu(), ctx, op, a, b, y));
    return round_bf16(ctx, y); /* contiguous here: the noise add writes the whole activation */
}

static inline ltx2_backend bf16_backend(void) {
    ltx2_backend be = *ltx2_backend_cpu();
    be.name = "cpu-bf16";
    be.conv3d = em_conv3d;
    be.pixel_norm = em_pixel_norm;
    be.depth_to_space = em_d2s;
    be.space_to_depth = em_s2d;
    be.norm_modulate = em_norm_modulate;
    be.gated_add = em_gated_add;
    be.unary = em_unary;
    be.binary = em_binary;
    return be;
}

/* Compares out with ref (same shape) under the backend's rule; returns whether it passed. */
static bool compare(const be_case *bc, const char *what, const float *ref, const float *out, const int64_t *shape) {
    ltx2_tensor rt = ltx2_tensor_make((void *)ref, LTX2_F32, 5, shape), ot = ltx2_tensor_make((void *)out, LTX2_F32, 5, shape);
    ltx2_diff_stats s;
    ltx2_diff(&rt, &ot, 0.0, 0.0, &s);
    const bool ok = s.n_nonfinite_mismatch == 0 &&
                    (bc->f32 ? s.rel_l2 <= VAE_F32_BACKEND_MAX_REL_L2 : s.cosine >= VAE_DEVICE_MIN_COSINE);
    CHECK(ok, "%s %s: cosine %.7f rel-L2 %.3g max abs %.3g (ref max %.3g); need %s", bc->be->name, what, s.cosine,
          s.rel_l2, s.max_abs, s.max_abs_ref, bc->f32 ? "rel-L2 <= 1e-5" : "cosine >= 0.9999");
    if (ok && getenv("LTX2_TEST_VERBOSE"))
        printf("  %s %-42s cosine %.7f rel-L2 %.3g\n", bc->be->name, what, s.cosine, s.rel_l2);
    return ok;
}

/* One decoder and its CPU reference decode (stages + video). */
typedef struct dec_case {
    const char *label;
    ltx2_st_set *w;
    ltx2_video_decoder *dec;
    ltx2_vae_decode_opts opts;
    float *lat;
    int64_t ls[5], vs[5];
    float *ref_video;
    stages ref;
    bool narrow; /* has convs narrower than 8 channels (beyond the CUDA conv3d) */
} dec_case;

static void dec_case_free(dec_case *c) {
    ltx2_video_decoder_free(c->dec);
    ltx2_st_set_close(c->w);
    free(c->lat);
    free(c->ref_video);
    stages_free(&c->ref);
}

/* small: a Philox latent of 2 x 2 x 2 (frames x rows x columns; reflect padding needs 2) instead
 * of the golden one: the decode is compared with the reference on whatever latent, and the
 * emulator's decode then costs a quarter. */
#define SMALL_LATENT_T 2
#define SMALL_LATENT_HW 2
static bool dec_case_load(dec_case *c, const char *label, const char *wrel, const char *grel, bool tcond,
                          bool small) {
    memset(c, 0, sizeof(*c));
    c->label = label;
    c->opts = ltx2_vae_decode_opts_default();
    if (tcond) {
        c->opts.timestep = TCOND_TIMESTEP;
        c->opts.noise_scale = TCOND_NOISE_SCALE;
    }
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof(wpath), "%s/%s", LTX2_SOURCE_DIR, wrel);
    snprintf(gpath, sizeof(gpath), "%s/%s", LTX2_SOURCE_DIR, grel);
    ltx2_st_file *golden = NULL;
    ltx2_vae_config cfg;
    bool ok = ltx2_st_set_open(g_ctx, wpath, &c->w) == LTX2_OK && ltx2_st_open(g_ctx, gpath, &golden) == LTX2_OK &&
              ltx2_vae_config_from_file(g_ctx, c->w->files[0], &cfg) == LTX2_OK &&
              ltx2_video_decoder_load(g_ctx, c->w, "vae.", &cfg, &c->dec) == LTX2_OK;
    CHECK(ok, "%s: loading %s / %s: %s", label, wrel, grel, ltx2_last_error(g_ctx));
    if (ok) {
        c->lat = ltx2_st_tensor_to_ndhwc(g_ctx, ltx2_st_find(golden, "decoder.in"), c->ls);
        if (c->lat && small) {
            c->ls[0] = 1, c->ls[1] = SMALL_LATENT_T, c->ls[2] = c->ls[3] = SMALL_LATENT_HW;
            const size_t n = (size_t)(SMALL_LATENT_T * SMALL_LATENT_HW * SMALL_LATENT_HW * c->ls[4]);
            free(c->lat);
            c->lat = malloc(n * sizeof(float));
            if (c->lat) ltx2_rng_normal(7, 0, 0, n, c->lat);
        }
        ok = c->lat != NULL && ltx2_video_decoder_out_shape(g_ctx, c->dec, c->ls, c->vs) == LTX2_OK;
        CHECK(ok, "%s: golden decoder.in / out shape: %s", label, ltx2_last_error(g_ctx));
    }
    ltx2_st_close(golden);
    if (!ok) return false;
    CHECK(c->dec->timestep_conditioning == tcond, "%s: timestep conditioning %d", label, c->dec->timestep_conditioning);
    c->ref_video = malloc((size_t)(c->vs[0] * c->vs[1] * c->vs[2] * c->vs[3] * c->vs[4]) * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 5, c->ls), vt = ltx2_tensor_make(c->ref_video, LTX2_F32, 5, c->vs);
    ok = c->ref_video && ltx2_video_decoder_decode_ex(g_ctx, c->dec, &lt, &vt, &c->opts, capture, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference decode: %s", label, ltx2_last_error(g_ctx));
    return ok;
}

/* Every up block alone on the device from the CPU's input to it. Returns how many ran; a block the
 * backend cannot run (LTX2_ERR_UNSUPPORTED, e.g. CUDA conv channels not a multiple of 8) is
 * reported and counted in *unsupported. */
static int blocks_alone(const be_case *bc, const dec_case *c, const ltx2_vae_device *dv, int *unsupported) {
    int ran = 0;
    *unsupported = 0;
    for (int i = 0; i < c->dec->n_blocks; i++) {
        char in_name[96], out_name[96];
        if (i == 0) snprintf(in_name, sizeof(in_name), "decoder.conv_in.out");
        else snprintf(in_name, sizeof(in_name), "decoder.up_blocks.%d.out", i - 1);
        snprintf(out_name, sizeof(out_name), "decoder.up_blocks.%d.out", i);
        const stage *in = find_stage(&c->ref, in_name), *want = find_stage(&c->ref, out_name);
        CHECK(in && want, "%s: CPU stages %s / %s missing", c->label, in_name, out_name);
        if (!in || !want) continue;
        float *out = malloc((size_t)(want->shape[0] * want->shape[1] * want->shape[2] * want->shape[3] *
                                     want->shape[4]) * sizeof(float));
        ltx2_tensor xt = ltx2_tensor_make(in->d, LTX2_F32, 5, in->shape);
        ltx2_tensor yt = ltx2_tensor_make(out, LTX2_F32, 5, want->shape);
        const ltx2_status st = ltx2_vae_device_run_block(g_ctx, dv, i, &c->opts, &xt, &yt);
        if (st == LTX2_ERR_UNSUPPORTED && !bc->f32 && !bc->emulate) {
            printf("  %s %s up_blocks.%d: not run (%s)\n", bc->be->name, c->label, i, ltx2_last_error(g_ctx));
            ltx2_clear_error(g_ctx);
            (*unsupported)++;
        } else {
            CHECK(st == LTX2_OK, "%s %s up_blocks.%d: %s", bc->be->name, c->label, i, ltx2_last_error(g_ctx));
            if (st == LTX2_OK) {
                char what[160];
                snprintf(what, sizeof(what), "%s up_blocks.%d (%s) alone", c->label, i,
                         ltx2_vae_block_name(c->dec->blocks[i].kind));
                compare(bc, what, want->d, out, want->shape);
                ran++;
            }
        }
        free(out);
    }
    return ran;
}

/* The whole decode; stage cosines of the chained run are printed for diagnosis. */
static void whole_decode(const be_case *bc, const dec_case *c, const ltx2_vae_device *dv, bool may_be_unsupported) {
    const int64_t nv = c->vs[0] * c->vs[1] * c->vs[2] * c->vs[3] * c->vs[4];
    float *video = malloc((size_t)nv * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 5, c->ls), vt = ltx2_tensor_make(video, LTX2_F32, 5, c->vs);
    stages got = {.n = 0};
    const ltx2_status st = ltx2_vae_device_decode(g_ctx, dv, &lt, &vt, &c->opts, capture, &got);
    if (st == LTX2_ERR_UNSUPPORTED && may_be_unsupported) {
        /* the error must say which stage the backend cannot run */
        CHECK(strstr(ltx2_last_error(g_ctx), "decoder.") != NULL, "%s %s: unsupported without a stage name: %s",
              bc->be->name, c->label, ltx2_last_error(g_ctx));
        printf("  %s %s whole decode: not run (%s)\n", bc->be->name, c->label, ltx2_last_error(g_ctx));
        ltx2_clear_error(g_ctx);
    } else {
        CHECK(st == LTX2_OK, "%s %s decode: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
        if (st == LTX2_OK) {
            for (int i = 0; getenv("LTX2_TEST_VERBOSE") && i < got.n; i++) {
                const stage *r = find_stage(&c->ref, got.s[i].name);
                if (!r || memcmp(r->shape, got.s[i].shape, sizeof(r->shape)) != 0) continue;
                ltx2_tensor a = ltx2_tensor_make(r->d, LTX2_F32, 5, r->shape);
                ltx2_tensor b = ltx2_tensor_make(got.s[i].d, LTX2_F32, 5, r->shape);
                ltx2_diff_stats s;
                ltx2_diff(&a, &b, 0.0, 0.0, &s);
                printf("  %s %s chained %-40s cosine %.7f\n", bc->be->name, c->label, got.s[i].name, s.cosine);
            }
            CHECK(got.n == c->ref.n, "%s %s: device dumped %d stages, CPU %d", bc->be->name, c->label, got.n,
                  c->ref.n);
            char what[96];
            snprintf(what, sizeof(what), "%s whole decode (video)", c->label);
            if (compare(bc, what, c->ref_video, video, c->vs)) printf("%s %s: whole decode matches\n", bc->be->name, c->label);
        }
    }
    stages_free(&got);
    free(video);
}

static void run_backend(const be_case *bc, dec_case *cases, int n_cases) {
    for (int k = 0; k < n_cases; k++) {
        const dec_case *c = &cases[k];
        if (!c->dec || !c->ref_video) continue;
        ltx2_vae_device *dv = NULL;
        const ltx2_status st = ltx2_vae_device_create(g_ctx, bc->be, c->dec, &dv);
        CHECK(st == LTX2_OK, "%s %s: device weights: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
        if (st != LTX2_OK) continue;
        CHECK(ltx2_vae_device_dtype(dv) == (bc->f32 || bc->emulate ? LTX2_F32 : LTX2_BF16), "%s: storage dtype %s",
              bc->be->name,
              ltx2_dtype_name(ltx2_vae_device_dtype(dv)));
        int unsupported = 0;
        const int ran = bc->whole_only ? c->dec->n_blocks : blocks_alone(bc, c, dv, &unsupported);
        /* tcond's 4-channel last block is beyond the CUDA conv; its other blocks (modulated,
         * noise-injecting res blocks and upsamplers) must still run */
        CHECK(ran + unsupported == c->dec->n_blocks && ran >= c->dec->n_blocks - (c->narrow ? 1 : 0),
              "%s %s: %d of %d blocks ran", bc->be->name, c->label, ran, c->dec->n_blocks);
        if (!bc->whole_only)
            printf("%s %s: %d of %d up blocks alone checked\n", bc->be->name, c->label, ran, c->dec->n_blocks);
        whole_decode(bc, c, dv, c->narrow && !bc->f32 && !bc->emulate);
        ltx2_vae_device_free(dv);
    }
}

static ltx2_status refuse_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                 const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                                 ltx2_tensor *y) {
    (void)be, (void)d, (void)x, (void)w, (void)bias, (void)silu, (void)y;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "test backend: no conv3d for these channels");
}

/* A backend op that refuses (as CUDA's conv3d does for narrow channels) fails the decode with
 * UNSUPPORTED and the stage's name. */
static inline void refused_op(const dec_case *c) {
    ltx2_backend be = *ltx2_backend_cpu();
    be.name = "cpu-refusing";
    be.conv3d = refuse_conv3d;
    ltx2_vae_device *dv = NULL;
    if (ltx2_vae_device_create(g_ctx, &be, c->dec, &dv) != LTX2_OK) {
        CHECK(0, "refusing backend: %s", ltx2_last_error(g_ctx));
        return;
    }
    const stage *in = find_stage(&c->ref, "decoder.conv_in.out"), *want = find_stage(&c->ref, "decoder.up_blocks.0.out");
    CHECK(in && want, "CPU stages of %s missing", c->label);
    if (in && want) {
        const int64_t n = want->shape[0] * want->shape[1] * want->shape[2] * want->shape[3] * want->shape[4];
        float *out = malloc((size_t)n * sizeof(float));
        ltx2_tensor xt = ltx2_tensor_make(in->d, LTX2_F32, 5, in->shape), yt = ltx2_tensor_make(out, LTX2_F32, 5, want->shape);
        ltx2_status st = ltx2_vae_device_run_block(g_ctx, dv, 0, NULL, &xt, &yt);
        CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "decoder.up_blocks.0 (res_x): res_blocks.0.conv1"),
              "refused conv in block 0: %s %s", ltx2_status_name(st), ltx2_last_error(g_ctx));
        ltx2_clear_error(g_ctx);
        free(out);
    }
    const int64_t nv = c->vs[0] * c->vs[1] * c->vs[2] * c->vs[3] * c->vs[4];
    float *video = malloc((size_t)nv * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 5, c->ls), vt = ltx2_tensor_make(video, LTX2_F32, 5, c->vs);
    ltx2_status st = ltx2_vae_device_decode(g_ctx, dv, &lt, &vt, NULL, NULL, NULL);
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "decoder.conv_in"), "refused conv_in: %s %s",
          ltx2_status_name(st), ltx2_last_error(g_ctx));
    ltx2_clear_error(g_ctx);
    free(video);
    ltx2_vae_device_free(dv);
}

/* Bad calls give clear errors without a device. */
static inline void bad_calls(const dec_case *c) {
    ltx2_vae_device *dv = NULL;
    if (ltx2_vae_device_create(g_ctx, ltx2_backend_cpu(), c->dec, &dv) != LTX2_OK) return;
    float buf[8] = {0};
    int64_t s[5] = {1, 1, 1, 1, 8};
    ltx2_tensor x = ltx2_tensor_make(buf, LTX2_F32, 5, s), y = ltx2_tensor_make(buf, LTX2_F32, 5, s);
    ltx2_status st = ltx2_vae_device_run_block(g_ctx, dv, c->dec->n_blocks, NULL, &x, &y);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(g_ctx), "no such block"), "block out of range: %s",
          ltx2_last_error(g_ctx));
    ltx2_clear_error(g_ctx);
    st = ltx2_vae_device_run_block(g_ctx, dv, 0, NULL, &x, &y); /* 8 channels into a 64-channel block */
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(g_ctx), "channels"), "wrong channels: %s",
          ltx2_last_error(g_ctx));
    ltx2_clear_error(g_ctx);
    st = ltx2_vae_device_decode(g_ctx, dv, &x, &y, NULL, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(g_ctx), "expected"), "wrong video buffer: %s",
          ltx2_last_error(g_ctx));
    ltx2_clear_error(g_ctx);
    ltx2_vae_device_free(dv);
}


/* The three decoders and their references; returns how many loaded. */
static void vae_cases_load(dec_case cases[3], bool small) {
    dec_case_load(&cases[0], "2.0", "weights/tiny/ltx2-tiny-2.0.safetensors", "tests/golden/data/vae_2.0.safetensors",
                  false, small);
    dec_case_load(&cases[1], "2.3", "weights/tiny/ltx2-tiny-2.3.safetensors", "tests/golden/data/vae_2.3.safetensors",
                  false, small);
    dec_case_load(&cases[2], "tcond", "tests/golden/data/vae_tcond_tiny.safetensors",
                  "tests/golden/data/vae_tcond.safetensors", true, small);
    cases[2].narrow = true; /* decoder_base_channels 4: the last block and conv_out are 4 wide */
}

#endif
