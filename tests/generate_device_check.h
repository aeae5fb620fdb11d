/* The tiny generation on a device backend against the same pipeline on the CPU backend:
 * ltx2_generate_on puts the DiT, the text connectors, the video VAE, the audio VAE and the vocoder
 * on the device in bf16, checked per stage. Shared by test_generate_cuda (a GPU)
 * and test_emu_generate (the CUDA kernels in the CPU emulator). LTX-2.0 and 2.3 at the e2e golden's
 * settings (64 x 96, 9 frames, 2 steps, CFG + STG + modality + rescale):
 * - the final video and audio latents against the CPU run (text + denoising);
 * - the decoded video against the CPU decode of the emulator's own latent (the VAE alone);
 * - the waveform against the CPU audio decode of the emulator's own latent (the audio VAE and the
 *   vocoder alone; a waveform is too sensitive to its latent to compare across the two runs). */
#ifndef LTX2_TEST_GENERATE_DEVICE_CHECK_H
#define LTX2_TEST_GENERATE_DEVICE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltx2/ltx2.h"
#include "pipeline/pipeline.h"
#include "test_util.h"
#include "tiny_gen_params.h"

/* Latents: bf16 weights and activations against the fp32 reference through 2 steps of 4 guided
 * passes. Each DiT call is ~1e-2 rel-L2 off (test_emu_dit) and guidance amplifies the difference of
 * its passes (x = cond + (cfg - 1) (cond - uncond) + ...; the audio CFG is 7): measured 0.02-0.046.
 * A wrong op, layout or rule moves a latent by O(1). */
#define GEN_EMU_LATENT_MAX_REL_L2 1e-1
/* The VAE alone on the same latent: bf16 activations through ~20 convs (test_emu_vae: ~1e-2). */
#define GEN_EMU_VIDEO_MAX_REL_L2 3e-2
/* The audio VAE on the device in bf16 (test_emu_vae: spectrogram ~1e-2) then the vocoder on the
 * device in f32 (alone ~3e-6, test_emu_vae) on the same latent: measured 0.0042 (2.0) and 0.028
 * (2.3, whose bandwidth-extension stage amplifies the spectrogram's error). A wrong op or layout
 * moves the waveform by O(1). */
#define GEN_EMU_WAVE_MAX_REL_L2 1e-1

static inline void stage(const char *v, const char *what, const float *got, const float *ref, int64_t n, double tol) {
    bool finite = true;
    for (int64_t i = 0; i < n; i++) finite = finite && isfinite(got[i]);
    const double e = test_rel_l2(got, ref, n);
    CHECK(finite && e <= tol, "%s %s: rel-L2 %.3g (max %.0e)%s", v, what, e, tol, finite ? "" : ", non-finite values");
    printf("%s %-28s rel-L2 %.3g\n", v, what, e);
}

/* The CPU decodes of the emulator run's latents: video into *video, waveform into *wav. */
static inline bool cpu_decodes(ltx2_context *ctx, const char *ckpt, const ltx2_generate_result *r, float **video,
                        float **wav) {
    ltx2_pipe_models m;
    if (ltx2_pipe_models_load(ctx, ckpt, ltx2_backend_cpu(), &m) != LTX2_OK) return false;
    int64_t vshape[5], mshape[4], wshape[3];
    bool ok = ltx2_video_decoder_out_shape(ctx, m.vdec, r->video_latent_shape, vshape) == LTX2_OK &&
              ltx2_audio_decoder_out_shape(ctx, m.adec, r->audio_latent_shape, mshape) == LTX2_OK &&
              ltx2_vocoder_out_shape(ctx, m.voc, mshape, wshape) == LTX2_OK;
    float *mel = ok ? malloc((size_t)(mshape[0] * mshape[1] * mshape[2] * mshape[3]) * sizeof(float)) : NULL;
    *video = ok ? malloc((size_t)(vshape[0] * vshape[1] * vshape[2] * vshape[3] * vshape[4]) * sizeof(float)) : NULL;
    *wav = ok ? malloc((size_t)(wshape[0] * wshape[1] * wshape[2]) * sizeof(float)) : NULL;
    ok = ok && mel && *video && *wav;
    if (ok) {
        ltx2_tensor vl = ltx2_tensor_make(r->video_latent, LTX2_F32, 5, r->video_latent_shape);
        ltx2_tensor vt = ltx2_tensor_make(*video, LTX2_F32, 5, vshape);
        ltx2_tensor al = ltx2_tensor_make(r->audio_latent, LTX2_F32, 4, r->audio_latent_shape);
        ltx2_tensor mt = ltx2_tensor_make(mel, LTX2_F32, 4, mshape), wt = ltx2_tensor_make(*wav, LTX2_F32, 3, wshape);
        ok = ltx2_video_decoder_decode(ctx, m.vdec, &vl, &vt, NULL, NULL) == LTX2_OK &&
             ltx2_audio_decoder_decode(ctx, m.adec, &al, &mt, NULL, NULL) == LTX2_OK &&
             ltx2_vocoder_run(ctx, m.voc, &mt, &wt, NULL, NULL) == LTX2_OK;
    }
    free(mel);
    ltx2_pipe_models_free(&m);
    return ok;
}

/* p on the CPU backend (*ref) and on dev (*got); false (the test failed) when either run fails,
 * and then nothing is left to free. */
static inline bool gen_cpu_and_device(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *dev,
                                      const char *what, ltx2_generate_result *ref, ltx2_generate_result *got) {
    ltx2_status st = ltx2_generate_on(ctx, p, ltx2_backend_cpu(), ref);
    CHECK(st == LTX2_OK, "%s cpu: %s", what, ltx2_last_error(ctx));
    if (st != LTX2_OK) return false;
    st = ltx2_generate_on(ctx, p, dev, got);
    CHECK(st == LTX2_OK, "%s %s: %s", what, dev->name, ltx2_last_error(ctx));
    if (st != LTX2_OK) ltx2_generate_result_free(ref);
    return st == LTX2_OK;
}

/* The final video and audio latents of got against ref. */
static inline void gen_check_latents(const char *what, const ltx2_generate_result *got,
                                     const ltx2_generate_result *ref, double video_tol, double audio_tol) {
    const int64_t *vs = ref->video_latent_shape, *as = ref->audio_latent_shape;
    stage(what, "video latent", got->video_latent, ref->video_latent, vs[0] * vs[1] * vs[2] * vs[3] * vs[4],
          video_tol);
    stage(what, "audio latent", got->audio_latent, ref->audio_latent, as[0] * as[1] * as[2] * as[3], audio_tol);
}

/* The e2e golden's settings on the tiny model of version v; ckpt (cap bytes) holds its path. */
static inline void gen_device_params(ltx2_generate_params *p, char *ckpt, size_t cap, const char *v) {
    snprintf(ckpt, cap, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    tiny_gen_params(p, ckpt);
}

static inline void generate_device_check(ltx2_context *ctx, const ltx2_backend *dev, const char *v) {
    char ckpt[1024];
    ltx2_generate_params p;
    gen_device_params(&p, ckpt, sizeof ckpt, v);
    ltx2_generate_result ref, got;
    if (!gen_cpu_and_device(ctx, &p, dev, v, &ref, &got)) return;
    gen_check_latents(v, &got, &ref, GEN_EMU_LATENT_MAX_REL_L2, GEN_EMU_LATENT_MAX_REL_L2);
    float *cvideo = NULL, *cwav = NULL;
    const bool ok = cpu_decodes(ctx, ckpt, &got, &cvideo, &cwav);
    CHECK(ok, "%s: CPU decodes of the emulator's latents: %s", v, ltx2_last_error(ctx));
    if (ok) {
        stage(v, "video (VAE on the same latent)", got.video, cvideo, got.frames * got.height * got.width * 3,
              GEN_EMU_VIDEO_MAX_REL_L2);
        stage(v, "waveform (audio VAE + vocoder)", got.audio, cwav, got.audio_channels * got.audio_samples,
              GEN_EMU_WAVE_MAX_REL_L2);
    }
    const ltx2_generate_timings *t = &got.timings;
    printf("%s: cpu %.2f s, %s %.2f s (load %.2f text %.2f denoise %.2f video %.2f audio %.2f)\n", v,
           ref.timings.total, dev->name, t->total, t->load, t->text, t->denoise, t->video_decode, t->audio_decode);
    ltx2_generate_result_free(&got);
    free(cvideo);
    free(cwav);
    ltx2_generate_result_free(&ref);
}

#endif
