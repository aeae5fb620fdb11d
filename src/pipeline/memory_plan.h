/* The device memory a generation needs, per stage, computed before any work from the configs and
 * the request alone (no weights read), and checked against what the device has free.
 *
 * Residency is what `ltx2 generate` does on a device: the DiT, the text connectors and the video
 * and audio VAE decoders are loaded on the device up front and stay for the whole generation (one
 * copy each, in bf16); each stage adds what it allocates while it runs:
 * - text:    the connectors' forward (estimated, see memory_plan.c);
 * - denoise: one DiT call's peak with the text K/V cache in its steady state: MEASURED by running
 *            the real forward on the planning backend (backend_plan.h), twice (two sigmas);
 * - video decode: the decoder's peak on one tile (the whole latent untiled), from the decode's
 *            buffer lifetimes (video_vae_decode.c), which test_memory_plan checks against the
 *            planning backend on the tiny decoders byte for byte;
 * - audio decode: the same for the audio VAE decoder (audio_vae_decode.c), then the vocoder
 *            (vocoder_forward.c), which runs after the decoder has freed its buffers: the larger.
 * - upsample (distilled, two-stage): the latent upsampler's weights, placed for its one call, and
 *            its forward's peak on the stage-1 latent.
 * - encode (--image, --audio): the video VAE encoder's peak on one conditioning frame at the final
 *            size (video_vae_encode.c), and the audio VAE encoder's on the log-mel of the longest audio
 *            the run reads (audio_vae_encode.c; its front end runs on the host), from the encodes' buffer
 *            lifetimes, checked like the decoders'; the encoders' weights are resident from then on, as
 *            generate.c keeps them. 
 * The vocoder is resident like the VAEs when the request names its config. The Gemma text encoder, when asked onto
 * the device, runs before any of this is loaded and is freed after, so it is checked on its own
 * (ltx2_gemma_device_bytes, generate.c). Alternatives priced for the advice of a run that does
 * not fit: tiled VAE decoding, fewer frames, fp8 DiT weights (an estimate: half the bf16 bytes; it
 * takes a pre-quantised checkpoint, whose own fp8 share request.dit_fp8_file counts exactly) and DiT
 * weights sharded over tensor-parallel ranks (an estimate: the bf16 bytes over the rank count). A
 * multi-rank run (request.mesh) is planned per rank: its DiT as each rank holds and runs it. */
#ifndef LTX2_PIPELINE_MEMORY_PLAN_H
#define LTX2_PIPELINE_MEMORY_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/audio_config.h"
#include "model/connectors.h"
#include "model/dit_config.h"
#include "model/dit_parallel.h"
#include "model/vae_config.h"

typedef enum ltx2_mem_stage_id {
    LTX2_MEM_TEXT = 0,
    LTX2_MEM_DENOISE,
    LTX2_MEM_VIDEO_DECODE,
    LTX2_MEM_AUDIO_DECODE,
    LTX2_MEM_UPSAMPLE, /* the distilled / two-stage pipelines' latent upsampler, placed for its call */
    LTX2_MEM_ENCODE,   /* conditioning: an image through the video VAE encoder, the audio through the audio one */
    LTX2_MEM_STAGES
} ltx2_mem_stage_id;

/* The CUDA context, cuBLASLt's workspace and the allocator's slack on one device, on top of what
 * the code allocates: a CUDA 12/13 context on Hopper holds ~500 MiB, the GEMM workspace is 32 MiB
 * (backend_cuda.c) and the caching of freed blocks costs a few hundred MiB more; 1 GiB covers them. */
#define LTX2_MEM_RUNTIME_BYTES ((uint64_t)1 << 30)

typedef struct ltx2_mem_request {
    const ltx2_dit_config *dit;
    const ltx2_connectors_config *conn;
    const ltx2_vae_config *vae;
    const ltx2_audio_vae_config *audio;
    const ltx2_vocoder_config *vocoder; /* NULL: the vocoder is not on the device */
    int64_t frames, height, width; /* pixels */
    double fps;
    int64_t batch;        /* samples per DiT call (the guidance passes one call batches) */
    int64_t text_tokens;  /* prompt length after the connectors (1024 in ltx-pipelines) */
    int64_t text_dim;     /* the text projection's input width; 0: the real Gemma's (LTX2_GEMMA_TEXT_DIM) */
    int64_t text_cache_entries; /* the generation's text K/V cache capacity (samples) */
    /* prompts whose Gemma states stay on the device until the connectors take them (the encoder on
     * the generation's GPU): [L, S, D] in bf16 each, beside the loaded models */
    int64_t text_kept_prompts;
    int64_t vae_tile_px, vae_tile_frames; /* 0 = untiled */
    uint64_t free_bytes;  /* what the device has free */
    /* --weights-dtype fp8: the checkpoint whose scaled fp8 DiT weights stay fp8 (counted at a byte
     * each, as ltx2_dit_weights_load_fp8 keeps them); NULL: the DiT in bf16 */
    const ltx2_st_file *dit_fp8_file;
    bool attention_fp8; /* --attention-dtype fp8: the DiT call's attentions take the e4m3 pre-pass's workspace */
    /* the latent upsampler between the stages of a two-stage pipeline (NULL: one stage); its input
     * is the stage-1 latent of the half-size clip */
    const struct ltx2_upsampler_config *upsampler;
    bool image_cond; /* conditioning images (--image): the video VAE encoder on the device */
    /* audio conditioning (--audio): the audio VAE encoder's config and the most seconds of audio read
     * (0: none) */
    const struct ltx2_audio_encoder_config *audio_encoder;
    double audio_cond_seconds;
    /* A multi-rank run (NULL, or one rank: one device): the plan is one rank's. Its DiT weights and
     * call are measured as that rank runs them (ltx2_mem_plan_dit); the other stages are one
     * device's, an upper bound (a rank decodes part of the video, the rest is replicated). */
    const ltx2_mesh *mesh;
    const ltx2_dit_parallel_opts *dit_par; /* profile and attention split (NULL: the defaults) */
    int rank;                              /* the rank of mesh this plan is for */
    /* How many ranks compute on this rank's device (0 or 1: it alone); free_bytes is already this
     * rank's share of the device's free memory. For the refusal's wording. */
    int device_share;
} ltx2_mem_request;

typedef struct ltx2_mem_plan {
    /* resident weights */
    uint64_t dit_weights, text_weights, video_vae_weights, audio_vae_weights, vocoder_weights;
    uint64_t video_encoder_weights, audio_encoder_weights; /* with image / audio conditioning */
    uint64_t runtime;
    uint64_t stage[LTX2_MEM_STAGES]; /* each stage's own peak on top of the resident set */
    uint64_t resident;               /* weights + runtime */
    uint64_t need;                   /* resident + the largest stage */
    ltx2_mem_stage_id peak_stage;
    uint64_t free_bytes;
    bool fits;
    /* the geometry it was made for */
    int64_t video_tokens, audio_tokens;
    int64_t tile_latent[3]; /* latent frames, rows, columns one decode tile covers */
    int mesh[4];            /* the run's mesh (data, fsdp, context, tensor); all 1: one device */
} ltx2_mem_plan;

const char *ltx2_mem_stage_name(ltx2_mem_stage_id s);

/* Fills *out for the request (the DiT stage takes a few seconds at real sizes: it runs the
 * forward's host side). Errors: a config the models would refuse, a geometry the pipeline would. */
ltx2_status ltx2_mem_plan_make(ltx2_context *ctx, const ltx2_mem_request *req, ltx2_mem_plan *out);

/* The plan as three lines of text (GiB), each starting with `prefix` and ending in a newline;
 * LTX2_MEM_PLAN_TEXT_CAP holds them with a prefix of up to 64 characters. */
#define LTX2_MEM_PLAN_TEXT_CAP 1024
void ltx2_mem_plan_format(const ltx2_mem_plan *p, char *buf, size_t cap, const char *prefix);
void ltx2_mem_plan_print(const ltx2_mem_plan *p, FILE *f, const char *prefix);

/* LTX2_OK when the plan fits; else LTX2_ERR_OOM with a message giving what is needed, what is
 * free, the stage that does not fit, and the alternatives that would fit (re-planned here). */
ltx2_status ltx2_mem_plan_check(ltx2_context *ctx, const ltx2_mem_request *req, const ltx2_mem_plan *p);

/* The pieces, exposed for test_memory_plan (checked against the planning backend): a decoder's
 * device weight bytes and its decode's peak on a latent of lat = (frames, rows, columns), batch
 * 1; the audio decoder's, on a t x f latent. */
struct ltx2_video_decoder;
uint64_t ltx2_mem_plan_video_vae_weights(const struct ltx2_video_decoder *dec);
uint64_t ltx2_mem_plan_video_decode_peak(const struct ltx2_video_decoder *dec, const int64_t lat[3]);
/* The video encoder's device weight bytes, and its encode's peak on frames x height x width pixels. */
struct ltx2_video_encoder;
uint64_t ltx2_mem_plan_video_encoder_weights(const struct ltx2_video_encoder *enc);
uint64_t ltx2_mem_plan_video_encode_peak(const struct ltx2_video_encoder *enc, int64_t frames, int64_t height,
                                         int64_t width);
/* The audio encoder's device weight bytes, and its encode's peak on t mel frames. */
struct ltx2_audio_encoder_config;
uint64_t ltx2_mem_plan_audio_encoder_weights(const struct ltx2_audio_encoder_config *e);
uint64_t ltx2_mem_plan_audio_encode_peak(const struct ltx2_audio_encoder_config *e, int64_t t);
uint64_t ltx2_mem_plan_audio_vae_weights(const ltx2_audio_vae_config *a);
uint64_t ltx2_mem_plan_audio_decode_peak(const ltx2_audio_vae_config *a, int64_t t, int64_t f);
/* The latent upsampler's device weight bytes (bf16, placed for its call), and its forward's peak
 * on top of them on an input latent of lat = (frames, rows, columns), batch 1, from the forward's
 * buffer lifetimes (upsampler_forward.c). */
uint64_t ltx2_mem_plan_upsampler_weights(const struct ltx2_upsampler_config *c);
uint64_t ltx2_mem_plan_upsample_peak(const struct ltx2_upsampler_config *c, const int64_t lat[3]);
/* The vocoder's device weight bytes, and its run's peak on a mel of t frames, batch 1. */
uint64_t ltx2_mem_plan_vocoder_weights(const ltx2_vocoder_config *v);
uint64_t ltx2_mem_plan_vocoder_peak(const ltx2_vocoder_config *v, int64_t t);
/* Measured on the planning backend (memory_plan_dit.c): the DiT's device weight bytes, one call's
 * peak on top of them at video_tokens / audio_tokens (two calls, so the text K/V cache is in its
 * steady state) and the text connectors' weights. With req->mesh of several ranks, the parallel
 * DiT runs as rank req->rank runs it (its shards, its share of the call, the exchanges' device
 * scratch) on a planning backend, alone: a null communicator stands for the others. */
ltx2_status ltx2_mem_plan_dit(ltx2_context *ctx, const ltx2_mem_request *req, int64_t video_tokens,
                              int64_t audio_tokens, uint64_t *weights, uint64_t *stage, uint64_t *text_weights);
/* The text projection's input width the plan assumes (req->text_dim, else the real Gemma's). */
int64_t ltx2_mem_plan_text_dim(const ltx2_mem_request *req);

#endif
