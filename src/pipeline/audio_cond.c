/* Audio conditioning: reading, encoding and cutting the given audio (see audio_cond.h). */
#include "pipeline/audio_cond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/audio_file.h"
#include "model/audio_encoder.h"

/* Seconds of audio one latent frame covers: hop x downsampling at the model rate (40 ms). */
static double latent_frame_seconds(void) {
    return (double)LTX2_PIPE_AUDIO_HOP * LTX2_PIPE_AUDIO_DOWNSAMPLE / LTX2_PIPE_AUDIO_SAMPLE_RATE;
}

ltx2_status ltx2_audio_cond_read(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_wav_audio *out) {
    const double clip_s = (double)p->frames / p->fps;
    const double max_s = p->audio_max_duration > 0 ? p->audio_max_duration : clip_s;
    LTX2_TRY(ltx2_audio_file_read(ctx, p->audio, p->audio_start_time, max_s, out));
    const double have_s = (double)out->frames / (double)out->sample_rate;
    if (have_s < clip_s - LTX2_AUDIO_COND_SLACK_FRAMES * latent_frame_seconds()) {
        const ltx2_status st = LTX2_ERROR(
            ctx, LTX2_ERR_INVALID_ARG,
            "audio %s: %.3f s from %g s, but the clip lasts %.3f s (%d frames at %g fps): give a longer audio, an earlier "
            "start or fewer frames%s",
            p->audio, have_s, p->audio_start_time, clip_s, p->frames, p->fps,
            p->audio_max_duration > 0 && p->audio_max_duration < clip_s ? " (the audio's maximum duration is shorter "
                                                                          "than the clip)" : "");
        ltx2_wav_audio_free(out);
        return st;
    }
    LTX2_LOGI(ctx, "generate: audio %s: %.3f s from %g s, %lld channel(s) at %lld Hz, held in every stage; the output "
              "audio is this waveform", p->audio, have_s, p->audio_start_time, (long long)out->channels,
              (long long)out->sample_rate);
    return LTX2_OK;
}

ltx2_status ltx2_audio_cond_encode(ltx2_context *ctx, ltx2_pipe_models *m, const ltx2_wav_audio *clip,
                                   const ltx2_pipe_geometry *g, const char *dump, float *tokens) {
    LTX2_TRY(ltx2_pipe_models_load_audio_encoder(ctx, m));
    const int64_t C = m->aenc->cfg.in_channels, N = clip->frames;
    if (clip->channels != 1 && clip->channels != C)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio: %lld channels; the audio VAE takes %lld (down-mix first)",
                          (long long)clip->channels, (long long)C);
    const int64_t ws[3] = {1, C, N};
    int64_t ls[4];
    LTX2_TRY(ltx2_audio_encoder_wave_latent_shape(ctx, m->aenc, 1, C, N, clip->sample_rate, ls));
    if (ls[1] != g->az || ls[3] != g->afreq)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio: the encoder gives %lld x %lld latent features, the DiT takes %lld "
                          "x %lld", (long long)ls[1], (long long)ls[3], (long long)g->az, (long long)g->afreq);
    if (ls[2] < g->at)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio: %.3f s encode to %lld latent frames, the clip needs %lld: "
                          "give a longer audio or fewer frames", (double)N / (double)clip->sample_rate,
                          (long long)ls[2], (long long)g->at);
    float *wave = malloc((size_t)(C * N) * sizeof(float));
    float *lat = malloc((size_t)(ls[1] * ls[2] * ls[3]) * sizeof(float));
    ltx2_status st = wave && lat ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio: %lld samples", (long long)(C * N));
    if (st == LTX2_OK) {
        for (int64_t c = 0; c < C; c++) /* mono: the one channel twice */
            memcpy(wave + c * N, clip->samples + (clip->channels == 1 ? 0 : c) * N, (size_t)N * sizeof(float));
        ltx2_tensor wt = ltx2_tensor_make(wave, LTX2_F32, 3, ws), lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
        st = ltx2_audio_enc_device_encode_waveform(ctx, m->aenc_dev, &wt, clip->sample_rate, &lt);
    }
    if (st == LTX2_OK) st = ltx2_pipe_dump(ctx, dump, "encoded_audio_latent", lat, 4, ls);
    if (st == LTX2_OK) ltx2_pipe_audio_patchify(g, lat, ls[2], tokens);
    free(wave);
    free(lat);
    return st;
}
