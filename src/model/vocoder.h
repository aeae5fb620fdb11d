/* LTX-2 vocoders: log-mel [B, 2, T, 64] -> stereo waveform [B, 2, N], one forward on the backend
 * op table (vocoder_forward.c; the CPU backend is the fp32 reference).
 * LTX-2.0: HiFi-GAN (ResBlock1, LeakyReLU, tanh) at 24 kHz. LTX-2.3: BigVGAN-v2 (AMPBlock1 with
 * anti-aliased SnakeBeta, clamp) at 16 kHz, then bandwidth extension to 48 kHz: causal log-mel
 * STFT of the 16 kHz output (stored bases), a second BigVGAN generator predicting a residual, a
 * x3 Hann-sinc resampled skip, clamp. Reference: ltx-core 1.0.0 model/audio_vae/vocoder.py.
 * Activations run channels-last [B, L, C]; public tensors and dumps use the reference layout.
 * Dump names (prefix "vocoder" for 2.0, "vocoder.vocoder" / "vocoder.bwe_generator" for 2.3):
 * <p>.conv_pre.out, <p>.ups.<i>.out, <p>.resblocks.<j>.out, <p>.act_post.out, <p>.conv_post.out,
 * <p>.out; 2.3 also vocoder.mel_stft.magnitude [B*2, F, Tm], vocoder.bwe_generator.in
 * [B, 2, Tm, mels], vocoder.resampler.out, vocoder.out. */
#ifndef LTX2_MODEL_VOCODER_H
#define LTX2_MODEL_VOCODER_H

#include "backend/backend.h"
#include "io/safetensors.h"
#include "ltx2/tensor.h"
#include "model/audio_config.h"

/* ltx-core hard-codes the vocoder input as 2 stereo channels x 64 mel bins = 128 channels. */
#define LTX2_VOCODER_IN_CHANNELS 128
/* BigVGAN-v2 Activation1d: x2 up / down with 12-tap Kaiser-sinc filters (ltx-core defaults). */
#define LTX2_VOCODER_AA_RATIO 2
#define LTX2_VOCODER_AA_TAPS 12
/* The stored weights: conv_pre and conv_post have 7 taps (ltx-core Vocoder). */
#define LTX2_VOCODER_PRE_POST_TAPS 7

typedef struct ltx2_voc_conv {
    ltx2_conv1d_desc desc;
    float *weight, *bias; /* bias NULL when the conv has none */
} ltx2_voc_conv;

typedef struct ltx2_voc_convt {
    ltx2_convt1d_desc desc;
    float *weight, *bias;
} ltx2_voc_convt;

/* Activation1d(SnakeBeta): exp(alpha), 1/(exp(beta)+eps) precomputed, and the stored filters. */
typedef struct ltx2_voc_act {
    int64_t c;
    float *alpha_exp, *inv_beta;
    float *up_filter, *down_filter; /* [LTX2_VOCODER_AA_TAPS] */
} ltx2_voc_act;

typedef struct ltx2_voc_resblock {
    int64_t c;
    ltx2_voc_conv convs1[LTX2_VOCODER_DILATIONS], convs2[LTX2_VOCODER_DILATIONS];
    ltx2_voc_act acts1[LTX2_VOCODER_DILATIONS], acts2[LTX2_VOCODER_DILATIONS]; /* AMP only */
} ltx2_voc_resblock;

typedef struct ltx2_voc_gen {
    ltx2_vocoder_gen_config cfg;
    ltx2_voc_conv conv_pre, conv_post;
    ltx2_voc_convt ups[LTX2_VOCODER_MAX_UPS];
    ltx2_voc_resblock *resblocks; /* n_ups * n_kernels */
    ltx2_voc_act act_post;        /* AMP only */
} ltx2_voc_gen;

typedef struct ltx2_vocoder_device ltx2_vocoder_device;

typedef struct ltx2_vocoder {
    ltx2_vocoder_config cfg;
    ltx2_voc_gen main, bwe;
    float *mel_basis; /* [bwe_mels, n_fft/2 + 1] */
    /* The causal STFT of both stereo channels as one conv1d: 2 inputs, 2 x (n_fft/2 + 1 real, then
     * imaginary) outputs, k = n_fft, stride = hop, n_fft - hop zeros in front; forward_basis
     * [2 * (n_fft/2 + 1), 1, n_fft] on the block diagonal (channel s feeds outputs s * 2F + f). */
    ltx2_voc_conv stft;
    int64_t resample_ratio, resample_taps, resample_width;
    float *resample_filter; /* computed (not stored in the checkpoint) */
    ltx2_vocoder_device *placed; /* ltx2_vocoder_place: where runs go (NULL: the CPU) */
} ltx2_vocoder;

/* Loads `<prefix>*` ("vocoder." in single-file checkpoints): the generator at `<prefix>` (2.0) or
 * `<prefix>vocoder.*`, `<prefix>bwe_generator.*`, `<prefix>mel_stft.*` (2.3). Every expected tensor
 * must exist with its config-implied shape; every tensor under the prefix must be used, except
 * mel_stft.stft_fn.inverse_basis (the reference loads it but never uses it). */
ltx2_status ltx2_vocoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                              const ltx2_vocoder_config *cfg, ltx2_vocoder **out);
void ltx2_vocoder_free(ltx2_vocoder *voc);

int64_t ltx2_vocoder_sample_rate(const ltx2_vocoder *voc);
/* Taps of the bandwidth extension's Hann resampler filter (2 * ceil(6 / 0.99) * ratio + 1). */
int64_t ltx2_vocoder_resampler_taps(const ltx2_vocoder_config *cfg);

/* Waveform shape [B, 2, N] for a mel [B, 2, T, 64]. */
ltx2_status ltx2_vocoder_out_shape(ltx2_context *ctx, const ltx2_vocoder *voc, const int64_t mel_bctf[4],
                                   int64_t wav_bcl[3]);

/* mel: contiguous f32 CPU [B, 2, T, 64] (the audio decoder's output); wav: contiguous f32 CPU of
 * out_shape, planar stereo in [-1, 1]. dump may be NULL. Runs on the backend voc is placed on (the
 * CPU backend, over the host weights, when it is not). */
ltx2_status ltx2_vocoder_run(ltx2_context *ctx, const ltx2_vocoder *voc, const ltx2_tensor *mel, ltx2_tensor *wav,
                             ltx2_audio_dump_fn dump, void *user);

/* Runs every later ltx2_vocoder_run of voc on be: its weights are copied there once, in f32 (see
 * vocoder_forward.c). NULL or the CPU backend: back to the host weights. */
ltx2_status ltx2_vocoder_place(ltx2_context *ctx, ltx2_vocoder *voc, const ltx2_backend *be);

/* ---- the vocoder on a backend (vocoder_forward.c: its one forward, run by every backend) ---- */

/* voc's weights on be (views of the host arrays on the CPU backend). Keeps a pointer to voc, which
 * must outlive it. Refused, naming the op, when be lacks one of the vocoder's ops. */
ltx2_status ltx2_vocoder_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_vocoder *voc,
                                      ltx2_vocoder_device **out);
void ltx2_vocoder_device_free(ltx2_vocoder_device *dv);
/* The vocoder on dv's backend; arguments and dumps as ltx2_vocoder_run. */
ltx2_status ltx2_vocoder_device_run(ltx2_context *ctx, const ltx2_vocoder_device *dv, const ltx2_tensor *mel,
                                   ltx2_tensor *wav, ltx2_audio_dump_fn dump, void *user);

#endif
