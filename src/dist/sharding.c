/* The sharding registry (see sharding.h). Every rule cites MaxDiffusion at HEAD 7cfb8801d41d:
 *   LS  = src/maxdiffusion/models/ltx2/logical_sharding_ltx2.py
 *   YML = src/maxdiffusion/configs/ltx2_video.yml (ltx2_3_video.yml has identical rules)
 *   TR  = src/maxdiffusion/models/ltx2/transformer_ltx2.py
 *   AT  = src/maxdiffusion/models/ltx2/attention_ltx2.py
 *   EF  = src/maxdiffusion/models/embeddings_flax.py, AF = src/maxdiffusion/models/attention_flax.py */
#include "dist/sharding.h"

#include <stdio.h>
#include <string.h>

#include "core/context.h"

static const char *const logical_names[LTX2_LOGICAL_COUNT] = {"None", "embed", "heads", "mlp", "norm"};
static const char *const component_names[LTX2_SHARD_COMPONENT_COUNT] = {"ltx2_dit", "text_connector", "vae"};
static const char *const profile_names[LTX2_PROFILE_COUNT] = {"ironwood", "trillium", "gpu"};
static const char *const kind_names[LTX2_W_KIND_COUNT] = {
    "qkv_kernel",          "qkv_bias",          "out_kernel",          "out_bias",
    "gate_logits_kernel",  "gate_logits_bias",  "net_0_kernel",        "net_0_bias",
    "net_2_kernel",        "net_2_bias",        "embed_kernel",        "embed_bias",
    "adaln_kernel",        "adaln_bias",        "scale_shift_table",   "out_embed_kernel",
    "out_embed_bias",      "emb_linear_1_kernel", "emb_linear_1_bias", "emb_linear_2_kernel",
    "emb_linear_2_bias",   "norm_scale",        "proj_kernel",         "proj_bias",
    "per_channel_scale",   "unannotated"};

const char *ltx2_logical_axis_name(ltx2_logical_axis a) {
    return (a >= 0 && a < LTX2_LOGICAL_COUNT) ? logical_names[a] : "?";
}
const char *ltx2_shard_component_name(ltx2_shard_component c) {
    return (c >= 0 && c < LTX2_SHARD_COMPONENT_COUNT) ? component_names[c] : "?";
}
const char *ltx2_weight_kind_name(ltx2_weight_kind k) {
    return (k >= 0 && k < LTX2_W_KIND_COUNT) ? kind_names[k] : "?";
}
const char *ltx2_shard_profile_name(ltx2_shard_profile p) {
    return (p >= 0 && p < LTX2_PROFILE_COUNT) ? profile_names[p] : "?";
}

/* ---- the specs ---- */

typedef struct spec_entry {
    unsigned char present; /* the component has this field */
    unsigned char ndim;    /* 0: unannotated, replicated at any rank */
    unsigned char axis[LTX2_SHARD_SPEC_MAX];
} spec_entry;

#define N LTX2_LOGICAL_NONE
#define E LTX2_LOGICAL_EMBED
#define H LTX2_LOGICAL_HEADS
#define M LTX2_LOGICAL_MLP
#define R LTX2_LOGICAL_NORM
#define S1(a) {1, 1, {a, N}}
#define S2(a, b) {1, 2, {a, b}}
#define UNANNOTATED_ENTRY [LTX2_W_UNANNOTATED] = {1, 0, {N, N}}

/* Trillium = the dataclass defaults: LS:24-58 (LTX2DiTShardingSpecs), selected at LS:143-147. */
static const spec_entry trillium_dit[LTX2_W_KIND_COUNT] = {
    [LTX2_W_QKV_KERNEL] = S2(E, H),          /* LS:29 */
    [LTX2_W_OUT_KERNEL] = S2(H, E),          /* LS:30 */
    [LTX2_W_OUT_BIAS] = S1(E),               /* LS:31 */
    [LTX2_W_QKV_BIAS] = S1(H),               /* LS:32 */
    [LTX2_W_GATE_LOGITS_KERNEL] = S2(E, H),  /* LS:33 */
    [LTX2_W_GATE_LOGITS_BIAS] = S1(H),       /* LS:34 */
    [LTX2_W_NET_0_KERNEL] = S2(E, M),        /* LS:37 */
    [LTX2_W_NET_0_BIAS] = S1(M),             /* LS:38 */
    [LTX2_W_NET_2_KERNEL] = S2(M, E),        /* LS:39 */
    [LTX2_W_NET_2_BIAS] = S1(E),             /* LS:40 */
    [LTX2_W_EMBED_KERNEL] = S2(N, E),        /* LS:43 */
    [LTX2_W_EMBED_BIAS] = S1(E),             /* LS:44 */
    [LTX2_W_ADALN_KERNEL] = S2(N, E),        /* LS:45 */
    [LTX2_W_ADALN_BIAS] = S1(E),             /* LS:46 */
    [LTX2_W_SCALE_SHIFT_TABLE] = S2(N, E),   /* LS:47 */
    [LTX2_W_OUT_EMBED_KERNEL] = S2(E, N),    /* LS:48 */
    [LTX2_W_OUT_EMBED_BIAS] = S1(N),         /* LS:49 */
    [LTX2_W_EMB_LINEAR_1_KERNEL] = S2(E, M), /* LS:52 */
    [LTX2_W_EMB_LINEAR_1_BIAS] = S1(M),      /* LS:53 */
    [LTX2_W_EMB_LINEAR_2_KERNEL] = S2(M, E), /* LS:54 */
    [LTX2_W_EMB_LINEAR_2_BIAS] = S1(E),      /* LS:55 */
    [LTX2_W_NORM_SCALE] = S1(R),             /* LS:58 */
    UNANNOTATED_ENTRY,
};

/* TextConnectorShardingSpecs defaults: LS:61-82. */
static const spec_entry trillium_connector[LTX2_W_KIND_COUNT] = {
    [LTX2_W_NET_0_KERNEL] = S2(E, M),       /* LS:66 */
    [LTX2_W_NET_0_BIAS] = S1(M),            /* LS:67 */
    [LTX2_W_NET_2_KERNEL] = S2(M, E),       /* LS:68 */
    [LTX2_W_NET_2_BIAS] = S1(E),            /* LS:69 */
    [LTX2_W_QKV_KERNEL] = S2(E, H),         /* LS:72 */
    [LTX2_W_OUT_KERNEL] = S2(H, E),         /* LS:73 */
    [LTX2_W_OUT_BIAS] = S1(E),              /* LS:74 */
    [LTX2_W_QKV_BIAS] = S1(H),              /* LS:75 */
    [LTX2_W_GATE_LOGITS_KERNEL] = S2(E, H), /* LS:76 */
    [LTX2_W_GATE_LOGITS_BIAS] = S1(H),      /* LS:77 */
    [LTX2_W_NORM_SCALE] = S1(R),            /* LS:78 */
    [LTX2_W_PROJ_KERNEL] = S2(N, N),        /* LS:81 */
    [LTX2_W_PROJ_BIAS] = S1(N),             /* LS:82 */
    UNANNOTATED_ENTRY,
};

/* VAEShardingSpecs defaults: LS:85-97. */
static const spec_entry trillium_vae[LTX2_W_KIND_COUNT] = {
    [LTX2_W_EMB_LINEAR_1_KERNEL] = S2(E, M), /* LS:90 */
    [LTX2_W_EMB_LINEAR_1_BIAS] = S1(M),      /* LS:91 */
    [LTX2_W_EMB_LINEAR_2_KERNEL] = S2(M, E), /* LS:92 */
    [LTX2_W_EMB_LINEAR_2_BIAS] = S1(E),      /* LS:93 */
    [LTX2_W_SCALE_SHIFT_TABLE] = S2(N, N),   /* LS:96 */
    [LTX2_W_PER_CHANNEL_SCALE] = S1(N),      /* LS:97 */
    UNANNOTATED_ENTRY,
};

/* Ironwood overrides, LS:102-124; fields not overridden keep their defaults (net_0_bias LS:38,
 * emb_linear_1_bias LS:53). */
static const spec_entry ironwood_dit[LTX2_W_KIND_COUNT] = {
    [LTX2_W_QKV_KERNEL] = S2(N, H),          /* LS:104 */
    [LTX2_W_QKV_BIAS] = S1(H),               /* LS:105 */
    [LTX2_W_OUT_KERNEL] = S2(H, N),          /* LS:106 */
    [LTX2_W_OUT_BIAS] = S1(N),               /* LS:107 */
    [LTX2_W_GATE_LOGITS_KERNEL] = S2(N, H),  /* LS:108 */
    [LTX2_W_GATE_LOGITS_BIAS] = S1(H),       /* LS:109 */
    [LTX2_W_NET_0_KERNEL] = S2(N, M),        /* LS:110 */
    [LTX2_W_NET_0_BIAS] = S1(M),             /* LS:38 (default kept) */
    [LTX2_W_NET_2_KERNEL] = S2(M, N),        /* LS:111 */
    [LTX2_W_NET_2_BIAS] = S1(N),             /* LS:112 */
    [LTX2_W_EMBED_KERNEL] = S2(N, N),        /* LS:113 */
    [LTX2_W_EMBED_BIAS] = S1(N),             /* LS:114 */
    [LTX2_W_ADALN_KERNEL] = S2(N, N),        /* LS:115 */
    [LTX2_W_ADALN_BIAS] = S1(N),             /* LS:116 */
    [LTX2_W_SCALE_SHIFT_TABLE] = S2(N, N),   /* LS:117 */
    [LTX2_W_OUT_EMBED_KERNEL] = S2(N, N),    /* LS:118 */
    [LTX2_W_OUT_EMBED_BIAS] = S1(N),         /* LS:119 */
    [LTX2_W_EMB_LINEAR_1_KERNEL] = S2(N, M), /* LS:120 */
    [LTX2_W_EMB_LINEAR_1_BIAS] = S1(M),      /* LS:53 (default kept) */
    [LTX2_W_EMB_LINEAR_2_KERNEL] = S2(M, N), /* LS:121 */
    [LTX2_W_EMB_LINEAR_2_BIAS] = S1(N),      /* LS:122 */
    [LTX2_W_NORM_SCALE] = S1(N),             /* LS:123 */
    UNANNOTATED_ENTRY,
};

/* LS:125-136 (proj_* keep their all-None defaults, LS:81-82). */
static const spec_entry ironwood_connector[LTX2_W_KIND_COUNT] = {
    [LTX2_W_QKV_KERNEL] = S2(N, H),         /* LS:126 */
    [LTX2_W_QKV_BIAS] = S1(H),              /* LS:127 */
    [LTX2_W_OUT_KERNEL] = S2(H, N),         /* LS:128 */
    [LTX2_W_OUT_BIAS] = S1(N),              /* LS:129 */
    [LTX2_W_GATE_LOGITS_KERNEL] = S2(N, H), /* LS:130 */
    [LTX2_W_GATE_LOGITS_BIAS] = S1(H),      /* LS:131 */
    [LTX2_W_NET_0_KERNEL] = S2(N, M),       /* LS:132 */
    [LTX2_W_NET_0_BIAS] = S1(M),            /* LS:67 (default kept) */
    [LTX2_W_NET_2_KERNEL] = S2(M, N),       /* LS:133 */
    [LTX2_W_NET_2_BIAS] = S1(N),            /* LS:134 */
    [LTX2_W_NORM_SCALE] = S1(N),            /* LS:135 */
    [LTX2_W_PROJ_KERNEL] = S2(N, N),        /* LS:81 */
    [LTX2_W_PROJ_BIAS] = S1(N),             /* LS:82 */
    UNANNOTATED_ENTRY,
};

/* LS:137-141. */
static const spec_entry ironwood_vae[LTX2_W_KIND_COUNT] = {
    [LTX2_W_EMB_LINEAR_1_KERNEL] = S2(N, M), /* LS:138 */
    [LTX2_W_EMB_LINEAR_1_BIAS] = S1(M),      /* LS:91 (default kept) */
    [LTX2_W_EMB_LINEAR_2_KERNEL] = S2(M, N), /* LS:139 */
    [LTX2_W_EMB_LINEAR_2_BIAS] = S1(N),      /* LS:140 */
    [LTX2_W_SCALE_SHIFT_TABLE] = S2(N, N),   /* LS:96 */
    [LTX2_W_PER_CHANNEL_SCALE] = S1(N),      /* LS:97 */
    UNANNOTATED_ENTRY,
};

/* gpu (ours): the DiT and connectors use Ironwood's specs, which with tensor = 1 replicate every
 * weight and with tensor > 1 give Megatron-style column/row splits on heads/mlp only (never the
 * contracted embed dim: the PR #385 lesson, spec section 1.4). The VAE is fully replicated, the
 * MaxDiffusion PR #421 lesson (replicate_vae), so it never inherits a weight split. */
static const spec_entry gpu_vae[LTX2_W_KIND_COUNT] = {
    [LTX2_W_EMB_LINEAR_1_KERNEL] = S2(N, N), [LTX2_W_EMB_LINEAR_1_BIAS] = S1(N),
    [LTX2_W_EMB_LINEAR_2_KERNEL] = S2(N, N), [LTX2_W_EMB_LINEAR_2_BIAS] = S1(N),
    [LTX2_W_SCALE_SHIFT_TABLE] = S2(N, N),   [LTX2_W_PER_CHANNEL_SCALE] = S1(N),
    UNANNOTATED_ENTRY,
};

#undef N
#undef E
#undef H
#undef M
#undef R

static const spec_entry *const registry[LTX2_PROFILE_COUNT][LTX2_SHARD_COMPONENT_COUNT] = {
    [LTX2_PROFILE_IRONWOOD] = {ironwood_dit, ironwood_connector, ironwood_vae},
    [LTX2_PROFILE_TRILLIUM] = {trillium_dit, trillium_connector, trillium_vae},
    [LTX2_PROFILE_GPU] = {ironwood_dit, ironwood_connector, gpu_vae},
};

ltx2_status ltx2_shard_profile_parse(ltx2_context *ctx, const char *name, ltx2_shard_hardware hw,
                                     ltx2_shard_profile *out) {
    if (!name || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sharding profile: NULL argument");
    if (!strcmp(name, "default")) {
        /* LS:156-161: TPU7x -> ironwood, anything else -> trillium. We add: GPUs and CPU ranks -> gpu. */
        switch (hw) {
        case LTX2_HW_TPU_V7X: *out = LTX2_PROFILE_IRONWOOD; return LTX2_OK;
        case LTX2_HW_TPU_OTHER: *out = LTX2_PROFILE_TRILLIUM; return LTX2_OK;
        case LTX2_HW_GPU:
        case LTX2_HW_CPU: *out = LTX2_PROFILE_GPU; return LTX2_OK;
        }
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sharding profile 'default': unknown hardware %d", (int)hw);
    }
    for (int p = 0; p < LTX2_PROFILE_COUNT; p++) {
        if (!strcmp(name, profile_names[p])) {
            *out = (ltx2_shard_profile)p;
            return LTX2_OK;
        }
    }
    /* LS:163-168 falls back to trillium with a warning; a typo must not silently change memory use. */
    return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                      "unknown sharding profile '%s': expected one of ironwood, trillium, gpu, default", name);
}

ltx2_status ltx2_shard_spec(ltx2_context *ctx, ltx2_shard_profile p, ltx2_shard_component c, ltx2_weight_kind k,
                            ltx2_logical_axis spec[LTX2_SHARD_SPEC_MAX], int *ndim) {
    if (p < 0 || p >= LTX2_PROFILE_COUNT || c < 0 || c >= LTX2_SHARD_COMPONENT_COUNT || k < 0 ||
        k >= LTX2_W_KIND_COUNT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sharding spec: profile %d / component %d / kind %d out of range",
                          (int)p, (int)c, (int)k);
    const spec_entry *e = &registry[p][c][k];
    if (!e->present)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "sharding profile '%s': component '%s' has no weight kind '%s'",
                          profile_names[p], component_names[c], kind_names[k]);
    *ndim = e->ndim;
    for (int i = 0; i < LTX2_SHARD_SPEC_MAX; i++) spec[i] = (ltx2_logical_axis)e->axis[i];
    return LTX2_OK;
}

int ltx2_shard_logical_to_mesh(ltx2_logical_axis a, ltx2_mesh_axis out[LTX2_AXIS_COUNT]) {
    switch (a) {
    case LTX2_LOGICAL_MLP: out[0] = LTX2_AXIS_TENSOR; return 1;   /* YML:84 ['mlp','tensor'] */
    case LTX2_LOGICAL_EMBED:                                      /* YML:85 ['embed', ['context','fsdp']] */
        out[0] = LTX2_AXIS_CONTEXT;
        out[1] = LTX2_AXIS_FSDP;
        return 2;
    case LTX2_LOGICAL_HEADS: out[0] = LTX2_AXIS_TENSOR; return 1; /* YML:86 ['heads','tensor'] */
    case LTX2_LOGICAL_NORM: out[0] = LTX2_AXIS_TENSOR; return 1;  /* YML:87 ['norm','tensor'] */
    default: return 0;
    }
}

/* ---- names -> kinds ---- */

static bool has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }
static bool starts(const char *s, const char *pre) { return strncmp(s, pre, strlen(pre)) == 0; }
static bool ends(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* weight -> kernel kind, bias -> the next enum value (every *_KERNEL is followed by its *_BIAS). */
static bool pick(const char *name, ltx2_weight_kind kernel, ltx2_weight_kind *kind) {
    if (ends(name, ".weight")) *kind = kernel;
    else if (ends(name, ".bias")) *kind = (ltx2_weight_kind)(kernel + 1);
    else return false;
    return true;
}

ltx2_status ltx2_shard_classify(ltx2_context *ctx, const char *name, ltx2_shard_component *comp,
                                ltx2_weight_kind *kind) {
    const char *n = name;
    if (starts(n, "model.diffusion_model.")) n += strlen("model.diffusion_model.");

    /* VAE, audio VAE, vocoder: MaxDiffusion builds their convs unannotated (replicated), see
     * models/ltx2/autoencoder_kl_ltx2.py; only timestep tables / noise scales have specs. */
    if (starts(n, "vae.") || starts(n, "audio_vae.") || starts(n, "vocoder.") || starts(n, "encoder.") ||
        starts(n, "decoder.") || starts(n, "per_channel_statistics.")) {
        *comp = LTX2_SHARD_VAE;
        if (has(n, "scale_shift_table")) *kind = LTX2_W_SCALE_SHIFT_TABLE;      /* autoencoder_kl_ltx2.py:245 */
        else if (has(n, "per_channel_scale")) *kind = LTX2_W_PER_CHANNEL_SCALE; /* autoencoder_kl_ltx2.py:237 */
        else if (has(n, "timestep_embedder.linear_1.") && pick(n, LTX2_W_EMB_LINEAR_1_KERNEL, kind)) {
        } else if (has(n, "timestep_embedder.linear_2.") && pick(n, LTX2_W_EMB_LINEAR_2_KERNEL, kind)) {
        } else *kind = LTX2_W_UNANNOTATED;
        return LTX2_OK;
    }

    /* Text connectors (embeddings_connector_ltx2.py) and the Gemma feature projection
     * (feature_extractor_ltx2.py:118-120 uses proj_kernel / proj_bias). */
    bool connector = has(n, "embeddings_connector.") || has(n, "video_connector.") || has(n, "audio_connector.");
    if (starts(n, "text_embedding_projection.") || has(n, "text_proj_in.")) {
        *comp = LTX2_SHARD_TEXT_CONNECTOR;
        if (pick(n, LTX2_W_PROJ_KERNEL, kind)) return LTX2_OK;
    }
    *comp = connector ? LTX2_SHARD_TEXT_CONNECTOR : LTX2_SHARD_DIT;
    if (ends(n, "learnable_registers")) { /* embeddings_connector_ltx2.py:136-138: no partitioning */
        *kind = LTX2_W_UNANNOTATED;
        return LTX2_OK;
    }
    /* LTX2Attention: AT:370-380 (q/k/v, out, norms), AT:455-456 (gate logits). */
    if ((has(n, ".to_q.") || has(n, ".to_k.") || has(n, ".to_v.")) && pick(n, LTX2_W_QKV_KERNEL, kind)) return LTX2_OK;
    if (has(n, ".to_out.0.") && pick(n, LTX2_W_OUT_KERNEL, kind)) return LTX2_OK;
    if (has(n, ".to_gate_logits.") && pick(n, LTX2_W_GATE_LOGITS_KERNEL, kind)) return LTX2_OK;
    if (ends(n, ".q_norm.weight") || ends(n, ".k_norm.weight") || ends(n, ".norm_q.weight") ||
        ends(n, ".norm_k.weight")) {
        *kind = LTX2_W_NORM_SCALE;
        return LTX2_OK;
    }
    /* NNXSimpleFeedForward: AF:2136-2162. */
    if (has(n, ".net.0.proj.") && pick(n, LTX2_W_NET_0_KERNEL, kind)) return LTX2_OK;
    if (has(n, ".net.2.") && pick(n, LTX2_W_NET_2_KERNEL, kind)) return LTX2_OK;
    /* Timestep MLP (EF:91-94) and caption projection (EF:346-349). */
    if ((has(n, "timestep_embedder.linear_1.") || has(n, "caption_projection.linear_1.")) &&
        pick(n, LTX2_W_EMB_LINEAR_1_KERNEL, kind))
        return LTX2_OK;
    if ((has(n, "timestep_embedder.linear_2.") || has(n, "caption_projection.linear_2.")) &&
        pick(n, LTX2_W_EMB_LINEAR_2_KERNEL, kind))
        return LTX2_OK;
    /* proj_in / audio_proj_in: TR:907-924 (embed_kernel); proj_out: TR:1213-1233 (out_embed_kernel). */
    if ((starts(n, "patchify_proj.") || starts(n, "audio_patchify_proj.") || starts(n, "proj_in.") ||
         starts(n, "audio_proj_in.")) &&
        pick(n, LTX2_W_EMBED_KERNEL, kind))
        return LTX2_OK;
    if ((starts(n, "proj_out.") || starts(n, "audio_proj_out.")) && pick(n, LTX2_W_OUT_EMBED_KERNEL, kind))
        return LTX2_OK;
    /* LTX2AdaLayerNormSingle.linear: TR:114-123 (every *adaln_single / time_embed / av_cross_attn_* module). */
    if ((ends(n, ".linear.weight") || ends(n, ".linear.bias")) && !connector &&
        pick(n, LTX2_W_ADALN_KERNEL, kind))
        return LTX2_OK;
    /* Modulation tables: TR:450-470 (per block), TR:1026-1037 (output). */
    if (has(n, "scale_shift_table") && !connector) {
        *kind = LTX2_W_SCALE_SHIFT_TABLE;
        return LTX2_OK;
    }
    return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "no sharding rule for tensor '%s' (not a known LTX-2 weight)", name);
}

static bool is_kernel(ltx2_weight_kind k) {
    switch (k) {
    case LTX2_W_QKV_KERNEL: case LTX2_W_OUT_KERNEL: case LTX2_W_GATE_LOGITS_KERNEL: case LTX2_W_NET_0_KERNEL:
    case LTX2_W_NET_2_KERNEL: case LTX2_W_EMBED_KERNEL: case LTX2_W_ADALN_KERNEL: case LTX2_W_OUT_EMBED_KERNEL:
    case LTX2_W_EMB_LINEAR_1_KERNEL: case LTX2_W_EMB_LINEAR_2_KERNEL: case LTX2_W_PROJ_KERNEL: return true;
    default: return false;
    }
}

ltx2_status ltx2_shard_layout_of(ltx2_context *ctx, ltx2_shard_profile p, const ltx2_mesh *mesh, const char *name,
                                 int ndim, const int64_t *shape, ltx2_shard_layout *out) {
    if (!mesh || !name || !out || (ndim > 0 && !shape) || ndim < 0 || ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sharding layout of '%s': bad arguments (ndim %d)",
                          name ? name : "(null)", ndim);
    memset(out, 0, sizeof(*out));
    LTX2_TRY(ltx2_shard_classify(ctx, name, &out->component, &out->kind));
    ltx2_logical_axis spec[LTX2_SHARD_SPEC_MAX];
    int snd = 0;
    LTX2_TRY(ltx2_shard_spec(ctx, p, out->component, out->kind, spec, &snd));
    if (snd != 0 && snd != ndim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "tensor '%s' (%s %s) has %d dims but its sharding spec has %d", name,
                          component_names[out->component], kind_names[out->kind], ndim, snd);
    out->ndim = ndim;
    out->local_numel = 1;
    for (int d = 0; d < ndim; d++) {
        out->shape[d] = shape[d];
        out->parts[d] = 1;
    }
    /* Flax kernels are [in, out], checkpoint Linear weights [out, in]: spec dim i -> tensor dim. */
    bool flip = snd == 2 && is_kernel(out->kind);
    unsigned used = 0;
    for (int i = 0; i < snd; i++) {
        int d = flip ? snd - 1 - i : i;
        out->logical[d] = spec[i];
        ltx2_mesh_axis axes[LTX2_AXIS_COUNT];
        int na = ltx2_shard_logical_to_mesh(spec[i], axes);
        unsigned want = 0;
        for (int j = 0; j < na; j++) want |= LTX2_AXIS_BIT(axes[j]);
        if (want & used) continue; /* flax/linen/spmd.py _mesh_assignment_free: axis taken, replicate */
        used |= want;
        out->n_mesh[d] = na;
        for (int j = 0; j < na; j++) {
            out->mesh[d][j] = axes[j];
            out->parts[d] *= mesh->size[axes[j]];
        }
    }
    int64_t shards = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "tensor '%s' dim %d has negative size %lld", name, d,
                              (long long)shape[d]);
        if (shape[d] % out->parts[d] != 0) {
            char axes[64] = "";
            size_t len = 0;
            for (int j = 0; j < out->n_mesh[d]; j++) {
                int k = snprintf(axes + len, sizeof(axes) - len, "%s%s=%d", j ? "*" : "",
                                 ltx2_mesh_axis_name(out->mesh[d][j]), mesh->size[out->mesh[d][j]]);
                if (k > 0 && (size_t)k < sizeof(axes) - len) len += (size_t)k;
            }
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "tensor '%s' dim %d (size %lld, logical '%s') is split over %s = %lld parts, which does "
                              "not divide it (remainder %lld); profile '%s'",
                              name, d, (long long)shape[d], logical_names[out->logical[d]], axes,
                              (long long)out->parts[d], (long long)(shape[d] % out->parts[d]), profile_names[p]);
        }
        out->local_shape[d] = shape[d] / out->parts[d];
        out->local_numel *= out->local_shape[d];
        shards *= out->parts[d];
    }
    out->replicas = (int)(ltx2_mesh_world_size(mesh) / shards);
    return LTX2_OK;
}

void ltx2_shard_local_offset(const ltx2_shard_layout *l, const ltx2_mesh *mesh, int rank,
                             int64_t offset[LTX2_MAX_DIMS]) {
    int coords[LTX2_AXIS_COUNT];
    ltx2_mesh_coords(mesh, rank, coords);
    for (int d = 0; d < l->ndim; d++) {
        int64_t idx = 0;
        for (int j = 0; j < l->n_mesh[d]; j++) idx = idx * mesh->size[l->mesh[d][j]] + coords[l->mesh[d][j]];
        offset[d] = idx * l->local_shape[d];
    }
}
