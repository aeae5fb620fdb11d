/* The audio VAE decoder's one forward (src/model/audio_vae_decode.c) on a device backend against
 * the same forward on the CPU backend in fp32 (the reference), on the golden latent "decoder.in"
 * of audio_<v>.safetensors with the tiny LTX-2.0 and LTX-2.3 checkpoints: every dumped stage of
 * the chained run is compared (so a failure names the stage), then the spectrogram. The tiny
 * latent's 2 channels and 2 output channels exercise the device conv's channel widening. Uses the
 * backends and comparison rule of vae_device_check.h. */
#ifndef LTX2_TEST_AUDIO_VAE_CHECK_H
#define LTX2_TEST_AUDIO_VAE_CHECK_H

#include "model/audio_vae.h"
#include "vae_device_check.h"

typedef struct audio_case {
    const char *label;
    ltx2_st_set *w;
    ltx2_audio_decoder *dec;
    float *lat, *ref_mel;
    int64_t ls[4], ms[4];
    stages ref;
} audio_case;

/* Captures 4-D stages ([B, C, T, F]) as 5-D [B, C, T, F, 1] so the stage table holds them. */
static void capture4(const char *name, const ltx2_tensor *t, void *user) {
    if (t->ndim != 4) return;
    const int64_t s5[5] = {t->shape[0], t->shape[1], t->shape[2], t->shape[3], 1};
    const ltx2_tensor v = ltx2_tensor_make(t->data, LTX2_F32, 5, s5);
    capture(name, &v, user);
}

static void audio_case_free(audio_case *c) {
    ltx2_audio_decoder_free(c->dec);
    ltx2_st_set_close(c->w);
    free(c->lat);
    free(c->ref_mel);
    stages_free(&c->ref);
}

static bool audio_case_load(audio_case *c, const char *label, const char *v) {
    memset(c, 0, sizeof(*c));
    c->label = label;
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof(wpath), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(gpath, sizeof(gpath), "%s/tests/golden/data/audio_%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_file *golden = NULL;
    ltx2_audio_vae_config cfg;
    bool ok = ltx2_st_set_open(g_ctx, wpath, &c->w) == LTX2_OK && ltx2_st_open(g_ctx, gpath, &golden) == LTX2_OK &&
              ltx2_audio_vae_config_from_file(g_ctx, c->w->files[0], &cfg) == LTX2_OK &&
              ltx2_audio_decoder_load(g_ctx, c->w, "audio_vae.", &cfg, &c->dec) == LTX2_OK;
    const ltx2_st_tensor *in = ok ? ltx2_st_find(golden, "decoder.in") : NULL;
    ok = ok && in && in->ndim == 4;
    if (ok) {
        for (int i = 0; i < 4; i++) c->ls[i] = in->shape[i];
        const size_t n = (size_t)(c->ls[0] * c->ls[1] * c->ls[2] * c->ls[3]);
        c->lat = malloc(n * sizeof(float));
        ok = c->lat && ltx2_convert(g_ctx, c->lat, LTX2_F32, in->data, in->dtype, n) == LTX2_OK &&
             ltx2_audio_decoder_out_shape(g_ctx, c->dec, c->ls, c->ms) == LTX2_OK;
    }
    CHECK(ok, "%s: loading %s / %s: %s", label, wpath, gpath, ltx2_last_error(g_ctx));
    ltx2_st_close(golden);
    if (!ok) return false;
    c->ref_mel = malloc((size_t)(c->ms[0] * c->ms[1] * c->ms[2] * c->ms[3]) * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 4, c->ls), mt = ltx2_tensor_make(c->ref_mel, LTX2_F32, 4, c->ms);
    ok = c->ref_mel && ltx2_audio_decoder_decode(g_ctx, c->dec, &lt, &mt, capture4, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference decode: %s", label, ltx2_last_error(g_ctx));
    return ok;
}

static void audio_check(const be_case *bc, const audio_case *c) {
    if (!c->dec || !c->ref_mel) return;
    ltx2_audio_dec_device *dv = NULL;
    ltx2_status st = ltx2_audio_dec_device_create(g_ctx, bc->be, c->dec, &dv);
    CHECK(st == LTX2_OK, "%s %s: device weights: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const int64_t nm = c->ms[0] * c->ms[1] * c->ms[2] * c->ms[3];
    float *mel = malloc((size_t)nm * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 4, c->ls), mt = ltx2_tensor_make(mel, LTX2_F32, 4, c->ms);
    stages got = {.n = 0};
    st = ltx2_audio_dec_device_decode(g_ctx, dv, &lt, &mt, capture4, &got);
    CHECK(st == LTX2_OK, "%s %s decode: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        CHECK(got.n == c->ref.n, "%s %s: device dumped %d stages, CPU %d", bc->be->name, c->label, got.n, c->ref.n);
        for (int i = 0; i < got.n; i++) {
            const stage *r = find_stage(&c->ref, got.s[i].name);
            CHECK(r && memcmp(r->shape, got.s[i].shape, sizeof(r->shape)) == 0, "%s %s: stage %s missing or reshaped",
                  bc->be->name, c->label, got.s[i].name);
            if (!r || memcmp(r->shape, got.s[i].shape, sizeof(r->shape)) != 0) continue;
            char what[160];
            snprintf(what, sizeof(what), "%s %s", c->label, got.s[i].name);
            compare(bc, what, r->d, got.s[i].d, r->shape);
        }
        const int64_t s5[5] = {c->ms[0], c->ms[1], c->ms[2], c->ms[3], 1};
        char what[96];
        snprintf(what, sizeof(what), "%s decode (spectrogram)", c->label);
        if (compare(bc, what, c->ref_mel, mel, s5)) printf("%s %s: decode matches\n", bc->be->name, c->label);
    }
    stages_free(&got);
    free(mel);
    ltx2_audio_dec_device_free(dv);
}

/* The tiny 2.0 and 2.3 audio decoders and their references. */
static void audio_cases_load(audio_case cases[2]) {
    audio_case_load(&cases[0], "2.0 audio", "2.0");
    audio_case_load(&cases[1], "2.3 audio", "2.3");
}

#endif
