/* Shared by dit_parallel.c (groups, the forward's hooks, inputs and outputs), dit_fsdp.c (the
 * per-block weight gathers) and dit_shard_load.c (a rank's weight shards, cut from a full copy or
 * read straight from the checkpoint, placed on the rank's backend). Private to src/model/dit_*.c. */
#ifndef LTX2_MODEL_DIT_PARALLEL_INTERNAL_H
#define LTX2_MODEL_DIT_PARALLEL_INTERNAL_H

#include "io/safetensors.h"
#include "model/dit_parallel.h"

enum { PA_ATTN1, PA_ATTN2, PA_AUDIO1, PA_AUDIO2, PA_A2V, PA_V2A, PA_COUNT };

/* A block layer tensor whose `embed` dim the profile splits over the weight-gather group (context x
 * fsdp, trillium): this rank stores only `piece`, its 1/G of its tensor shard along `dim`. Before the
 * block runs the group's pieces are all-gathered into a scratch holding the whole tensor shard
 * ([rows, cols], exactly what a profile without FSDP stores) and slot->data, the tensor of the
 * rank's block weights the forward reads, is hung on it; outside the block slot->data is NULL. */
typedef struct fsdp_piece {
    ltx2_tensor *slot;
    const void *piece;  /* [rows / G, cols] (dim 0) or [rows, cols / G] (dim 1), on dp->be in slot's dtype */
    int64_t rows, cols; /* the gathered tensor shard; cols 1 for 1-D tensors */
    int dim;
} fsdp_piece;

typedef struct fsdp_block {
    fsdp_piece *pieces;
    size_t n, cap;
    int64_t floats; /* sum of rows * cols: the block's gathered scratch, in elements */
} fsdp_block;

struct ltx2_dit_parallel {
    ltx2_comm *world, *batch, *seq, *tp; /* batch = data x fsdp, seq = context, tp = tensor */
    ltx2_comm *wg; /* weight-gather group: context x fsdp, the axes `embed` maps to */
    ltx2_dit_parallel_opts opts;
    /* cfg, the non-block weights and the blocks' scale-shift tables (the block layer tensors are
     * not read: `blocks` holds this rank's shards). Borrowed, or owned_full when dp loaded it. */
    const ltx2_dit_weights *full;
    ltx2_dit_weights *owned_full;
    /* The weights each block runs on: this rank's layer shards (heads [head0, head0 + heads)) and
     * the full weights' scale-shift tables. */
    ltx2_dit_block_w *blocks;
    int64_t n_layers;
    /* Where the shards live and their dtype: the full weights' (host f32 on the CPU, bf16 on a
     * device, so a rank's GPU holds only its shards) */
    const ltx2_backend *be;
    ltx2_dtype dtype;
    void **owned; /* every shard tensor (on be), freed with dp */
    size_t n_owned, cap_owned;
    int64_t n_fp8;             /* Linear weight shards kept as fp8 codes (LTX2_DIT_SHARDS_FP8) */
    int64_t shard_floats;      /* elements in `owned` (named floats: the CPU holds them in f32) */
    int64_t layer_full_floats; /* the same tensors' whole sizes */
    int64_t gathered_floats;   /* the tensor shards' sizes (= shard_floats without FSDP) */
    fsdp_block *fsdp;          /* per layer; n 0 everywhere when the profile splits no dim over wg */
    int *wg_piece;             /* [wg->size]: which piece of a split dim weight-gather rank g holds */
    int64_t fsdp_max_block;    /* largest fsdp_block.floats */
    ltx2_dit_parallel_stats stats;
};

/* Collective: a dp over world with its batch / context / tensor groups, the option checks done
 * against cfg, blocks allocated (empty). On failure nothing is left and the world is NOT aborted
 * (the caller does). */
ltx2_status dit_par_setup(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_config *cfg,
                          const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out);

/* Hangs every FSDP tensor of block i on a scratch (on dp->be) holding this rank's whole tensor
 * shard, gathered over dp->wg (one all-gather per block); *scratch gets the buffer (NULL when the
 * block has none). Release with dit_par_fsdp_release, on success and failure alike. */
ltx2_status dit_par_fsdp_gather(ltx2_context *ctx, ltx2_dit_parallel *dp, int64_t i, void **scratch);
void dit_par_fsdp_release(ltx2_dit_parallel *dp, int64_t i, void *scratch);

typedef enum { DIT_PAR_ALL_GATHER, DIT_PAR_ALL_REDUCE, DIT_PAR_ALL_TO_ALL, DIT_PAR_WEIGHT_GATHER } dit_par_coll;

/* One collective of dp over c (counted in dp->stats; a weight gather is an all-gather counted as
 * FSDP traffic), on buffers in the memory of `mem`. The loopback communicator reads host memory
 * only: device buffers then travel through host copies (downloaded, exchanged, uploaded); NCCL
 * takes them as they are. all_reduce may run in place (send == recv). */
ltx2_status dit_par_collective(ltx2_dit_parallel *dp, ltx2_context *ctx, dit_par_coll k, ltx2_comm *c,
                               const ltx2_backend *mem, const void *send, void *recv, size_t count, ltx2_dtype dt);

/* Fills dp->blocks with this rank's shard of every block layer tensor. w gives the shapes (and the
 * floats when f is NULL); with f, the shards are read from the tensors `prefix` + name of f, the
 * adapters of loras (NULL: none) fused into each, the Linears kept as `kind` says; with layout,
 * they are only allocated (the memory plan; f, when given, says which weights are fp8). */
struct ltx2_lora_set;
ltx2_status dit_par_shard_blocks(ltx2_context *ctx, ltx2_dit_parallel *dp, const ltx2_dit_weights *w,
                                 const ltx2_st_file *f, const char *prefix, bool layout, struct ltx2_lora_set *loras,
                                 ltx2_dit_shard_weights kind);

#endif
