/* The audio VAE decoder's and encoder's one forwards (src/model/audio_vae_decode.c,
 * audio_vae_encode.c) on a device backend against the same forwards on the CPU backend in fp32 (the
 * references), on the golden latent "decoder.in" of audio_<v>.safetensors and the golden mel
 * "mel.out" of audio_enc_<v>.safetensors with the tiny LTX-2.0 and LTX-2.3 checkpoints: every
 * dumped stage of the chained run is compared (so a failure names the stage), then the spectrogram
 * or latent. The tiny 2-channel latent, stereo mel and 4-channel encoder output exercise the device
 * conv's channel widening; the encoder's stride-2 Downsample runs as a widened strided conv3d.
 * Uses the backends and comparison rule of vae_device_check.h. */
#ifndef LTX2_TEST_AUDIO_VAE_CHECK_H
#define LTX2_TEST_AUDIO_VAE_CHECK_H

#include "model/audio_encoder.h"
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

/* The golden 4-D tensor `name` as a new f32 array, its shape in shape[4]; NULL when absent. */
static float *golden_f32(const ltx2_st_file *golden, const char *name, int64_t shape[4]) {
    const ltx2_st_tensor *t = ltx2_st_find(golden, name);
    if (!t || t->ndim != 4) return NULL;
    for (int i = 0; i < 4; i++) shape[i] = t->shape[i];
    const size_t n = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    float *d = malloc(n * sizeof(float));
    if (d && ltx2_convert(g_ctx, d, LTX2_F32, t->data, t->dtype, n) != LTX2_OK) {
        free(d);
        d = NULL;
    }
    return d;
}

/* Captures stages of up to 5 dims ([B, C, T, F], the vocoder's [B, C, L]) as 5-D with trailing
 * ones, so the stage table holds them. */
static void capture_nd(const char *name, const ltx2_tensor *t, void *user) {
    if (t->ndim < 1 || t->ndim > 5) return;
    int64_t s5[5] = {1, 1, 1, 1, 1};
    for (int i = 0; i < t->ndim; i++) s5[i] = t->shape[i];
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
    c->lat = ok ? golden_f32(golden, "decoder.in", c->ls) : NULL;
    ok = c->lat && ltx2_audio_decoder_out_shape(g_ctx, c->dec, c->ls, c->ms) == LTX2_OK;
    CHECK(ok, "%s: loading %s / %s: %s", label, wpath, gpath, ltx2_last_error(g_ctx));
    ltx2_st_close(golden);
    if (!ok) return false;
    c->ref_mel = malloc((size_t)(c->ms[0] * c->ms[1] * c->ms[2] * c->ms[3]) * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(c->lat, LTX2_F32, 4, c->ls), mt = ltx2_tensor_make(c->ref_mel, LTX2_F32, 4, c->ms);
    ok = c->ref_mel && ltx2_audio_decoder_decode(g_ctx, c->dec, &lt, &mt, capture_nd, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference decode: %s", label, ltx2_last_error(g_ctx));
    return ok;
}

/* One encoder, the golden mel and the CPU reference encode (stages + latent). */
typedef struct audio_enc_case {
    const char *label;
    ltx2_st_set *w;
    ltx2_audio_encoder *enc;
    float *mel, *ref_lat;
    int64_t ms[4], ls[4];
    stages ref;
} audio_enc_case;

static void audio_enc_case_free(audio_enc_case *c) {
    ltx2_audio_encoder_free(c->enc);
    ltx2_st_set_close(c->w);
    free(c->mel);
    free(c->ref_lat);
    stages_free(&c->ref);
}

static bool audio_enc_case_load(audio_enc_case *c, const char *label, const char *v) {
    memset(c, 0, sizeof(*c));
    c->label = label;
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof(wpath), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(gpath, sizeof(gpath), "%s/tests/golden/data/audio_enc_%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_file *golden = NULL;
    ltx2_audio_encoder_config cfg;
    bool ok = ltx2_st_set_open(g_ctx, wpath, &c->w) == LTX2_OK && ltx2_st_open(g_ctx, gpath, &golden) == LTX2_OK &&
              ltx2_audio_encoder_config_from_file(g_ctx, c->w->files[0], &cfg) == LTX2_OK &&
              ltx2_audio_encoder_load(g_ctx, c->w, "audio_vae.", &cfg, &c->enc) == LTX2_OK;
    c->mel = ok ? golden_f32(golden, "mel.out", c->ms) : NULL;
    ok = c->mel && ltx2_audio_encoder_out_shape(g_ctx, c->enc, c->ms, c->ls) == LTX2_OK;
    CHECK(ok, "%s: loading %s / %s: %s", label, wpath, gpath, ltx2_last_error(g_ctx));
    ltx2_st_close(golden);
    if (!ok) return false;
    c->ref_lat = malloc((size_t)(c->ls[0] * c->ls[1] * c->ls[2] * c->ls[3]) * sizeof(float));
    ltx2_tensor mt = ltx2_tensor_make(c->mel, LTX2_F32, 4, c->ms), lt = ltx2_tensor_make(c->ref_lat, LTX2_F32, 4, c->ls);
    ok = c->ref_lat && ltx2_audio_encoder_encode(g_ctx, c->enc, &mt, &lt, capture_nd, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference encode: %s", label, ltx2_last_error(g_ctx));
    return ok;
}

/* Every stage the device dumped against the reference's, by name. */
static void audio_stages_check(const be_case *bc, const char *label, const stages *ref, const stages *got) {
    CHECK(got->n == ref->n, "%s %s: device dumped %d stages, CPU %d", bc->be->name, label, got->n, ref->n);
    for (int i = 0; i < got->n; i++) {
        const stage *r = find_stage(ref, got->s[i].name);
        CHECK(r && memcmp(r->shape, got->s[i].shape, sizeof(r->shape)) == 0, "%s %s: stage %s missing or reshaped",
              bc->be->name, label, got->s[i].name);
        if (!r || memcmp(r->shape, got->s[i].shape, sizeof(r->shape)) != 0) continue;
        char what[160];
        snprintf(what, sizeof(what), "%s %s", label, got->s[i].name);
        compare(bc, what, r->d, got->s[i].d, r->shape);
    }
}

static void audio_enc_check(const be_case *bc, const audio_enc_case *c) {
    if (!c->enc || !c->ref_lat) return;
    ltx2_audio_enc_device *dv = NULL;
    ltx2_status st = ltx2_audio_enc_device_create(g_ctx, bc->be, c->enc, &dv);
    CHECK(st == LTX2_OK, "%s %s: device weights: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const int64_t nl = c->ls[0] * c->ls[1] * c->ls[2] * c->ls[3];
    float *lat = malloc((size_t)nl * sizeof(float));
    ltx2_tensor mt = ltx2_tensor_make(c->mel, LTX2_F32, 4, c->ms), lt = ltx2_tensor_make(lat, LTX2_F32, 4, c->ls);
    stages got = {.n = 0};
    st = ltx2_audio_enc_device_encode(g_ctx, dv, &mt, &lt, capture_nd, &got);
    CHECK(st == LTX2_OK, "%s %s encode: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        audio_stages_check(bc, c->label, &c->ref, &got);
        const int64_t s5[5] = {c->ls[0], c->ls[1], c->ls[2], c->ls[3], 1};
        char what[96];
        snprintf(what, sizeof(what), "%s encode (latent)", c->label);
        if (compare(bc, what, c->ref_lat, lat, s5)) printf("%s %s: encode matches\n", bc->be->name, c->label);
    }
    stages_free(&got);
    free(lat);
    ltx2_audio_enc_device_free(dv);
}

/* The tiny 2.0 and 2.3 audio encoders and their references. */
static void audio_enc_cases_load(audio_enc_case cases[2]) {
    audio_enc_case_load(&cases[0], "2.0 audio encoder", "2.0");
    audio_enc_case_load(&cases[1], "2.3 audio encoder", "2.3");
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
    st = ltx2_audio_dec_device_decode(g_ctx, dv, &lt, &mt, capture_nd, &got);
    CHECK(st == LTX2_OK, "%s %s decode: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        audio_stages_check(bc, c->label, &c->ref, &got);
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
