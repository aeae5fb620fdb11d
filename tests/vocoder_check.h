/* The vocoders' one forward (src/model/vocoder_forward.c) on a device backend against the same
 * forward on the CPU backend in fp32 (the reference), on the golden mel "vocoder.in" of
 * audio_<v>.safetensors with the tiny LTX-2.0 (HiFi-GAN) and LTX-2.3 (BigVGAN-v2 + bandwidth
 * extension) checkpoints: every dumped stage by name (so a failure names it), then the waveform.
 * Uses the backends and comparison rule of vae_device_check.h and the stage check of
 * audio_vae_check.h. */
#ifndef LTX2_TEST_VOCODER_CHECK_H
#define LTX2_TEST_VOCODER_CHECK_H

#include "audio_vae_check.h"
#include "model/vocoder.h"

typedef struct voc_case {
    const char *label;
    ltx2_st_set *w;
    ltx2_vocoder *voc;
    float *mel, *ref_wav;
    int64_t ms[4], ws[3];
    stages ref;
} voc_case;

static void voc_case_free(voc_case *c) {
    ltx2_vocoder_free(c->voc);
    ltx2_st_set_close(c->w);
    free(c->mel);
    free(c->ref_wav);
    stages_free(&c->ref);
}

static bool voc_case_load(voc_case *c, const char *label, const char *v) {
    memset(c, 0, sizeof(*c));
    c->label = label;
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof(wpath), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(gpath, sizeof(gpath), "%s/tests/golden/data/audio_%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_file *golden = NULL;
    ltx2_vocoder_config cfg;
    bool ok = ltx2_st_set_open(g_ctx, wpath, &c->w) == LTX2_OK && ltx2_st_open(g_ctx, gpath, &golden) == LTX2_OK &&
              ltx2_vocoder_config_from_file(g_ctx, c->w->files[0], &cfg) == LTX2_OK &&
              ltx2_vocoder_load(g_ctx, c->w, "vocoder.", &cfg, &c->voc) == LTX2_OK;
    c->mel = ok ? golden_f32(golden, "vocoder.in", c->ms) : NULL;
    ok = c->mel && ltx2_vocoder_out_shape(g_ctx, c->voc, c->ms, c->ws) == LTX2_OK;
    CHECK(ok, "%s: loading %s / %s: %s", label, wpath, gpath, ltx2_last_error(g_ctx));
    ltx2_st_close(golden);
    if (!ok) return false;
    c->ref_wav = malloc((size_t)(c->ws[0] * c->ws[1] * c->ws[2]) * sizeof(float));
    ltx2_tensor mt = ltx2_tensor_make(c->mel, LTX2_F32, 4, c->ms), wt = ltx2_tensor_make(c->ref_wav, LTX2_F32, 3, c->ws);
    ok = c->ref_wav && ltx2_vocoder_run(g_ctx, c->voc, &mt, &wt, capture_nd, &c->ref) == LTX2_OK;
    CHECK(ok, "%s: CPU reference vocoder: %s", label, ltx2_last_error(g_ctx));
    return ok;
}

static void voc_check(const be_case *bc, const voc_case *c) {
    if (!c->voc || !c->ref_wav) return;
    ltx2_vocoder_device *dv = NULL;
    ltx2_status st = ltx2_vocoder_device_create(g_ctx, bc->be, c->voc, &dv);
    CHECK(st == LTX2_OK, "%s %s: device weights: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const int64_t nw = c->ws[0] * c->ws[1] * c->ws[2];
    float *wav = malloc((size_t)nw * sizeof(float));
    ltx2_tensor mt = ltx2_tensor_make(c->mel, LTX2_F32, 4, c->ms), wt = ltx2_tensor_make(wav, LTX2_F32, 3, c->ws);
    stages got = {.n = 0};
    st = ltx2_vocoder_device_run(g_ctx, dv, &mt, &wt, capture_nd, &got);
    CHECK(st == LTX2_OK, "%s %s: %s", bc->be->name, c->label, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        audio_stages_check(bc, c->label, &c->ref, &got);
        const int64_t s5[5] = {c->ws[0], c->ws[1], c->ws[2], 1, 1};
        char what[96];
        snprintf(what, sizeof(what), "%s (waveform)", c->label);
        if (compare(bc, what, c->ref_wav, wav, s5)) printf("%s %s: waveform matches\n", bc->be->name, c->label);
    }
    stages_free(&got);
    free(wav);
    ltx2_vocoder_device_free(dv);
}

/* The tiny 2.0 and 2.3 vocoders and their references. */
static void voc_cases_load(voc_case cases[2]) {
    voc_case_load(&cases[0], "2.0 vocoder", "2.0");
    voc_case_load(&cases[1], "2.3 vocoder", "2.3");
}

#endif
