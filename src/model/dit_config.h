/* The LTX-2 / LTX-2.3 transformer (DiT) configuration, parsed from the single-file checkpoint's
 * `__metadata__["config"]` JSON, section "transformer" (what ltx-core's LTXModelConfigurator
 * reads). Values whose ltx-core default differs from the real checkpoints (rope_type default
 * "interleaved", frequencies_precision default fp32, av_ca_timestep_scale_multiplier default 1) are
 * required, never defaulted; the fixed-value keys ltx-core checks are checked the same way. */
#ifndef LTX2_MODEL_DIT_CONFIG_H
#define LTX2_MODEL_DIT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/op_desc.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"

/* AdaLN parameter rows per block: shift/scale/gate for self-attn and FFN; 3 more (q shift, q scale,
 * gate) for text cross-attention AdaLN (LTX-2.3). */
#define LTX2_DIT_ADALN_BASE 6
#define LTX2_DIT_ADALN_CROSS 9
/* The sinusoidal timestep embedding width, fixed in every LTX-2 model. */
#define LTX2_DIT_TIMESTEP_CHANNELS 256

typedef struct ltx2_dit_config {
    int64_t num_layers;
    int64_t heads, head_dim, inner_dim;                   /* video: Dv = heads * head_dim */
    int64_t audio_heads, audio_head_dim, audio_inner_dim; /* audio: Da */
    int64_t in_channels, out_channels;                    /* video latent features per token */
    int64_t audio_in_channels;  /* 0 when the key is absent (real files): taken from the weights */
    int64_t audio_out_channels;
    int64_t cross_attention_dim, audio_cross_attention_dim; /* == Dv, == Da (checked) */
    int64_t caption_channels;   /* text width into the DiT's caption projection (LTX-2.0) */
    float norm_eps;
    double rope_theta;
    float max_pos[3];           /* video RoPE: time (s), y (px), x (px) */
    float audio_max_pos;        /* audio RoPE: time (s) */
    float timestep_scale_multiplier;       /* t = sigma * this (1000) */
    float av_ca_timestep_scale_multiplier; /* A/V cross-attention gate timestep multiplier (1000) */
    ltx2_rope_type rope_type;
    bool rope_double_precision; /* frequencies_precision == "float64" */
    bool apply_gated_attention;       /* LTX-2.3: per-head 2*sigmoid gates on all 6 attentions */
    bool cross_attention_adaln;       /* LTX-2.3: 9 AdaLN rows + prompt AdaLN */
    bool caption_projection;          /* LTX-2.0: caption_projection inside the DiT */
    int64_t adaln_rows;               /* 6 or 9 */
} ltx2_dit_config;

/* Parses the "transformer" object. `label` names the source in messages (e.g. the file path). */
ltx2_status ltx2_dit_config_parse(ltx2_context *ctx, const ltx2_json *transformer, const char *label,
                                  ltx2_dit_config *out);

/* Reads `config` from the file's metadata, parses it and its "transformer" section. */
ltx2_status ltx2_dit_config_from_st(ltx2_context *ctx, const ltx2_st_file *f, ltx2_dit_config *out);

/* Parses the required "rope_type" and "frequencies_precision" of a transformer config object (also
 * used by the connectors); `what` is appended to the "ltx-core would default" note. */
ltx2_status ltx2_config_rope(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *what,
                             ltx2_rope_type *type, bool *double_precision);

#endif
