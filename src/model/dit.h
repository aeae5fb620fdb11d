/* The LTX-2 / LTX-2.3 audio-video transformer (DiT) forward on the weights' backend (the CPU
 * reference in fp32, CUDA or the kernel emulator in bf16), matching ltx-core 1.0.0's
 * LTXModel.forward: inputs are patchified tokens, per-token timesteps, positions and text contexts
 * for both modalities (host f32); outputs are the velocities (host f32). An optional dump callback
 * sees every intermediate under the reference module path (tests/golden/gen_dit_goldens.py names
 * them). */
#ifndef LTX2_MODEL_DIT_H
#define LTX2_MODEL_DIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/tensor.h"
#include "model/dit_weights.h"

/* Called with each intermediate (a contiguous f32 CPU view valid only during the call). */
typedef void (*ltx2_dit_dump_fn)(const char *name, const ltx2_tensor *t, void *user);

/* Which timesteps drive the audio<->video cross-attention AdaLN (spec section 6 item 1). */
typedef enum ltx2_dit_av_timestep {
    /* ltx-core 1.0.0 (and diffusers use_cross_timestep=True): scale/shift and gate both from the
     * other modality's sigma. The default: our goldens come from ltx-core 1.0.0. */
    LTX2_DIT_AV_TS_CROSS_SIGMA = 0,
    /* ltx-core HEAD since 203d484: scale/shift from the modality's own per-token timesteps, gate
     * from the other modality's sigma. */
    LTX2_DIT_AV_TS_OWN_SCALE_CROSS_GATE = 1,
    /* diffusers use_cross_timestep=False (its transformer's default; MaxDiffusion's LTX-2.0 yml;
     * ltx-core 9ce438b): scale/shift AND gate from the modality's own per-token timesteps (gate
     * x av_ca_timestep_scale_multiplier / timestep_scale_multiplier). */
    LTX2_DIT_AV_TS_OWN = 2
} ltx2_dit_av_timestep;

typedef struct ltx2_dit_modality {
    const float *latent;          /* [B, T, in_channels] tokens */
    const float *positions;       /* [B, n_axes, T, 2] [start, end) per axis (video: s, px, px; audio: s) */
    const float *timesteps;       /* [B, T] sigma * denoise mask (NOT yet x1000) */
    const float *sigma;           /* [B] */
    const float *context;         /* [B, S, width] text context (caption_channels wide for LTX-2.0) */
    const uint8_t *context_mask;  /* [B, S] 1 = attend, 0 = padding; NULL = all */
    int64_t T, S;
} ltx2_dit_modality;

/* Per-sample, per-block attention perturbations (STG and modality isolation), as ltx-core's
 * BatchedPerturbationConfig: a skipped self-attention outputs its value projection instead of
 * attention (gate, to_out and the AdaLN gate still apply); a skipped A/V cross-attention adds
 * nothing to its stream. */
typedef enum ltx2_dit_perturb_flag {
    LTX2_DIT_SKIP_VIDEO_SELF_ATTN = 1u << 0, /* "skip_video_self_attn" (video STG) */
    LTX2_DIT_SKIP_AUDIO_SELF_ATTN = 1u << 1, /* "skip_audio_self_attn" (audio STG) */
    LTX2_DIT_SKIP_A2V_CROSS_ATTN = 1u << 2,  /* "skip_a2v_cross_attn" (modality isolation) */
    LTX2_DIT_SKIP_V2A_CROSS_ATTN = 1u << 3   /* "skip_v2a_cross_attn" (modality isolation) */
} ltx2_dit_perturb_flag;

/* Per-generation cache of the text cross-attention K (after k_norm) and V projections of every
 * block, both streams (src/model/dit_text_cache.c), held on the weights' backend. The pipeline
 * creates one per generation and passes it in every forward; an entry is keyed by the exact bytes of
 * the host inputs the projections are a function of, for one sample: its raw context rows [S, W]
 * (before the caption projection) and, for LTX-2.3, its prompt timestep (sigma x multiplier), since
 * LTX-2.3 modulates the context with the prompt AdaLN of sigma before the projections; there the K/V
 * are reusable only between passes of one step (same sigma): a new sigma is a new key, never an
 * approximation. A hit is bitwise equal to recomputing on the CPU (the GEMM's rows are independent
 * of the batch they are in); on a device the per-sample projection may pick another GEMM algorithm
 * than the batched one (bf16 rounding level). */
typedef struct ltx2_dit_text_cache ltx2_dit_text_cache;

typedef struct ltx2_dit_text_cache_stats {
    int64_t projections; /* (entry, block, stream) K/V projections computed */
    int64_t hits;        /* (entry, block, stream) K/V reused */
    int64_t entries;     /* live entries */
    int64_t contexts_skipped; /* (forward, stream) contexts not made: every block's K/V was cached */
} ltx2_dit_text_cache_stats;

/* max_entries: distinct (context, sigma) samples kept (least recently used evicted); each costs
 * num_layers * S * 2 * inner elements of its stream in the weights' dtype. Samples of a forward
 * that find no free slot are computed uncached. */
ltx2_status ltx2_dit_text_cache_create(ltx2_context *ctx, int64_t max_entries, ltx2_dit_text_cache **out);
void ltx2_dit_text_cache_free(ltx2_dit_text_cache *c);
/* Drops every entry (e.g. new prompts or new weights); counters are kept. */
void ltx2_dit_text_cache_invalidate(ltx2_dit_text_cache *c);
void ltx2_dit_text_cache_get_stats(const ltx2_dit_text_cache *c, ltx2_dit_text_cache_stats *out);

/* Per-generation cache of the DiT's RoPE tables (src/model/dit_rope_cache.c), held on the weights'
 * backend. Each stream's tables (its own positions; the audio-video cross axis) depend on one
 * sample's positions and the config alone, and a denoising loop passes the same positions at every
 * model call, while computing them on the host and uploading them is serial work before any device
 * work of the call: for a 768x512x121 clip 300 MB of fp32 per sample, and one sample's video tables
 * (its own and the cross axis) took 109 ms on one core of the development machine (60-78 ms on its
 * two) before the copies and the upload. One entry per stream, one sample's tables, keyed by
 * the exact bytes of the positions and the table parameters (a hit is bitwise what computing them
 * gives); a forward whose samples share positions copies it to each sample on the backend. Calls
 * with other positions, with a dump, or whose samples' positions differ compute the tables as before. */
typedef struct ltx2_dit_rope_cache ltx2_dit_rope_cache;

typedef struct ltx2_dit_rope_cache_stats {
    int64_t builds; /* (stream) tables computed and stored */
    int64_t hits;   /* (stream) tables reused */
} ltx2_dit_rope_cache_stats;

ltx2_status ltx2_dit_rope_cache_create(ltx2_context *ctx, ltx2_dit_rope_cache **out);
void ltx2_dit_rope_cache_free(ltx2_dit_rope_cache *c);
void ltx2_dit_rope_cache_get_stats(const ltx2_dit_rope_cache *c, ltx2_dit_rope_cache_stats *out);

/* Per-generation pool of the DiT's activation buffers (src/model/dit_act_pool.c), on the weights'
 * backend. Without it every call takes its buffers from the device allocator and gives them back
 * (cudaMalloc per buffer size, then cudaFree, which waits for the device), while a denoising loop's
 * calls of one shape need the same buffers. A call of another shape (batch, tokens, text length,
 * backend) empties it first, and after each call it keeps only the buffers that call used: between
 * calls it holds at most one call's buffers. One rank: parallel forwards allocate their own. */
typedef struct ltx2_dit_act_pool ltx2_dit_act_pool;

typedef struct ltx2_dit_act_pool_stats {
    int64_t calls;  /* forwards served */
    int64_t clears; /* emptied for a call of another shape */
    int64_t allocs; /* device allocations made, all calls together */
    int64_t bytes;  /* held now */
    int64_t peak;   /* the most held at once, inside calls included */
} ltx2_dit_act_pool_stats;

ltx2_status ltx2_dit_act_pool_create(ltx2_context *ctx, ltx2_dit_act_pool **out);
void ltx2_dit_act_pool_free(ltx2_dit_act_pool *p);
void ltx2_dit_act_pool_get_stats(const ltx2_dit_act_pool *p, ltx2_dit_act_pool_stats *out);

typedef struct ltx2_dit_forward_params {
    int64_t batch;
    ltx2_dit_modality video, audio;
    ltx2_dit_av_timestep av_timestep;
    /* [batch * num_layers] OR of ltx2_dit_perturb_flag for (sample b, block i) at b * num_layers + i;
     * NULL = no perturbation. Fill with ltx2_dit_perturb_set. */
    const uint32_t *perturb;
    ltx2_dit_dump_fn dump;  /* may be NULL */
    void *dump_user;
    ltx2_dit_text_cache *text_cache; /* NULL = project the text K/V every forward */
    ltx2_dit_rope_cache *rope_cache; /* NULL = compute and upload the RoPE tables every forward */
    ltx2_dit_act_pool *act_pool;     /* NULL = allocate and free the activations every forward */
    /* MaxDiffusion's STG scope (spec section 6 #9; attention_ltx2.py LTX2Attention.__call__
     * `value + perturbation_mask * (attn_output - value)`): when any sample of the batch skips a
     * stream's self-attention in any block, EVERY block's self-attention of that stream outputs
     * v + m * (attn - v) (m 0 skipped, 1 kept), one extra rounding where ltx-core / diffusers pass
     * attn through exactly. false = ltx-core / diffusers. */
    bool stg_blend_every_block;
    /* MaxDiffusion's RoPE as XLA computes it (tests/golden/MAXDIFFUSION_NUMERICS.md (a), (b)): its
     * jnp.float64 ladder is fp32 without jax_enable_x64 and jnp.linspace's one-sided k * fl(1/(n-1)),
     * and the division by the max positions a multiplication by their fp32 reciprocal. true
     * overrides the config's rope_double_precision. */
    bool rope_xla;
    /* MaxDiffusion's timestep sinusoid as XLA:CPU computes it (get_sinusoidal_embeddings): the
     * frequencies through its f32 exp (core/xla_math.h), cos and sin through libm's cosf / sinf,
     * instead of correctly rounded values. Up to 3e-5 apart at t = 700, invisible in fp32 (1e-6),
     * but enough to flip bf16 roundings under --precision tpu. */
    bool timestep_xla;
    /* --precision tpu (issue #15 item 3): MaxDiffusion's bf16 dtypes as its source writes them
     * (dit_tpu.c): every value its code types bf16 is rounded to bf16 where its code makes it;
     * the rest stays f32. The CPU backend, one rank, non-fp8 weights only. */
    bool precision_tpu;
    /* fp8 weights: quantise each Linear's input on its own (a pass over the activation per Linear)
     * instead of the modulation writing every fp8 input it feeds. The same bits either way; false,
     * the default, is faster. bench_step's A/B and the tests' reference. */
    bool fp8_separate_quant;
    /* e4m3 attention (ltx2_attn_args.fp8) in the attentions it applies to: the video self- and
     * text cross-attention (head dim LTX2_ATTN_FP8_HEAD_DIM); the audio and A/V ones stay as they
     * are. Off by default: a speed option that moves the output (about 5% rel-L2 per attention
     * call on random inputs). Not with --precision tpu. Across ranks each rank's codes are the
     * one-rank forward's (the quantisation leaves padded keys out). */
    bool attention_fp8;
} ltx2_dit_forward_params;

void ltx2_dit_forward_params_init(ltx2_dit_forward_params *p);

/* Whether an attention of head_dim runs in e4m3 when attention_fp8 asks for it: those the op takes
 * (LTX2_ATTN_FP8_HEAD_DIM: the video self- and text attention), in every path of the forward. */
static inline bool ltx2_dit_attention_fp8(bool asked, int64_t head_dim) {
    return asked && head_dim == LTX2_ATTN_FP8_HEAD_DIM;
}

/* ORs flags into perturb[b * num_layers + i] for each i in blocks[0..n_blocks) (blocks NULL = every
 * block, like ltx-core's Perturbation(blocks=None)). Out-of-range blocks are an error. */
ltx2_status ltx2_dit_perturb_set(ltx2_context *ctx, uint32_t *perturb, int64_t num_layers, int64_t b, uint32_t flags,
                                 const int64_t *blocks, int64_t n_blocks);

/* video_out [B, Tv, out_channels], audio_out [B, Ta, audio_out_channels]. */
ltx2_status ltx2_dit_forward(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                             float *video_out, float *audio_out);

#endif
