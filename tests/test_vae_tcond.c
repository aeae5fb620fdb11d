/* Timestep-conditioned video-VAE decoder (decode_timestep, decode_noise_scale, inject_noise)
 * against ltx-core 1.0.0: tests/golden/data/vae_tcond_tiny.safetensors is a seeded tiny decoder
 * built by gen_vae_tcond_goldens.py with timestep_conditioning=True; the torch.randn draws of the
 * reference forward (noise.<k>) are fed back through the decoder's noise callback, and every
 * block output must match to rel-L2 1e-5. Also: Philox default noise is deterministic, tiled
 * decode of a noise-injecting decoder gives the same result for any tile batch, and bad settings
 * (config says no conditioning, noise scale outside [0, 1], failing noise source) are refused. */
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

/* Same budget as test_vae_golden.c: fp32 vs fp32 with a different summation order per conv. */
#define TCOND_REL_L2_TOL 1e-5
/* The generator's decode_timestep / decode_noise_scale (metadata "vae_tcond_goldens"). */
#define TCOND_TIMESTEP 0.07
#define TCOND_NOISE_SCALE 0.04

typedef struct golden_io {
    ltx2_context *ctx;
    const ltx2_st_file *g;
    int next_noise; /* draw counter */
    int compared;
    int fail_at;    /* draw index at which the callback fails (-1: never) */
} golden_io;

static ltx2_status golden_noise(ltx2_context *ctx, const char *name, int ndim, const int64_t *shape, float *out,
                                void *user) {
    golden_io *io = user;
    const int k = io->next_noise++;
    if (k == io->fail_at) return LTX2_ERROR(ctx, LTX2_ERR_IO, "test noise source refuses draw %d", k);
    char key[32];
    snprintf(key, sizeof(key), "noise.%d", k);
    const ltx2_st_tensor *t = ltx2_st_find(io->g, key);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "golden %s missing (draw %s)", key, name);
    if (ndim == 5) {
        int64_t s[5];
        float *v = ltx2_st_tensor_to_ndhwc(ctx, t, s);
        bool ok = v != NULL;
        for (int i = 0; ok && i < 5; i++) ok = s[i] == shape[i];
        if (ok) memcpy(out, v, (size_t)(s[0] * s[1] * s[2] * s[3] * s[4]) * sizeof(float));
        free(v);
        if (!ok) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "golden %s does not match draw %s", key, name);
    } else {
        if (t->ndim != 2 || t->shape[0] != shape[0] || t->shape[1] != shape[1])
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "golden %s [%lld, %lld] does not match draw %s [%lld, %lld]", key,
                              (long long)t->shape[0], (long long)t->shape[1], name, (long long)shape[0],
                              (long long)shape[1]);
        memcpy(out, t->data, (size_t)(shape[0] * shape[1]) * sizeof(float));
    }
    return LTX2_OK;
}

static void on_dump(const char *name, const ltx2_tensor *t, void *user) {
    golden_io *io = user;
    const ltx2_st_tensor *g = ltx2_st_find(io->g, name);
    if (!g) return;
    int64_t gs[5];
    float *ref = ltx2_st_tensor_to_ndhwc(io->ctx, g, gs);
    CHECK(ref != NULL, "%s: golden not 5-D f32", name);
    if (!ref) return;
    bool same = t->ndim == 5;
    for (int i = 0; same && i < 5; i++) same = t->shape[i] == gs[i];
    CHECK(same, "%s: shape differs from the reference", name);
    if (same) {
        ltx2_tensor rv = ltx2_tensor_make(ref, LTX2_F32, 5, gs);
        ltx2_diff_stats s;
        ltx2_diff(&rv, t, 0.0, 0.0, &s);
        CHECK(s.rel_l2 <= TCOND_REL_L2_TOL && s.n_nonfinite_mismatch == 0, "%s: rel-L2 %.3g (max abs %.3g)", name,
              s.rel_l2, s.max_abs);
        if (getenv("LTX2_TEST_VERBOSE")) printf("  %-45s rel-L2 %.3g\n", name, s.rel_l2);
        io->compared++;
    }
    free(ref);
}

static void expect(ltx2_context *ctx, ltx2_status st, ltx2_status want, const char *needle, const char *what) {
    CHECK(st == want && strstr(ltx2_last_error(ctx), needle) != NULL, "%s: status %s (want %s), error \"%s\" lacks \"%s\"",
          what, ltx2_status_name(st), ltx2_status_name(want), ltx2_last_error(ctx), needle);
    ltx2_clear_error(ctx);
}

static size_t count_prefix(const ltx2_st_file *f, const char *p) {
    size_t n = 0;
    for (size_t i = 0; i < f->n_tensors; i++) n += strncmp(f->tensors[i].name, p, strlen(p)) == 0;
    return n;
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char wpath[512], gpath[512];
    snprintf(wpath, sizeof(wpath), "%s/tests/golden/data/vae_tcond_tiny.safetensors", LTX2_SOURCE_DIR);
    snprintf(gpath, sizeof(gpath), "%s/tests/golden/data/vae_tcond.safetensors", LTX2_SOURCE_DIR);
    ltx2_st_set *w = NULL;
    ltx2_st_file *golden = NULL;
    ltx2_video_decoder *dec = NULL;
    ltx2_vae_config cfg;
    if (ltx2_st_set_open(ctx, wpath, &w) != LTX2_OK || ltx2_st_open(ctx, gpath, &golden) != LTX2_OK) {
        CHECK(0, "cannot open data: %s", ltx2_last_error(ctx));
        goto done;
    }
    CHECK(ltx2_vae_config_from_file(ctx, w->files[0], &cfg) == LTX2_OK, "config: %s", ltx2_last_error(ctx));
    CHECK(cfg.timestep_conditioning == 1, "config timestep_conditioning %d", cfg.timestep_conditioning);
    CHECK(ltx2_video_decoder_load(ctx, w, "vae.", &cfg, &dec) == LTX2_OK, "load: %s", ltx2_last_error(ctx));
    if (!dec) goto done;
    CHECK(dec->timestep_conditioning && dec->needs_noise && dec->timestep_scale_multiplier == 1000.0f,
          "decoder flags tc %d noise %d multiplier %g", dec->timestep_conditioning, dec->needs_noise,
          (double)dec->timestep_scale_multiplier);

    int64_t ls[5], vs[5];
    float *lat = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(golden, "decoder.in"), ls);
    CHECK(lat != NULL, "golden decoder.in");
    if (!lat) goto done;
    CHECK(ltx2_video_decoder_out_shape(ctx, dec, ls, vs) == LTX2_OK, "%s", ltx2_last_error(ctx));
    const int64_t vn = vs[0] * vs[1] * vs[2] * vs[3] * vs[4];
    float *vid = malloc((size_t)vn * sizeof(float)), *vid2 = malloc((size_t)vn * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls), vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
    ltx2_tensor vt2 = ltx2_tensor_make(vid2, LTX2_F32, 5, vs);

    /* 1. Golden decode with the reference's own noise. */
    golden_io io = {.ctx = ctx, .g = golden, .fail_at = -1};
    ltx2_vae_decode_opts o = ltx2_vae_decode_opts_default();
    o.timestep = TCOND_TIMESTEP;
    o.noise_scale = TCOND_NOISE_SCALE;
    o.noise = golden_noise;
    o.noise_user = &io;
    CHECK(ltx2_video_decoder_decode_ex(ctx, dec, &lt, &vt, &o, on_dump, &io) == LTX2_OK, "decode: %s",
          ltx2_last_error(ctx));
    const size_t n_golden = count_prefix(golden, "decoder.");
    CHECK((size_t)io.compared == n_golden, "compared %d of %zu golden tensors", io.compared, n_golden);
    CHECK((size_t)io.next_noise == count_prefix(golden, "noise."), "drew %d noise tensors, reference %zu",
          io.next_noise, count_prefix(golden, "noise."));
    printf("tcond: %d tensors within rel-L2 %.0e, %d noise draws\n", io.compared, TCOND_REL_L2_TOL, io.next_noise);

    /* 2. Default (Philox) noise: deterministic per seed, different across seeds. */
    ltx2_vae_decode_opts d = ltx2_vae_decode_opts_default();
    CHECK(ltx2_video_decoder_decode_ex(ctx, dec, &lt, &vt, &d, NULL, NULL) == LTX2_OK, "%s", ltx2_last_error(ctx));
    CHECK(ltx2_video_decoder_decode(ctx, dec, &lt, &vt2, NULL, NULL) == LTX2_OK, "%s", ltx2_last_error(ctx));
    CHECK(memcmp(vid, vid2, (size_t)vn * sizeof(float)) == 0, "default-noise decode is not deterministic");
    d.seed = 7;
    CHECK(ltx2_video_decoder_decode_ex(ctx, dec, &lt, &vt2, &d, NULL, NULL) == LTX2_OK, "%s", ltx2_last_error(ctx));
    CHECK(test_rel_l2(vid2, vid, vn) > 1e-4, "seed 7 gives the same video as seed 0");

    /* 3. Tiled decode of a noise-injecting decoder: tile batching must not change the result. */
    {
        const int64_t tl[5] = {1, 3, 4, 4, 8};
        int64_t tv[5];
        CHECK(ltx2_video_decoder_out_shape(ctx, dec, tl, tv) == LTX2_OK, "%s", ltx2_last_error(ctx));
        const int64_t ln = 3 * 4 * 4 * 8, tn = tv[1] * tv[2] * tv[3] * tv[4];
        float *tlat = malloc((size_t)ln * sizeof(float));
        float *a = malloc((size_t)tn * sizeof(float)), *b = malloc((size_t)tn * sizeof(float));
        for (int64_t i = 0; i < ln; i++) tlat[i] = sinf(0.37f * (float)i) * 1.5f;
        ltx2_tensor tlt = ltx2_tensor_make(tlat, LTX2_F32, 5, tl);
        ltx2_tensor at = ltx2_tensor_make(a, LTX2_F32, 5, tv), bt = ltx2_tensor_make(b, LTX2_F32, 5, tv);
        ltx2_vae_tiling t = {.tile_px = 64, .overlap_px = 32, .tile_frames = 0, .tile_batch = 1};
        ltx2_vae_tiling_stats s1 = {0}, s2 = {0};
        CHECK(ltx2_vae_tiled_decode(ctx, dec, &tlt, &t, &at, &s1) == LTX2_OK, "tiled: %s", ltx2_last_error(ctx));
        t.tile_batch = 4;
        CHECK(ltx2_vae_tiled_decode(ctx, dec, &tlt, &t, &bt, &s2) == LTX2_OK, "tiled b4: %s", ltx2_last_error(ctx));
        CHECK(memcmp(a, b, (size_t)tn * sizeof(float)) == 0 && s1.n_tiles > 1 && s2.n_vae_calls == s1.n_vae_calls,
              "tiled tcond decode differs with tile_batch 4 (tiles %lld, calls %lld vs %lld)", (long long)s1.n_tiles,
              (long long)s2.n_vae_calls, (long long)s1.n_vae_calls);
        /* Explicit options reach every tile: another seed changes the video. */
        ltx2_vae_decode_opts so = ltx2_vae_decode_opts_default();
        so.seed = 11;
        t.decode_opts = &so;
        CHECK(ltx2_vae_tiled_decode(ctx, dec, &tlt, &t, &bt, NULL) == LTX2_OK, "tiled seed: %s", ltx2_last_error(ctx));
        CHECK(test_rel_l2(b, a, tn) > 1e-4, "tiled decode ignores decode_opts");
        free(tlat);
        free(a);
        free(b);
    }

    /* 4. Errors. */
    o.noise_scale = 1.5;
    expect(ctx, ltx2_video_decoder_decode_ex(ctx, dec, &lt, &vt, &o, NULL, NULL), LTX2_ERR_INVALID_ARG,
           "decode_noise_scale", "noise scale 1.5");
    o.noise_scale = TCOND_NOISE_SCALE;
    io.next_noise = 0;
    io.fail_at = 3;
    expect(ctx, ltx2_video_decoder_decode_ex(ctx, dec, &lt, &vt, &o, NULL, NULL), LTX2_ERR_IO, "refuses draw 3",
           "failing noise source");
    {
        ltx2_vae_config c0 = cfg;
        ltx2_video_decoder *bad = NULL;
        c0.timestep_conditioning = 0;
        expect(ctx, ltx2_video_decoder_load(ctx, w, "vae.", &c0, &bad), LTX2_ERR_FORMAT, "timestep_conditioning",
               "config without conditioning");
        c0.timestep_conditioning = -1; /* absent key: the tensors decide */
        CHECK(ltx2_video_decoder_load(ctx, w, "vae.", &c0, &bad) == LTX2_OK && bad && bad->timestep_conditioning,
              "absent timestep_conditioning with conditioning tensors: %s", ltx2_last_error(ctx));
        ltx2_video_decoder_free(bad);
        bad = NULL;
        c0.timestep_conditioning = 1;
        c0.decoder_blocks[0].inject_noise = false; /* per_channel_scale tensors become unexpected */
        expect(ctx, ltx2_video_decoder_load(ctx, w, "vae.", &c0, &bad), LTX2_ERR_FORMAT, "per_channel_scale",
               "inject_noise off with noise tensors");
    }
    free(vid);
    free(vid2);
    free(lat);
done:
    ltx2_video_decoder_free(dec);
    ltx2_st_close(golden);
    ltx2_st_set_close(w);
    ltx2_context_free(ctx);
    return test_finish();
}
