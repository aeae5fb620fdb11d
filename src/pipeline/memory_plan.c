/* The generation's device memory plan (memory_plan.h). */
#include "pipeline/memory_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/audio_encoder.h"
#include "model/audio_vae.h"
#include "model/upsampler.h"
#include "model/video_vae.h"
#include "model/vocoder.h"
#include "pipeline/pipeline.h"
#include "pipeline/two_stage_clip.h"

/* Device storage dtype of every model (bf16) and of the AdaLN / modulation tables the decoders
 * upload in f32. */
#define PLAN_ES 2
#define PLAN_F32 4
/* Every device allocation is rounded to this (backend_plan.h, as the CUDA allocator at least). */
#define PLAN_ALLOC_ALIGN 256
/* The VAE convs' kernel: 3 x 3 x 3 everywhere (video_vae_internal.h VAE_KERNEL). */
#define PLAN_VAE_TAPS 27
/* The audio VAE: 3 x 3 causal convs, the (2, 1, 3) upsample phase conv to 4 phases, 1x1 shortcuts
 * (audio_vae.c); the encoder's stride-2 Downsample as a 3 x 5 conv (audio_vae_encode.c DOWN_KW). */
#define PLAN_AUDIO_TAPS 9
#define PLAN_AUDIO_PHASE_TAPS 6
#define PLAN_AUDIO_PHASES 4
#define PLAN_AUDIO_DOWN_TAPS 15
/* Device convs take channels in multiples of this (vae_run.h VAE_CONV_CHANNEL_ALIGN). */
#define PLAN_CHANNEL_ALIGN 8
/* The connectors' forward (not measured: its input, the Gemma states, is too large to fake on the
 * host): three chunks of the projection input [LTX2_CONNECTOR_FE_CHUNK, text_dim] in bf16 (the
 * uploaded states, their modulation, the interleaved features),
 * plus at most this many [S, inner]
 * buffers live at once (block input, norm output, q, k, v, attention output, gate logits, the
 * 4-wide FFN hidden, the block output and the registers: 12, rounded up). */
#define PLAN_CONNECTOR_LIVE_BUFFERS 16
/* the feature extractor's chunk-sized device buffers (connectors.c project) */
#define PLAN_CONNECTOR_FE_CHUNKS 3
/* Tile sizes (pixels) and frame counts tried for advice. */
static const int64_t ADVICE_TILES_PX[] = {512, 384, 256};
static const int ADVICE_RANKS[] = {2, 4, 8};

static const char *const STAGE_NAMES[LTX2_MEM_STAGES] = {"text", "denoise", "video decode", "audio decode",
                                                          "upsample", "conditioning encode"};

const char *ltx2_mem_stage_name(ltx2_mem_stage_id s) {
    return s >= 0 && s < LTX2_MEM_STAGES ? STAGE_NAMES[s] : "?";
}

static uint64_t a256(uint64_t b) { return (b + PLAN_ALLOC_ALIGN - 1) / PLAN_ALLOC_ALIGN * PLAN_ALLOC_ALIGN; }
static int64_t align_ch(int64_t c) { return (c + PLAN_CHANNEL_ALIGN - 1) / PLAN_CHANNEL_ALIGN * PLAN_CHANNEL_ALIGN; }
static uint64_t act(int64_t elems, int es) { return a256((uint64_t)elems * (uint64_t)es); }
static uint64_t max_u(uint64_t a, uint64_t b) { return a > b ? a : b; }


/* ---- text: the connectors' forward (estimate, see PLAN_CONNECTOR_LIVE_BUFFERS) ---- */

static uint64_t plan_text_stage(const ltx2_mem_request *req) {
    const int64_t S = req->text_tokens, chunk = S < LTX2_CONNECTOR_FE_CHUNK ? S : LTX2_CONNECTOR_FE_CHUNK;
    const int64_t inner = req->conn->video.inner_dim > req->conn->audio.inner_dim ? req->conn->video.inner_dim
                                                                                  : req->conn->audio.inner_dim;
    /* the states go up a chunk of tokens at a time (connectors.c) */
    return PLAN_CONNECTOR_FE_CHUNKS * act(chunk * ltx2_mem_plan_text_dim(req), PLAN_ES) +
           PLAN_CONNECTOR_LIVE_BUFFERS * act(S * inner, PLAN_ES) +
           (uint64_t)req->text_kept_prompts * act(S * ltx2_mem_plan_text_dim(req), PLAN_ES);
}

/* ---- video decode: video_vae_decode.c's buffers ---- */

static uint64_t conv_bytes(int64_t taps, int64_t c_in, int64_t c_out) {
    return act(taps * c_in * c_out, PLAN_ES) + act(c_out, PLAN_ES);
}

/* ---- the latent upsampler ---- */

/* The taps and output channels of its upsampling conv (3-D temporal; 2-D spatial, per frame). */
static int64_t ups_up_taps(const ltx2_upsampler_config *c) { return c->temporal_upsample ? PLAN_VAE_TAPS : 9; }
static int64_t ups_up_cout(const ltx2_upsampler_config *c) {
    int64_t num, den;
    ltx2_upsampler_ratio(c, &num, &den); /* a bad scale: refused at the config read */
    return c->temporal_upsample ? 2 * c->mid_channels : num * num * c->mid_channels;
}

uint64_t ltx2_mem_plan_upsampler_weights(const ltx2_upsampler_config *c) {
    const int64_t C = c->in_channels, M = c->mid_channels;
    const uint64_t res = 2 * conv_bytes(PLAN_VAE_TAPS, M, M) + 4 * act(M, PLAN_ES);
    return conv_bytes(PLAN_VAE_TAPS, C, M) + 2 * act(M, PLAN_ES) + 2 * (uint64_t)c->num_blocks_per_stage * res +
           conv_bytes(ups_up_taps(c), M, ups_up_cout(c)) + conv_bytes(PLAN_VAE_TAPS, M, C);
}

uint64_t ltx2_mem_plan_upsample_peak(const ltx2_upsampler_config *c, const int64_t lat[3]) {
    const int64_t C = c->in_channels, M = c->mid_channels, F = lat[0], H = lat[1], W = lat[2];
    int64_t num, den;
    ltx2_upsampler_ratio(c, &num, &den); /* a bad scale: refused at the config read */
    const bool t = c->temporal_upsample;
    /* the input and the first conv's output; a res block holds its input and two convs' outputs,
     * and the first one also the input latent, retired but freed only at the block's end */
    const uint64_t a = act(F * H * W * C, PLAN_ES), am = act(F * H * W * M, PLAN_ES);
    const int64_t nb = c->num_blocks_per_stage;
    uint64_t peak = a + am;
    if (nb > 0) peak = max_u(peak, a + 3 * am);
    /* the upsampling conv's output and the shuffled tensor beside h (and the blurred one), nothing
     * freed before the end: the input latent too when no res block flushed it */
    const int64_t F2 = t ? 2 * F - 1 : F, H2 = t ? H : H * num, W2 = t ? W : W * num;
    uint64_t up = am + act(F * H * W * ups_up_cout(c), PLAN_ES) + act(F2 * H2 * W2 * M, PLAN_ES);
    const int64_t H3 = den > 1 ? (H2 - 1) / den + 1 : H2, W3 = den > 1 ? (W2 - 1) / den + 1 : W2;
    if (den > 1) up += act(F2 * H3 * W3 * M, PLAN_ES);
    peak = max_u(peak, up + (nb > 0 ? 0 : a));
    /* the post res blocks and the final conv at the output grid */
    const uint64_t om = act(F2 * H3 * W3 * M, PLAN_ES);
    if (nb > 0) peak = max_u(peak, 3 * om);
    return max_u(peak, om + act(F2 * H3 * W3 * C, PLAN_ES));
}

uint64_t ltx2_mem_plan_video_vae_weights(const ltx2_video_decoder *dec) {
    const ltx2_vae_config *c = &dec->cfg;
    uint64_t w = conv_bytes(PLAN_VAE_TAPS, c->latent_channels, c->decoder_base_channels * 8);
    int64_t c_last = c->decoder_base_channels * 8;
    for (int i = 0; i < dec->n_blocks; i++) {
        const ltx2_vae_dec_block *b = &dec->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            w += 2 * (uint64_t)b->n_layers * conv_bytes(PLAN_VAE_TAPS, b->c_in, b->c_in);
        } else {
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            w += conv_bytes(PLAN_VAE_TAPS, b->c_in, prod * b->c_out);
        }
        c_last = b->c_out;
    }
    return w + conv_bytes(PLAN_VAE_TAPS, c_last, c->out_channels * c->patch_size * c->patch_size);
}

/* The decode's peak on a latent of lat[0] frames x lat[1] rows x lat[2] columns (batch 1): the
 * buffers live at each point of video_vae_decode.c, retired ones counted until the flush that
 * frees them. */
uint64_t ltx2_mem_plan_video_decode_peak(const ltx2_video_decoder *dec, const int64_t lat[3]) {
    const ltx2_vae_config *c = &dec->cfg;
    int64_t T = lat[0], H = lat[1], W = lat[2], C = c->decoder_base_channels * 8;
    const bool tc = dec->timestep_conditioning;
    uint64_t x = act(T * H * W * C, PLAN_ES);
    uint64_t peak = act(T * H * W * c->latent_channels, PLAN_ES) + x; /* conv_in */
    for (int i = 0; i < dec->n_blocks; i++) {
        const ltx2_vae_dec_block *b = &dec->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            /* x, the norm output, conv1's and conv2's outputs, the noise terms, the AdaLN table */
            uint64_t layer = 4 * x;
            if (b->inject_noise) layer += 2 * act(H * W * b->c_in, PLAN_ES);
            if (tc) layer += act(4 * b->c_in, PLAN_F32);
            peak = max_u(peak, layer);
        } else {
            const int64_t drop = b->stride[0] == 2 ? 1 : 0;
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            const uint64_t y = act(T * H * W * prod * b->c_out, PLAN_ES);
            T = T * b->stride[0] - drop, H *= b->stride[1], W *= b->stride[2], C = b->c_out;
            const uint64_t out = act(T * H * W * C, PLAN_ES);
            peak = max_u(peak, x + y + out);
            x = out;
        }
    }
    const uint64_t tbl = tc ? act(2 * C, PLAN_F32) : 0;
    const uint64_t y = act(T * H * W * c->out_channels * c->patch_size * c->patch_size, PLAN_ES);
    return max_u(peak, x + y + tbl);
}

/* ---- image encode: video_vae_encode.c's buffers ---- */

uint64_t ltx2_mem_plan_video_encoder_weights(const ltx2_video_encoder *enc) {
    uint64_t w = conv_bytes(PLAN_VAE_TAPS, enc->conv_in.desc.c_in, enc->conv_in.desc.c_out);
    for (int i = 0; i < enc->n_blocks; i++) {
        const ltx2_vae_enc_block *b = &enc->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            w += 2 * (uint64_t)b->n_layers * conv_bytes(PLAN_VAE_TAPS, b->c_in, b->c_in);
        } else {
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            w += conv_bytes(PLAN_VAE_TAPS, b->c_in, b->c_out / prod);
        }
    }
    /* conv_out's outputs widened to the channel alignment (only the mean is read) */
    return w + conv_bytes(PLAN_VAE_TAPS, enc->conv_out.desc.c_in, align_ch(enc->conv_out.desc.c_out));
}

/* The buffers live at each point of the encode, retired ones counted until the flush that frees them:
 * the patchified input beside conv_in's output; a res layer's input, norm output and two conv
 * outputs; a downsample's input, its frame-0-duplicated copy (time stride 2), the conv output and the
 * rearranged output; conv_out's output beside its input. */
uint64_t ltx2_mem_plan_video_encode_peak(const ltx2_video_encoder *enc, int64_t frames, int64_t height, int64_t width) {
    const int64_t P = enc->cfg.patch_size;
    int64_t T = frames, H = height / P, W = width / P, C = enc->conv_in.desc.c_out;
    uint64_t x = act(T * H * W * C, PLAN_ES);
    uint64_t peak = act(T * H * W * enc->conv_in.desc.c_in, PLAN_ES) + x;
    for (int i = 0; i < enc->n_blocks; i++) {
        const ltx2_vae_enc_block *b = &enc->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            if (b->n_layers > 0) peak = max_u(peak, 4 * x);
            continue;
        }
        const bool dup = b->stride[0] == 2;
        const int64_t td = T + (dup ? 1 : 0), prod = b->stride[0] * b->stride[1] * b->stride[2];
        const uint64_t xd = dup ? act(td * H * W * C, PLAN_ES) : 0, y = act(td * H * W * (b->c_out / prod), PLAN_ES);
        T = td / b->stride[0], H /= b->stride[1], W /= b->stride[2], C = b->c_out;
        const uint64_t out = act(T * H * W * C, PLAN_ES);
        peak = max_u(peak, x + xd + y + out);
        x = out;
    }
    return max_u(peak, x + act(T * H * W * align_ch(enc->conv_out.desc.c_out), PLAN_ES));
}

/* An audio VAE res block (audio_vae_run.c audio_res_block) on a t x f grid: x, the norm output
 * (c_in), conv1's and conv2's outputs and the shortcut (c_out). */
static uint64_t audio_res_peak(int64_t t, int64_t f, int64_t ci, int64_t co) {
    return act(t * f * ci, PLAN_ES) * 2 + act(t * f * co, PLAN_ES) * (ci != co ? 3 : 2);
}

/* ---- audio encode: audio_vae_encode.c's buffers (the levels as audio_encoder.c builds them) ---- */

static uint64_t aenc_res_bytes(int64_t ci, int64_t co) {
    return conv_bytes(PLAN_AUDIO_TAPS, ci, co) + conv_bytes(PLAN_AUDIO_TAPS, co, co) + (ci != co ? conv_bytes(1, ci, co) : 0);
}

static int64_t aenc_z_out(const ltx2_audio_encoder_config *e) {
    return e->double_z ? 2 * e->vae.z_channels : e->vae.z_channels;
}

uint64_t ltx2_mem_plan_audio_encoder_weights(const ltx2_audio_encoder_config *e) {
    const ltx2_audio_vae_config *a = &e->vae;
    /* conv_in reads the mel widened to the channel alignment; conv_out's outputs are widened */
    uint64_t w = conv_bytes(PLAN_AUDIO_TAPS, align_ch(e->in_channels), a->ch);
    int64_t c = a->ch;
    for (int l = 0; l < a->n_levels; l++) {
        const int64_t co = a->ch * a->ch_mult[l];
        for (int64_t b = 0; b < a->num_res_blocks; b++, c = co) w += aenc_res_bytes(c, co);
        if (l != a->n_levels - 1) w += conv_bytes(PLAN_AUDIO_DOWN_TAPS, c, c);
    }
    return w + 2 * aenc_res_bytes(c, c) + conv_bytes(PLAN_AUDIO_TAPS, c, align_ch(aenc_z_out(e)));
}

uint64_t ltx2_mem_plan_audio_encode_peak(const ltx2_audio_encoder_config *e, int64_t t) {
    const ltx2_audio_vae_config *a = &e->vae;
    int64_t f = e->mel.n_mels, c = a->ch;
    uint64_t x = act(t * f * c, PLAN_ES);
    uint64_t peak = act(t * f * align_ch(e->in_channels), PLAN_ES) + x; /* conv_in */
    for (int l = 0; l < a->n_levels; l++) {
        const int64_t co = a->ch * a->ch_mult[l];
        for (int64_t b = 0; b < a->num_res_blocks; b++, c = co) peak = max_u(peak, audio_res_peak(t, f, c, co));
        if (l == a->n_levels - 1) continue;
        x = act(t * f * c, PLAN_ES);
        t = (t - 1) / 2 + 1, f /= 2; /* time padded 2 in front, the (even) mel width halved */
        peak = max_u(peak, x + act(t * f * c, PLAN_ES));
    }
    peak = max_u(peak, audio_res_peak(t, f, c, c));
    return max_u(peak, act(t * f * c, PLAN_ES) + act(t * f * align_ch(aenc_z_out(e)), PLAN_ES));
}

/* ---- audio decode: audio_vae_decode.c's buffers ---- */

uint64_t ltx2_mem_plan_audio_vae_weights(const ltx2_audio_vae_config *a) {
    int64_t c = a->ch * a->ch_mult[a->n_levels - 1];
    uint64_t w = conv_bytes(PLAN_AUDIO_TAPS, align_ch(a->z_channels), c);
    for (int k = 0; k < 2; k++) w += 2 * conv_bytes(PLAN_AUDIO_TAPS, c, c); /* mid.block_1, _2 */
    for (int l = a->n_levels - 1; l >= 0; l--) {
        const int64_t co = a->ch * a->ch_mult[l];
        for (int64_t b = 0; b <= a->num_res_blocks; b++) {
            w += conv_bytes(PLAN_AUDIO_TAPS, c, co) + conv_bytes(PLAN_AUDIO_TAPS, co, co);
            if (c != co) w += conv_bytes(1, c, co);
            c = co;
        }
        if (l != 0) w += conv_bytes(PLAN_AUDIO_PHASE_TAPS, c, PLAN_AUDIO_PHASES * c);
    }
    return w + conv_bytes(PLAN_AUDIO_TAPS, c, align_ch(a->out_ch));
}

uint64_t ltx2_mem_plan_audio_decode_peak(const ltx2_audio_vae_config *a, int64_t t, int64_t f) {
    int64_t c = a->ch * a->ch_mult[a->n_levels - 1];
    uint64_t x = act(t * f * c, PLAN_ES);
    uint64_t peak = act(t * f * align_ch(a->z_channels), PLAN_ES) + x; /* conv_in */
    peak = max_u(peak, audio_res_peak(t, f, c, c));
    for (int l = a->n_levels - 1; l >= 0; l--) {
        const int64_t co = a->ch * a->ch_mult[l];
        for (int64_t b = 0; b <= a->num_res_blocks; b++) {
            peak = max_u(peak, audio_res_peak(t, f, c, co));
            c = co;
        }
        x = act(t * f * c, PLAN_ES);
        if (l != 0) {
            const uint64_t y = act(t * f * PLAN_AUDIO_PHASES * c, PLAN_ES);
            t = 2 * t - 1, f *= 2;
            const uint64_t out = act(t * f * c, PLAN_ES);
            peak = max_u(peak, x + y + out);
            x = out;
        }
    }
    return max_u(peak, x + act(t * f * align_ch(a->out_ch), PLAN_ES));
}

/* ---- the vocoder: vocoder_forward.c's buffers (batch 1; everything in f32 there) ---- */

static uint64_t voc_conv(int64_t k, int64_t ci, int64_t co, bool bias) {
    return act(k * ci * co, PLAN_F32) + (bias ? act(co, PLAN_F32) : 0);
}

/* SnakeBeta's alpha and 1 / beta and the two anti-alias filters, all f32. */
static uint64_t voc_snake(int64_t c) { return 2 * act(c, PLAN_F32) + 2 * act(LTX2_VOCODER_AA_TAPS, PLAN_F32); }

static uint64_t voc_gen_weights(const ltx2_vocoder_gen_config *g) {
    const int64_t c0 = g->initial_channel, cf = c0 >> g->n_ups;
    uint64_t w = voc_conv(LTX2_VOCODER_PRE_POST_TAPS, LTX2_VOCODER_IN_CHANNELS, c0, true);
    for (int i = 0; i < g->n_ups; i++) {
        const int64_t ci = c0 >> i, co = c0 >> (i + 1);
        w += voc_conv(g->up_kernels[i], ci, co, true);
        for (int j = 0; j < g->n_kernels; j++)
            w += LTX2_VOCODER_DILATIONS * (2 * voc_conv(g->rb_kernels[j], co, co, true) + (g->amp ? 2 * voc_snake(co) : 0));
    }
    /* use_bias_at_final absent (-1) means a bias (the loader refuses a file without one) */
    return w + (g->amp ? voc_snake(cf) : 0) + voc_conv(LTX2_VOCODER_PRE_POST_TAPS, cf, 2, g->bias_at_final != 0);
}

uint64_t ltx2_mem_plan_vocoder_weights(const ltx2_vocoder_config *v) {
    uint64_t w = voc_gen_weights(&v->main);
    if (!v->bwe) return w;
    const int64_t nf = v->bwe_n_fft / 2 + 1;
    return w + voc_gen_weights(&v->bwe_gen) + voc_conv(v->bwe_n_fft, 2, 4 * nf, false) +
           act(v->bwe_mels * nf, PLAN_F32) + act(ltx2_vocoder_resampler_taps(v), PLAN_F32);
}

/* One generator on t input frames: the peak of its own buffers (input included), and its output
 * length in *out_len. A resblock dilation holds the stage input, the running mean (from the second
 * resblock on), the block's sum (from the second dilation on, or the new sum the first one
 * writes), the two activations and two conv outputs in flight, and with SnakeBeta the two x2
 * upsampled activations: 7 (6 with one kernel) stage-sized buffers plus the two double ones. */
static uint64_t voc_gen_peak(const ltx2_vocoder_gen_config *g, int64_t t, int64_t *out_len) {
    int64_t L = t, c = g->initial_channel;
    uint64_t x = act(L * c, PLAN_F32);
    uint64_t peak = act(L * LTX2_VOCODER_IN_CHANNELS, PLAN_F32) + x;
    for (int i = 0; i < g->n_ups; i++) {
        const int64_t co = g->initial_channel >> (i + 1);
        L *= g->up_rates[i];
        const uint64_t y = act(L * co, PLAN_F32);
        peak = max_u(peak, x + y);
        x = y, c = co;
        const uint64_t u = g->amp ? act(2 * L * c, PLAN_F32) : 0;
        peak = max_u(peak, x * (g->n_kernels > 1 ? 7 : 6) + 2 * u);
    }
    if (g->amp) peak = max_u(peak, 2 * x + act(2 * L * c, PLAN_F32));
    *out_len = L;
    return max_u(peak, x + act(L * 2, PLAN_F32));
}

uint64_t ltx2_mem_plan_vocoder_peak(const ltx2_vocoder_config *v, int64_t t) {
    int64_t len = 0;
    uint64_t peak = voc_gen_peak(&v->main, t, &len);
    if (!v->bwe) return peak;
    /* the bandwidth extension: the main output zero-padded to the hop (a copy when it is not a
     * multiple), its STFT, magnitude and log-mel, the second generator beside the padded input,
     * then the resampled skip beside the generator's output */
    const int64_t hop = v->bwe_hop, lpad = (len + hop - 1) / hop * hop, tm = lpad / hop, nf = v->bwe_n_fft / 2 + 1;
    const int64_t r = v->bwe_out_rate / v->bwe_in_rate;
    const uint64_t xp = act(lpad * 2, PLAN_F32);
    if (lpad != len) peak = max_u(peak, act(len * 2, PLAN_F32) + xp);
    peak = max_u(peak, xp + act(tm * 4 * nf, PLAN_F32) + act(tm * 2 * nf, PLAN_F32) + act(tm * 2 * v->bwe_mels, PLAN_F32));
    int64_t blen = 0;
    peak = max_u(peak, xp + voc_gen_peak(&v->bwe_gen, tm, &blen));
    return max_u(peak, xp + 2 * act(lpad * r * 2, PLAN_F32));
}

/* ---- the plan ---- */

static ltx2_status plan_core(ltx2_context *ctx, const ltx2_mem_request *req, bool with_dit, ltx2_mem_plan *p) {
    ltx2_video_decoder *dec = NULL;
    LTX2_TRY(ltx2_video_decoder_shape_only(ctx, req->vae, &dec));
    ltx2_pipe_geometry g;
    const int64_t audio_feat = req->dit->audio_in_channels ? req->dit->audio_in_channels : 128;
    ltx2_status st = ltx2_pipe_geometry_make(ctx, req->frames, req->height, req->width, req->fps, dec->time_factor,
                                             dec->space_factor, req->vae->latent_channels, req->audio->z_channels,
                                             audio_feat, &g);
    if (st == LTX2_OK && with_dit)
        st = ltx2_mem_plan_dit(ctx, req, g.video_tokens, g.at, &p->dit_weights, &p->stage[LTX2_MEM_DENOISE],
                               &p->text_weights);
    if (st == LTX2_OK) {
        p->video_tokens = g.video_tokens;
        p->audio_tokens = g.at;
        p->stage[LTX2_MEM_TEXT] = plan_text_stage(req);
        const int64_t full[3] = {g.lf, g.lh, g.lw};
        int64_t tile[3] = {g.lf, g.lh, g.lw};
        if (req->vae_tile_frames > 0) {
            const int64_t tf = (req->vae_tile_frames - 1) / dec->time_factor + 1;
            tile[0] = tf < full[0] ? tf : full[0];
        }
        if (req->vae_tile_px > 0) {
            const int64_t tp = req->vae_tile_px / dec->space_factor;
            tile[1] = tp < full[1] ? tp : full[1];
            tile[2] = tp < full[2] ? tp : full[2];
        }
        memcpy(p->tile_latent, tile, sizeof tile);
        p->video_vae_weights = ltx2_mem_plan_video_vae_weights(dec);
        p->stage[LTX2_MEM_VIDEO_DECODE] = ltx2_mem_plan_video_decode_peak(dec, tile);
        p->audio_vae_weights = ltx2_mem_plan_audio_vae_weights(req->audio);
        p->stage[LTX2_MEM_AUDIO_DECODE] = ltx2_mem_plan_audio_decode_peak(req->audio, g.at, g.afreq);
        if (req->upsampler) {
            /* stage 1's latent grid (two_stage_clip.h) is the upsampler's input */
            ltx2_pipe_geometry g1;
            ltx2_two_stage_clip c1;
            st = ltx2_two_stage_clip_make(ctx, req->upsampler, req->frames, req->height, req->width, req->fps, NULL, 0,
                                          &c1);
            if (st == LTX2_OK)
                st = ltx2_pipe_geometry_make(ctx, c1.frames, c1.height, c1.width, c1.fps, dec->time_factor,
                                             dec->space_factor, req->vae->latent_channels, req->audio->z_channels,
                                             audio_feat, &g1);
            const int64_t lat1[3] = {g1.lf, g1.lh, g1.lw};
            if (st == LTX2_OK)
                p->stage[LTX2_MEM_UPSAMPLE] = ltx2_mem_plan_upsampler_weights(req->upsampler) +
                                              ltx2_mem_plan_upsample_peak(req->upsampler, lat1);
        }
        if (st == LTX2_OK && req->image_cond) { /* each image one frame, at the last stage's (the full) size */
            ltx2_video_encoder *enc = NULL;
            st = ltx2_video_encoder_shape_only(ctx, req->vae, &enc);
            if (st == LTX2_OK) {
                p->video_encoder_weights = ltx2_mem_plan_video_encoder_weights(enc);
                p->stage[LTX2_MEM_ENCODE] = ltx2_mem_plan_video_encode_peak(enc, 1, req->height, req->width);
            }
            ltx2_video_encoder_free(enc);
        }
        if (st == LTX2_OK && req->audio_encoder && req->audio_cond_seconds > 0) {
            const ltx2_audio_mel_config *mel = &req->audio_encoder->mel;
            int64_t t = 0;
            st = ltx2_audio_mel_frames(ctx, mel, (int64_t)ceil(req->audio_cond_seconds * (double)mel->sample_rate), &t);
            if (st == LTX2_OK) {
                p->audio_encoder_weights = ltx2_mem_plan_audio_encoder_weights(req->audio_encoder);
                p->stage[LTX2_MEM_ENCODE] =
                    max_u(p->stage[LTX2_MEM_ENCODE], ltx2_mem_plan_audio_encode_peak(req->audio_encoder, t));
            }
        }
        if (req->vocoder) {
            const int64_t mel_t = ltx2_audio_decoder_mel_frames(g.at);
            p->vocoder_weights = ltx2_mem_plan_vocoder_weights(req->vocoder);
            p->stage[LTX2_MEM_AUDIO_DECODE] =
                max_u(p->stage[LTX2_MEM_AUDIO_DECODE], ltx2_mem_plan_vocoder_peak(req->vocoder, mel_t));
        }
    }
    ltx2_video_decoder_free(dec);
    return st;
}

static void plan_total(ltx2_mem_plan *p, uint64_t free_bytes) {
    p->runtime = LTX2_MEM_RUNTIME_BYTES;
    p->resident = p->dit_weights + p->text_weights + p->video_vae_weights + p->audio_vae_weights + p->vocoder_weights +
                  p->video_encoder_weights + p->audio_encoder_weights + p->runtime;
    p->peak_stage = LTX2_MEM_TEXT;
    for (int s = 1; s < LTX2_MEM_STAGES; s++)
        if (p->stage[s] > p->stage[p->peak_stage]) p->peak_stage = (ltx2_mem_stage_id)s;
    p->need = p->resident + p->stage[p->peak_stage];
    p->free_bytes = free_bytes;
    p->fits = p->need <= free_bytes;
}

ltx2_status ltx2_mem_plan_make(ltx2_context *ctx, const ltx2_mem_request *req, ltx2_mem_plan *out) {
    if (!req || !out || !req->dit || !req->conn || !req->vae || !req->audio)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "memory plan: NULL argument");
    if (req->batch < 1 || req->text_tokens < 1 || req->text_cache_entries < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "memory plan: batch, text tokens and cache entries must be >= 1");
    memset(out, 0, sizeof *out);
    for (int a = 0; a < 4; a++) out->mesh[a] = req->mesh ? req->mesh->size[a] : 1;
    LTX2_TRY(plan_core(ctx, req, true, out));
    plan_total(out, req->free_bytes);
    return LTX2_OK;
}

static double gib(uint64_t b) { return (double)b / (double)((uint64_t)1 << 30); }

/* The plan is one device's, not one rank's of several. */
static bool one_rank(const ltx2_mem_plan *p) { return p->mesh[0] * p->mesh[1] * p->mesh[2] * p->mesh[3] == 1; }

void ltx2_mem_plan_format(const ltx2_mem_plan *p, char *buf, size_t cap, const char *prefix) {
    char per[64] = "";
    if (!one_rank(p))
        snprintf(per, sizeof per, ", per rank of mesh %d,%d,%d,%d", p->mesh[0], p->mesh[1], p->mesh[2], p->mesh[3]);
    snprintf(buf, cap,
             "%smemory plan (GiB%s): resident %.1f = DiT %.1f + text connectors %.1f + video VAE %.2f + audio VAE "
             "%.2f + vocoder %.2f + encoders %.2f + CUDA runtime %.1f\n"
             "%s  per stage: text +%.2f, denoise +%.2f (%lld video + %lld audio tokens), video decode +%.2f (tile "
             "%lldx%lldx%lld latents), audio decode + vocoder +%.2f, upsample +%.2f, conditioning encode +%.2f\n"
             "%s  need %.1f (peak: %s), free %.1f: %s\n",
             prefix, per, gib(p->resident), gib(p->dit_weights), gib(p->text_weights), gib(p->video_vae_weights),
             gib(p->audio_vae_weights), gib(p->vocoder_weights), gib(p->video_encoder_weights + p->audio_encoder_weights), gib(p->runtime), prefix,
             gib(p->stage[LTX2_MEM_TEXT]),
             gib(p->stage[LTX2_MEM_DENOISE]), (long long)p->video_tokens, (long long)p->audio_tokens,
             gib(p->stage[LTX2_MEM_VIDEO_DECODE]), (long long)p->tile_latent[0], (long long)p->tile_latent[1],
             (long long)p->tile_latent[2], gib(p->stage[LTX2_MEM_AUDIO_DECODE]), gib(p->stage[LTX2_MEM_UPSAMPLE]),
             gib(p->stage[LTX2_MEM_ENCODE]), prefix, gib(p->need),
             ltx2_mem_stage_name(p->peak_stage), gib(p->free_bytes), p->fits ? "fits" : "does not fit");
}

void ltx2_mem_plan_print(const ltx2_mem_plan *p, FILE *f, const char *prefix) {
    char buf[LTX2_MEM_PLAN_TEXT_CAP];
    ltx2_mem_plan_format(p, buf, sizeof buf, prefix);
    fputs(buf, f);
}

/* Appends to buf (cap bytes, NUL-terminated). */
static void cat(char *buf, size_t cap, const char *fmt, ...) LTX2_PRINTF(3, 4);
static void cat(char *buf, size_t cap, const char *fmt, ...) {
    const size_t n = strlen(buf);
    if (n + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

ltx2_status ltx2_mem_plan_check(ltx2_context *ctx, const ltx2_mem_request *req, const ltx2_mem_plan *p) {
    if (p->fits) return LTX2_OK;
    char adv[1024] = "";
    /* tiled decoding: only the decode stage changes */
    if (p->peak_stage == LTX2_MEM_VIDEO_DECODE)
        for (size_t k = 0; k < sizeof ADVICE_TILES_PX / sizeof ADVICE_TILES_PX[0]; k++) {
            ltx2_mem_request r = *req;
            r.vae_tile_px = ADVICE_TILES_PX[k];
            if (r.vae_tile_px >= req->height && r.vae_tile_px >= req->width) continue;
            ltx2_mem_plan q = *p;
            if (plan_core(ctx, &r, false, &q) != LTX2_OK) break;
            plan_total(&q, req->free_bytes);
            if (q.fits) {
                cat(adv, sizeof adv, "%s--vae-tile %lld (needs %.1f GiB)", adv[0] ? "; " : "", (long long)r.vae_tile_px, gib(q.need));
                break;
            }
        }
    /* fewer frames: the longest tf*k+1 that fits, by bisection on k (the need grows with the
     * frames); none can when the weights alone do not */
    ltx2_video_decoder *dec = NULL;
    if (p->resident < req->free_bytes && ltx2_video_decoder_shape_only(ctx, req->vae, &dec) == LTX2_OK) {
        const int64_t tf = dec->time_factor;
        int64_t lo = -1, hi = (req->frames - 1) / tf; /* k <= lo fits (-1: none known), k >= hi does not */
        uint64_t lo_need = 0;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            ltx2_mem_request r = *req;
            r.frames = tf * mid + 1;
            ltx2_mem_plan q;
            memset(&q, 0, sizeof q);
            if (plan_core(ctx, &r, true, &q) != LTX2_OK) break;
            plan_total(&q, req->free_bytes);
            if (q.fits) {
                lo = mid;
                lo_need = q.need;
            } else {
                hi = mid;
            }
        }
        if (lo >= 0)
            cat(adv, sizeof adv, "%s--frames %lld (needs %.1f GiB)", adv[0] ? "; " : "", (long long)(tf * lo + 1),
                gib(lo_need));
        ltx2_video_decoder_free(dec);
    }
    ltx2_clear_error(ctx);
    /* DiT weights in fp8 (a rank's shards too), or sharded over ranks: the DiT's linears hold all
     * but ~0.1% of its bytes (a rank's replicated part, ~2% of the whole, stays bf16: "about") */
    if (!req->dit_fp8_file) {
        ltx2_mem_plan q = *p;
        q.dit_weights = p->dit_weights / 2;
        plan_total(&q, req->free_bytes);
        cat(adv, sizeof adv, "%s--weights-dtype fp8 with a pre-quantised fp8 checkpoint would need about %.1f GiB%s",
            adv[0] ? "; " : "", gib(q.need), q.fits ? "" : ", still too much");
    }
    /* tensor parallelism splits the DiT's layers over the ranks (the replicated 2 % aside) */
    for (size_t k = 0; one_rank(p) && k < sizeof ADVICE_RANKS / sizeof ADVICE_RANKS[0]; k++) {
        ltx2_mem_plan q = *p;
        q.dit_weights = p->dit_weights / (uint64_t)ADVICE_RANKS[k];
        plan_total(&q, req->free_bytes);
        if (q.fits) {
            cat(adv, sizeof adv, "%s--nproc %d --mesh 1,1,1,%d (each GPU holds about 1/%d of the DiT) would need about "
                "%.1f GiB each", adv[0] ? "; " : "", ADVICE_RANKS[k], ADVICE_RANKS[k], ADVICE_RANKS[k], gib(q.need));
            break;
        }
    }
    char per[64] = "", free_txt[128];
    if (!one_rank(p))
        snprintf(per, sizeof per, " per rank of mesh %d,%d,%d,%d", p->mesh[0], p->mesh[1], p->mesh[2], p->mesh[3]);
    if (req->device_share > 1)
        snprintf(free_txt, sizeof free_txt, "%.1f GiB free for this rank (%d ranks share the device)",
                 gib(p->free_bytes), req->device_share);
    else
        snprintf(free_txt, sizeof free_txt, "%.1f GiB free", gib(p->free_bytes));
    return LTX2_ERROR(ctx, LTX2_ERR_OOM,
                      "not enough device memory: the generation needs %.1f GiB%s (resident %.1f, %s +%.1f), the device "
                      "has %s. Options: %s",
                      gib(p->need), per, gib(p->resident), ltx2_mem_stage_name(p->peak_stage),
                      gib(p->stage[p->peak_stage]), free_txt, adv[0] ? adv : "none found");
}
