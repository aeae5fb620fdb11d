/* The sharding registry: which logical axis each dim of each LTX-2 weight is split over, per
 * hardware profile, and how logical axes bind to mesh axes. A mirror of MaxDiffusion's
 * src/maxdiffusion/models/ltx2/logical_sharding_ltx2.py (HEAD 7cfb8801d41d) and of the
 * `logical_axis_rules` in src/maxdiffusion/configs/ltx2_video.yml, plus our `gpu` profile.
 *
 * Layout trap: MaxDiffusion's specs are written for Flax kernels, [in, out]; LTX-2 checkpoints
 * store PyTorch Linear weights, [out, in]. For every *_KERNEL kind the spec is reversed when applied
 * to a checkpoint tensor; tables, biases and norm scales are not transposed. */
#ifndef LTX2_DIST_SHARDING_H
#define LTX2_DIST_SHARDING_H

#include <stdbool.h>
#include <stdint.h>

#include "dist/comm.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

typedef enum ltx2_logical_axis {
    LTX2_LOGICAL_NONE = 0, /* replicated */
    LTX2_LOGICAL_EMBED,
    LTX2_LOGICAL_HEADS,
    LTX2_LOGICAL_MLP,
    LTX2_LOGICAL_NORM,
    LTX2_LOGICAL_COUNT
} ltx2_logical_axis;

/* Components, as MaxDiffusion's STRATEGIES keys them. */
typedef enum ltx2_shard_component {
    LTX2_SHARD_DIT = 0,        /* "ltx2_dit" */
    LTX2_SHARD_TEXT_CONNECTOR, /* "text_connector" */
    LTX2_SHARD_VAE,            /* "vae" (video VAE, audio VAE, vocoder) */
    LTX2_SHARD_COMPONENT_COUNT
} ltx2_shard_component;

/* The fields of LTX2DiTShardingSpecs / TextConnectorShardingSpecs / VAEShardingSpecs, plus
 * UNANNOTATED for parameters MaxDiffusion creates without a partitioning (conv kernels,
 * learnable registers, latent statistics): always replicated. */
typedef enum ltx2_weight_kind {
    LTX2_W_QKV_KERNEL = 0,
    LTX2_W_QKV_BIAS,
    LTX2_W_OUT_KERNEL,
    LTX2_W_OUT_BIAS,
    LTX2_W_GATE_LOGITS_KERNEL,
    LTX2_W_GATE_LOGITS_BIAS,
    LTX2_W_NET_0_KERNEL,
    LTX2_W_NET_0_BIAS,
    LTX2_W_NET_2_KERNEL,
    LTX2_W_NET_2_BIAS,
    LTX2_W_EMBED_KERNEL,
    LTX2_W_EMBED_BIAS,
    LTX2_W_ADALN_KERNEL,
    LTX2_W_ADALN_BIAS,
    LTX2_W_SCALE_SHIFT_TABLE,
    LTX2_W_OUT_EMBED_KERNEL,
    LTX2_W_OUT_EMBED_BIAS,
    LTX2_W_EMB_LINEAR_1_KERNEL,
    LTX2_W_EMB_LINEAR_1_BIAS,
    LTX2_W_EMB_LINEAR_2_KERNEL,
    LTX2_W_EMB_LINEAR_2_BIAS,
    LTX2_W_NORM_SCALE,
    LTX2_W_PROJ_KERNEL,
    LTX2_W_PROJ_BIAS,
    LTX2_W_PER_CHANNEL_SCALE,
    LTX2_W_UNANNOTATED,
    LTX2_W_KIND_COUNT
} ltx2_weight_kind;

typedef enum ltx2_shard_profile {
    LTX2_PROFILE_IRONWOOD = 0, /* TPU v7x: heads-wise (1-D) */
    LTX2_PROFILE_TRILLIUM,     /* TPU v6e: heads + embed (2-D, FSDP on embed) */
    LTX2_PROFILE_GPU,          /* ours: weights replicated unless tensor > 1; sequence over context */
    LTX2_PROFILE_COUNT
} ltx2_shard_profile;

/* What "default" resolves against (MaxDiffusion asks get_tpu_type()). */
typedef enum ltx2_shard_hardware {
    LTX2_HW_TPU_V7X = 0, /* -> ironwood */
    LTX2_HW_TPU_OTHER,   /* any other or unknown TPU -> trillium, as MaxDiffusion */
    LTX2_HW_GPU,         /* -> gpu */
    LTX2_HW_CPU          /* -> gpu (loopback ranks) */
} ltx2_shard_hardware;

/* A spec has at most 2 dims (kernels); biases, scales have 1. */
#define LTX2_SHARD_SPEC_MAX 2

const char *ltx2_logical_axis_name(ltx2_logical_axis a); /* "embed", ..., "None" */
const char *ltx2_shard_component_name(ltx2_shard_component c);
const char *ltx2_weight_kind_name(ltx2_weight_kind k);   /* MaxDiffusion's field name */
const char *ltx2_shard_profile_name(ltx2_shard_profile p);

/* "ironwood", "trillium", "gpu", or "default" (resolved by hw). Anything else is an error: unlike
 * MaxDiffusion (which logs and falls back to trillium) we never guess. */
ltx2_status ltx2_shard_profile_parse(ltx2_context *ctx, const char *name, ltx2_shard_hardware hw,
                                     ltx2_shard_profile *out);

/* The logical spec in MaxDiffusion's (Flax) dim order. ndim 0 means "any rank, replicated"
 * (UNANNOTATED). Fails only for a kind the component does not have (e.g. PROJ_KERNEL in the DiT),
 * as MaxDiffusion would raise AttributeError. */
ltx2_status ltx2_shard_spec(ltx2_context *ctx, ltx2_shard_profile p, ltx2_shard_component c, ltx2_weight_kind k,
                            ltx2_logical_axis spec[LTX2_SHARD_SPEC_MAX], int *ndim);

/* Logical -> mesh axes, in the order they split the dim (major first), as a count + list.
 * configs/ltx2_video.yml:84-87: mlp -> tensor, embed -> (context, fsdp), heads -> tensor,
 * norm -> tensor. The same for every profile (the profiles differ in their specs only). */
int ltx2_shard_logical_to_mesh(ltx2_logical_axis a, ltx2_mesh_axis out[LTX2_AXIS_COUNT]);

/* A checkpoint tensor name -> component and kind. Knows the Lightricks single-file names
 * (model.diffusion_model.*, text_embedding_projection.*, vae.*, audio_vae.*, vocoder.*) and the
 * diffusers names for the same modules. LTX2_ERR_NOT_FOUND for a name no rule covers. */
ltx2_status ltx2_shard_classify(ltx2_context *ctx, const char *name, ltx2_shard_component *comp,
                                ltx2_weight_kind *kind);

/* Where one checkpoint tensor lives on a mesh. Dims are in the tensor's own (PyTorch) order. */
typedef struct ltx2_shard_layout {
    ltx2_shard_component component;
    ltx2_weight_kind kind;
    int ndim;
    int64_t shape[LTX2_MAX_DIMS];
    ltx2_logical_axis logical[LTX2_MAX_DIMS];
    int n_mesh[LTX2_MAX_DIMS];                         /* mesh axes splitting each dim */
    ltx2_mesh_axis mesh[LTX2_MAX_DIMS][LTX2_AXIS_COUNT];
    int64_t parts[LTX2_MAX_DIMS];                      /* product of those axes' sizes */
    int64_t local_shape[LTX2_MAX_DIMS];                /* shape[d] / parts[d] */
    int64_t local_numel;
    int replicas;                                      /* ranks holding each shard */
} ltx2_shard_layout;

/* Classifies `name`, applies the profile's spec and the mesh rules. Errors: unknown name
 * (NOT_FOUND), a shape whose rank does not match the spec (SHAPE), a dim not divisible by the
 * mesh axes splitting it (SHAPE, naming tensor, dim, size and axes). Following Flax
 * (flax/linen/spmd.py _logical_to_mesh_axes), a mesh axis already used by an earlier dim of the
 * same tensor is not reused: that dim stays replicated. */
ltx2_status ltx2_shard_layout_of(ltx2_context *ctx, ltx2_shard_profile p, const ltx2_mesh *mesh, const char *name,
                                 int ndim, const int64_t *shape, ltx2_shard_layout *out);

/* The first element index, per dim, of `rank`'s block (the block is local_shape in size). */
void ltx2_shard_local_offset(const ltx2_shard_layout *l, const ltx2_mesh *mesh, int rank,
                             int64_t offset[LTX2_MAX_DIMS]);

#endif
