/* Latent geometry, positions, initial noise and intermediate dumps for the generation pipeline
 * (rules cited in pipeline.h and PARITY.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "core/rng.h"
#include "io/npy.h"
#include "io/tensor_set.h"
#include "pipeline/pipeline.h"

int64_t ltx2_pipe_audio_latent_frames(int64_t frames, double fps) {
    const double per_s = (double)LTX2_PIPE_AUDIO_SAMPLE_RATE / (double)LTX2_PIPE_AUDIO_HOP /
                         (double)LTX2_PIPE_AUDIO_DOWNSAMPLE;
    /* Python's round() on a float rounds half to even: nearbyint in the default rounding mode. */
    return (int64_t)nearbyint((double)frames / fps * per_s);
}

ltx2_status ltx2_pipe_geometry_make(ltx2_context *ctx, int64_t frames, int64_t height, int64_t width, double fps,
                                    int64_t time_factor, int64_t space_factor, int64_t latent_channels,
                                    int64_t audio_z, int64_t audio_feat, ltx2_pipe_geometry *g) {
    memset(g, 0, sizeof *g);
    if (frames < 1 || (frames - 1) % time_factor)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "frames must be %lld*k + 1, got %lld", (long long)time_factor,
                          (long long)frames);
    if (height < space_factor || width < space_factor || height % space_factor || width % space_factor)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "height and width must be positive multiples of %lld, got %lldx%lld",
                          (long long)space_factor, (long long)height, (long long)width);
    if (!(fps > 0.0) || !isfinite(fps)) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "fps must be > 0, got %g", fps);
    if (audio_z < 1 || audio_feat % audio_z)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio token width %lld is not a multiple of the audio VAE's %lld channels",
                          (long long)audio_feat, (long long)audio_z);
    g->lf = (frames - 1) / time_factor + 1;
    g->lh = height / space_factor;
    g->lw = width / space_factor;
    g->lc = latent_channels;
    g->video_tokens = g->lf * g->lh * g->lw;
    g->at = ltx2_pipe_audio_latent_frames(frames, fps);
    if (g->at < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%lld frames at %g fps give no audio latent frame", (long long)frames, fps);
    g->az = audio_z;
    g->afreq = audio_feat / audio_z;
    g->audio_feat = audio_feat;
    return LTX2_OK;
}

void ltx2_pipe_video_positions(const ltx2_pipe_geometry *g, int64_t time_factor, int64_t space_factor,
                               double fps, bool bf16, bool xla, int64_t stride, float *out) {
    const int64_t T = stride;
    const float fps_f = (float)fps; /* torch divides the fp32 tensor by the scalar in fp32 */
    const float inv_fps = 1.0f / fps_f; /* XLA: x / fps -> x * fl(1 / fps) */
    int64_t i = 0;
    for (int64_t f = 0; f < g->lf; f++)
        for (int64_t h = 0; h < g->lh; h++)
            for (int64_t w = 0; w < g->lw; w++, i++) {
                int64_t lo[3] = {f, h, w};
                int64_t scale[3] = {time_factor, space_factor, space_factor};
                for (int a = 0; a < 3; a++) {
                    for (int e = 0; e < 2; e++) {
                        int64_t px = (lo[a] + e) * scale[a];
                        float v;
                        if (a == 0) {
                            px = px + 1 - time_factor; /* causal fix: frame 0 covers one pixel frame */
                            if (px < 0) px = 0;
                            v = xla ? (float)px * inv_fps : (float)px / fps_f;
                        } else {
                            v = (float)px;
                        }
                        if (bf16) v = ltx2_round_bf16(v);
                        out[(a * T + i) * 2 + e] = v;
                    }
                }
            }
}

/* XLA folds MD's mel * hop / rate into one multiply by fl(hop * fl(1 / rate)) (0x3C23D70B, not
 * fl(0.01)); float arithmetic, so C folds it the same way. */
#define PIPE_AUDIO_SECONDS_PER_MEL_XLA ((float)LTX2_PIPE_AUDIO_HOP * (1.0f / (float)LTX2_PIPE_AUDIO_SAMPLE_RATE))

float ltx2_pipe_audio_time(int64_t latent, bool xla) {
    int64_t mel = latent * LTX2_PIPE_AUDIO_DOWNSAMPLE + 1 - LTX2_PIPE_AUDIO_DOWNSAMPLE;
    if (mel < 0) mel = 0;
    if (xla) return (float)mel * PIPE_AUDIO_SECONDS_PER_MEL_XLA;
    return (float)(mel * LTX2_PIPE_AUDIO_HOP) / (float)LTX2_PIPE_AUDIO_SAMPLE_RATE;
}

void ltx2_pipe_audio_positions(const ltx2_pipe_geometry *g, bool xla, float *out) {
    for (int64_t t = 0; t < g->at; t++) {
        out[t * 2 + 0] = ltx2_pipe_audio_time(t, xla);
        out[t * 2 + 1] = ltx2_pipe_audio_time(t + 1, xla);
    }
}

void ltx2_pipe_noise_philox(const ltx2_pipe_geometry *g, uint64_t seed, int stage, float *video, float *audio) {
    const uint64_t base = (uint64_t)stage * LTX2_PIPE_NOISE_STREAMS_PER_STAGE;
    ltx2_rng_normal(seed, base + LTX2_PIPE_NOISE_STREAM_VIDEO, 0, (size_t)(g->video_tokens * g->lc), video);
    ltx2_rng_normal(seed, base + LTX2_PIPE_NOISE_STREAM_AUDIO, 0, (size_t)(g->at * g->audio_feat), audio);
}

void ltx2_pipe_renoise(float *x, const float *noise, const float *mask, int64_t channels, float s, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float scaled = mask ? mask[i / channels] * s : s; /* scaled_mask = denoise_mask * noise_scale */
        const float keep = 1.0f - scaled;
        /* volatile: two roundings, no fused multiply-add, as torch's separate mul and add */
        volatile float a = noise[i] * scaled;
        volatile float b = x[i] * keep;
        x[i] = a + b;
    }
}

static ltx2_status to_f32(ltx2_context *ctx, const ltx2_named_tensor *nt, float *dst) {
    return ltx2_convert(ctx, dst, LTX2_F32, nt->t.data, nt->t.dtype, (size_t)ltx2_tensor_numel(&nt->t));
}

static bool shape_is(const ltx2_tensor *t, int ndim, const int64_t *shape) {
    if (t->ndim != ndim) return false;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i]) return false;
    return true;
}

ltx2_status ltx2_pipe_noise_dump(ltx2_context *ctx, const char *dir, int stage, const ltx2_pipe_geometry *g,
                                 const float *video, const float *audio) {
    if (!dir) return LTX2_OK;
    const bool tokens = g->video_tokens != g->lf * g->lh * g->lw;
    const int64_t T = g->video_tokens, nv = T * g->lc, na = g->at * g->audio_feat;
    const int64_t vshape[5] = {1, g->lc, g->lf, g->lh, g->lw}, tshape[3] = {1, T, g->lc};
    const int64_t ashape[4] = {1, g->az, g->at, g->afreq};
    float *tmp = ltx2_pipe_alloc_f(nv > na ? nv : na);
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dump: noise");
    char name[64];
    ltx2_status st;
    snprintf(name, sizeof name, "%svideo_noise%s", stage ? "stage_2_" : "", tokens ? "_tokens" : "");
    if (tokens) {
        st = ltx2_pipe_dump(ctx, dir, name, video, 3, tshape);
    } else {
        for (int64_t c = 0; c < g->lc; c++)
            for (int64_t t = 0; t < T; t++) tmp[c * T + t] = video[t * g->lc + c];
        st = ltx2_pipe_dump(ctx, dir, name, tmp, 5, vshape);
    }
    if (st == LTX2_OK) {
        ltx2_pipe_audio_unpatchify(g, audio, tmp);
        snprintf(name, sizeof name, "%saudio_noise", stage ? "stage_2_" : "");
        st = ltx2_pipe_dump(ctx, dir, name, tmp, 4, ashape);
    }
    free(tmp);
    return st;
}

ltx2_status ltx2_pipe_noise_load(ltx2_context *ctx, const char *path, int stage, const ltx2_pipe_geometry *g,
                                 float *video, float *audio) {
    /* keyframe tokens past the grid: the draw in its token layout [1, T, C] */
    const char *vgrid = stage ? "stage_2_video_noise" : "video_noise";
    const char *vtok = stage ? "stage_2_video_noise_tokens" : "video_noise_tokens";
    const char *agrid = stage ? "stage_2_audio_noise" : "audio_noise";
    const char *atok = stage ? "stage_2_audio_noise_tokens" : "audio_noise_tokens";
    ltx2_tensor_set *set = NULL;
    LTX2_TRY(ltx2_tensor_set_open(ctx, path, &set));
    ltx2_status st = LTX2_OK;
    float *tmp = NULL;
    /* keyframe tokens past the grid need the token layout; otherwise either (a TPU run's packed
     * latents are token-major) */
    const bool tokens = g->video_tokens != g->lf * g->lh * g->lw || !ltx2_tensor_set_find(set, vgrid);
    const char *vname = tokens ? vtok : vgrid;
    const bool atokens = !ltx2_tensor_set_find(set, agrid) && ltx2_tensor_set_find(set, atok);
    const char *aname = atokens ? atok : agrid;
    const ltx2_named_tensor *vn = ltx2_tensor_set_find(set, vname);
    const ltx2_named_tensor *an = ltx2_tensor_set_find(set, aname);
    const int64_t vshape[5] = {1, g->lc, g->lf, g->lh, g->lw}, tshape[3] = {1, g->video_tokens, g->lc};
    const int64_t ashape[4] = {1, g->az, g->at, g->afreq}, atshape[3] = {1, g->at, g->audio_feat};
    char b1[96], b2[96];
    if (!vn || !an) {
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "noise file %s: needs tensors \"%s\" and \"%s\"", path, vname, aname);
        goto done;
    }
    if (!shape_is(&vn->t, tokens ? 3 : 5, tokens ? tshape : vshape) || !ltx2_dtype_is_float(vn->t.dtype)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "noise file %s: %s has shape %s, expected float %s", path, vname,
                        ltx2_shape_str(vn->t.shape, vn->t.ndim, b1, sizeof b1),
                        tokens ? ltx2_shape_str(tshape, 3, b2, sizeof b2) : ltx2_shape_str(vshape, 5, b2, sizeof b2));
        goto done;
    }
    if (!shape_is(&an->t, atokens ? 3 : 4, atokens ? atshape : ashape) || !ltx2_dtype_is_float(an->t.dtype)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "noise file %s: %s has shape %s, expected float %s", path, aname,
                        ltx2_shape_str(an->t.shape, an->t.ndim, b1, sizeof b1),
                        atokens ? ltx2_shape_str(atshape, 3, b2, sizeof b2) : ltx2_shape_str(ashape, 4, b2, sizeof b2));
        goto done;
    }
    const int64_t nv = ltx2_tensor_numel(&vn->t), na = ltx2_tensor_numel(&an->t);
    tmp = malloc((size_t)(nv > na ? nv : na) * sizeof(float));
    if (!tmp) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "noise file %s: out of memory", path);
        goto done;
    }
    if ((st = to_f32(ctx, vn, tmp)) != LTX2_OK) goto done;
    if ((st = ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, tmp, tokens ? 3 : 5, tokens ? tshape : vshape,
                                "noise file %s: %s", path, vname)) != LTX2_OK)
        goto done;
    const int64_t T = g->video_tokens;
    if (tokens) {
        memcpy(video, tmp, (size_t)(T * g->lc) * sizeof(float));
    } else {
        for (int64_t c = 0; c < g->lc; c++)
            for (int64_t t = 0; t < T; t++) video[t * g->lc + c] = tmp[c * T + t];
    }
    if ((st = to_f32(ctx, an, tmp)) != LTX2_OK) goto done;
    if ((st = ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, tmp, atokens ? 3 : 4, atokens ? atshape : ashape,
                                "noise file %s: %s", path, aname)) != LTX2_OK)
        goto done;
    if (atokens) {
        memcpy(audio, tmp, (size_t)(g->at * g->audio_feat) * sizeof(float));
        goto done;
    }
    for (int64_t z = 0; z < g->az; z++)
        for (int64_t t = 0; t < g->at; t++)
            for (int64_t f = 0; f < g->afreq; f++)
                audio[t * g->audio_feat + z * g->afreq + f] = tmp[(z * g->at + t) * g->afreq + f];
done:
    free(tmp);
    ltx2_tensor_set_free(set);
    return st;
}

void ltx2_pipe_audio_unpatchify(const ltx2_pipe_geometry *g, const float *tokens, float *latent) {
    for (int64_t z = 0; z < g->az; z++)
        for (int64_t t = 0; t < g->at; t++)
            for (int64_t f = 0; f < g->afreq; f++)
                latent[(z * g->at + t) * g->afreq + f] = tokens[t * g->audio_feat + z * g->afreq + f];
}

void ltx2_pipe_audio_patchify(const ltx2_pipe_geometry *g, const float *latent, int64_t frames, float *tokens) {
    for (int64_t z = 0; z < g->az; z++)
        for (int64_t t = 0; t < g->at; t++)
            for (int64_t f = 0; f < g->afreq; f++)
                tokens[t * g->audio_feat + z * g->afreq + f] = latent[(z * frames + t) * g->afreq + f];
}

ltx2_status ltx2_pipe_dump(ltx2_context *ctx, const char *dir, const char *name, const float *data, int ndim,
                           const int64_t *shape) {
    if (!dir) return LTX2_OK;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dump path too long: %s", dir);
    ltx2_tensor t = ltx2_tensor_make((void *)data, LTX2_F32, ndim, shape);
    return ltx2_npy_write(ctx, path, &t);
}
