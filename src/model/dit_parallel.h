/* The DiT forward over a mesh of ranks (one call per rank, every rank gets the whole result):
 *   data (x fsdp): the batch - CFG / STG branches and videos - split into contiguous chunks;
 *   context: the video tokens split into contiguous chunks, padded to a multiple of the group
 *            size (padded keys masked, RoPE from each token's own global position); video
 *            self-attention by Ulysses all-to-all (heads scattered, sequence gathered) or, when
 *            the heads do not divide, by all-gathering K/V; video->audio attention all-gathers the
 *            video K/V; audio, text and a2v stay local (audio replicated);
 *   tensor:  Megatron heads / mlp: column-parallel Q/K/V/gate/FFN-in, row-parallel out / FFN-out
 *            followed by an all-reduce, the across-heads QK RMSNorm's sum of squares all-reduced.
 * Each rank keeps only its piece of every block layer weight, placed by sharding.c's layouts on the
 * whole mesh: cut from a full fp32 copy (ltx2_dit_parallel_create), or read straight from the
 * checkpoint so no rank ever converts a whole layer tensor (create_from_file / create_sharded,
 * dit_shard_load.c). Profiles gpu / ironwood split heads / mlp over tensor only; trillium also
 * splits `embed` over context x fsdp (FSDP): those pieces are all-gathered over that group right
 * before their block runs, into this rank's tensor shards, and dropped when it ends (dit_fsdp.c),
 * so the forward is bitwise the same as under gpu on the same mesh. The non-block weights
 * (embeddings, AdaLN, output head, the blocks' scale-shift tables) are held whole by every rank in
 * every profile: 1.8 % of LTX-2 19B (0.70 GB bf16, DIT_PARALLEL.md), used outside the blocks.
 * See src/model/DIT_PARALLEL.md for the bytes each collective moves. */
#ifndef LTX2_MODEL_DIT_PARALLEL_H
#define LTX2_MODEL_DIT_PARALLEL_H

#include "dist/comm.h"
#include "dist/sharding.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"

/* How video self-attention crosses the context group. */
typedef enum ltx2_sp_attention {
    LTX2_SP_AUTO = 0,     /* Ulysses when the per-rank heads divide by the context size, else all-gather */
    LTX2_SP_ULYSSES,      /* 3 all-to-all in, 1 back (Lightricks' choice); error if heads do not divide */
    LTX2_SP_ALLGATHER_KV  /* all-gather K and V (MaxDiffusion's default `flash` layout) */
} ltx2_sp_attention;

/* Called on every rank before block `block`; a non-OK status fails that rank, which then aborts
 * the world so every other rank returns too (cancellation; fault injection in tests). */
typedef ltx2_status (*ltx2_dit_block_cb)(ltx2_context *ctx, int rank, int64_t block, void *user);

typedef struct ltx2_dit_parallel_opts {
    ltx2_shard_profile profile; /* weight layouts; LTX2_PROFILE_GPU by default */
    ltx2_sp_attention sp_attention;
    ltx2_dit_block_cb on_block; /* may be NULL */
    void *on_block_user;
} ltx2_dit_parallel_opts;

void ltx2_dit_parallel_opts_init(ltx2_dit_parallel_opts *o);

typedef struct ltx2_dit_parallel ltx2_dit_parallel;

/* How a rank keeps the block Linear weights it reads from the checkpoint (generate's
 * --weights-dtype), each shard by the rule the single-device loader applies to the whole tensor. */
typedef enum ltx2_dit_shard_weights {
    LTX2_DIT_SHARDS_PLAIN = 0, /* in the replicated weights' dtype (f32 on the CPU, bf16 on a device) */
    /* the file's scaled fp8 weights as their e4m3 codes with their scales, as ltx2_dit_weights_load_fp8
     * keeps them (a file without any is refused); LoRAs re-quantise a covered weight with the whole
     * tensor's new amax (one all-gather of the blocks' amax). Under FSDP the pieces of codes are
     * gathered as bytes beside the others. */
    LTX2_DIT_SHARDS_FP8,
    LTX2_DIT_SHARDS_FP8_CAST /* ltx-core's fp8_cast policy (fp8_cast.h): rounded to e4m3 values, in dtype */
} ltx2_dit_shard_weights;

/* Collective over `world` (every rank calls it): splits the batch/context/tensor (and weight-gather:
 * context x fsdp) groups and copies this rank's piece of every block weight out of `full`. The
 * non-block weights (embeddings, AdaLN, output head: held whole in every profile) are borrowed from
 * `full`, which must outlive the result. Heads, audio heads and the FFN width must divide by the
 * tensor size; under trillium every `embed` dim (the video and audio widths, the cross-attention
 * context widths) by context x fsdp, else LTX2_ERR_SHAPE naming the tensor. */
ltx2_status ltx2_dit_parallel_create(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *full,
                                     const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out);

/* Collective, like ltx2_dit_parallel_create, but no rank ever holds a whole block layer weight:
 * every rank loads the replicated weights (ltx2_dit_weights_load_replicated: every tensor of f
 * under `prefix` (NULL = LTX2_DIT_PREFIX) checked, with the full loader's errors naming the tensor
 * and the file) into its own copy, owned by the result, then reads its shard of each layer tensor
 * from f's mapping (ltx2_weight_slice_to_f32: only those bytes touched). f (a file or a diffusers
 * view) must stay open until the call returns; cfg as parsed from f. The forward is bitwise the
 * one built by ltx2_dit_parallel_create from ltx2_dit_weights_load of the same file. A broken
 * checkpoint fails every rank with its own message (the loading precedes any collective). */
ltx2_status ltx2_dit_parallel_create_from_file(ltx2_context *ctx, ltx2_comm *world, const ltx2_st_file *f,
                                               const char *prefix, const ltx2_dit_config *cfg,
                                               const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out);
/* The same with the replicated weights given: `replicated` (from ltx2_dit_weights_load_replicated
 * of f, or a full load) is borrowed and must outlive the result; the layer shards come from f,
 * which must stay open until the call returns. For callers that already loaded the replicated part
 * (the generation pipeline). */
ltx2_status ltx2_dit_parallel_create_sharded(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *replicated,
                                             const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out);

/* As ltx2_dit_parallel_create_sharded, with LoRA adapters fused into every shard as it is read
 * (ltx2_lora_fuse_block: bitwise the same block of the whole fused weight; NULL: none) and the
 * Linears kept as `kind` says. `replicated` must have been loaded with the same set
 * (ltx2_dit_weights_load_replicated_on); every pair of the set must have found its weight by the
 * end, or this fails naming them. fp8-cast takes no LoRA (as ltx2_dit_weights_load_fp8_cast). */
struct ltx2_lora_set;
ltx2_status ltx2_dit_parallel_create_sharded_lora(ltx2_context *ctx, ltx2_comm *world,
                                                  const ltx2_dit_weights *replicated, const ltx2_st_file *f,
                                                  const char *prefix, struct ltx2_lora_set *loras,
                                                  ltx2_dit_shard_weights kind, const ltx2_dit_parallel_opts *opts,
                                                  ltx2_dit_parallel **out);

/* Collective, for the memory plan: the shards of a run over `world` allocated on the backend of
 * `replicated` (ltx2_dit_weights_layout_replicated_on on the planning backend) with the shapes the
 * checkpoint gives, nothing read; the forward then allocates what the run's would. fp8_file (NULL:
 * none): the checkpoint whose scaled fp8 weights the shards keep fp8 (LTX2_DIT_SHARDS_FP8), a byte
 * each. */
ltx2_status ltx2_dit_parallel_create_layout(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *replicated,
                                            const ltx2_st_file *fp8_file, const ltx2_dit_parallel_opts *opts,
                                            ltx2_dit_parallel **out);

/* Collective: p holds the whole (global) inputs, identical on every rank; video_out
 * [B, Tv, out_channels] and audio_out [B, Ta, audio_out_channels] get the whole outputs on every
 * rank. On any failure this rank aborts the world (the reason reaches every rank). p->dump is not
 * supported (sharded intermediates have no reference names). */
ltx2_status ltx2_dit_parallel_forward(ltx2_context *ctx, ltx2_dit_parallel *dp, const ltx2_dit_forward_params *p,
                                      float *video_out, float *audio_out);

/* Per-rank counts of the last forward, for tests and the bench: collectives issued and f32
 * elements this rank sent through them (ring algorithm: an all-gather of n per rank over a group of
 * G sends n * (G - 1)). */
typedef struct ltx2_dit_parallel_stats {
    int64_t n_all_to_all, n_all_gather, n_all_reduce; /* activations */
    int64_t sent_elems;                               /* every collective, weight gathers included */
    int64_t n_weight_gather;   /* FSDP: one all-gather per block over context x fsdp (0 without FSDP) */
    int64_t weight_sent_elems; /* the part of sent_elems they moved: gathered_floats - shard_floats */
} ltx2_dit_parallel_stats;
void ltx2_dit_parallel_get_stats(const ltx2_dit_parallel *dp, ltx2_dit_parallel_stats *out);

/* The weight floats this rank holds. With tensor size T and no FSDP, shard_floats is
 * layer_full_floats / T plus (T - 1) / T of the row-parallel biases (to_out.0.bias, net.2.bias),
 * which every tensor rank keeps whole. Under trillium with G = context x fsdp > 1 the tensor shards
 * of every tensor with an `embed` dim (all weight matrices and the row-parallel biases) are split G
 * ways again; what stays 1/T is the heads / mlp biases and QK-norm scales. */
typedef struct ltx2_dit_parallel_weight_mem {
    int64_t shard_floats;      /* resident: this rank's block layer pieces, owned by dp */
    int64_t layer_full_floats; /* the same tensors' whole sizes (what one rank would hold) */
    int64_t replicated_floats; /* embeddings, AdaLN, output head, blocks' scale-shift tables, held whole */
    bool replicated_owned;     /* true: loaded by create_from_file and freed with dp; false: borrowed */
    int64_t gathered_floats;   /* the same tensors as tensor shards (= shard_floats without FSDP) */
    int64_t scratch_floats;    /* FSDP: the largest block's gathered weights, alive while it runs (else 0) */
    int fsdp_parts;            /* G, the ranks an `embed` dim is split over (1: no FSDP) */
    int64_t fp8_linears;       /* Linear weight shards kept as fp8 codes (LTX2_DIT_SHARDS_FP8) */
} ltx2_dit_parallel_weight_mem;
void ltx2_dit_parallel_get_weight_mem(const ltx2_dit_parallel *dp, ltx2_dit_parallel_weight_mem *out);

void ltx2_dit_parallel_free(ltx2_dit_parallel *dp);

#endif
