/* The video VAE's configuration, parsed from the `vae` section of a checkpoint's metadata
 * `config` JSON (ltx-core CausalVideoAutoencoder fields). ltx-core fills missing keys with
 * defaults that silently change the model (timestep_conditioning defaults to true, an absent
 * block list builds an empty network); here a missing block list is refused by the loader that
 * needs it and a missing
 * timestep_conditioning is left "unknown" so the loader decides from the tensors present. */
#ifndef LTX2_MODEL_VAE_CONFIG_H
#define LTX2_MODEL_VAE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"

/* Real configs have 7 (2.0 decoder) to 9 blocks per list. */
#define LTX2_VAE_MAX_BLOCKS 32

typedef enum ltx2_vae_block_kind {
    LTX2_VAE_RES_X = 0,       /* UNetMidBlock3D: num_layers ResnetBlock3D at constant width */
    LTX2_VAE_RES_X_Y,         /* one ResnetBlock3D changing width (unused by 2.0/2.3) */
    LTX2_VAE_ATTN_RES_X,      /* named by ltx-core but cannot be built there either */
    LTX2_VAE_COMPRESS_TIME,   /* decoder: DepthToSpaceUpsample (2,1,1); encoder: strided conv */
    LTX2_VAE_COMPRESS_SPACE,  /* (1,2,2) */
    LTX2_VAE_COMPRESS_ALL,    /* (2,2,2) */
    LTX2_VAE_COMPRESS_ALL_X_Y,    /* encoder only: strided conv changing width */
    LTX2_VAE_COMPRESS_TIME_RES,   /* encoder only: SpaceToDepthDownsample (2,1,1) */
    LTX2_VAE_COMPRESS_SPACE_RES,  /* (1,2,2) */
    LTX2_VAE_COMPRESS_ALL_RES     /* (2,2,2) */
} ltx2_vae_block_kind;

const char *ltx2_vae_block_name(ltx2_vae_block_kind k);

typedef struct ltx2_vae_block {
    ltx2_vae_block_kind kind;
    int64_t num_layers;  /* res_x: layers (required key, as in ltx-core) */
    int64_t multiplier;  /* resolved with ltx-core's per-role default (see vae_config.c) */
    bool residual;       /* decoder compress_all only; ltx-core ignores it elsewhere */
    bool inject_noise;   /* decoder res_x */
} ltx2_vae_block;

typedef enum ltx2_vae_pad { LTX2_VAE_PAD_ZEROS = 0, LTX2_VAE_PAD_REFLECT = 1 } ltx2_vae_pad;

typedef enum ltx2_vae_logvar {
    LTX2_VAE_LOGVAR_UNIFORM = 0, /* conv_out has latent+1 channels (real files) */
    LTX2_VAE_LOGVAR_PER_CHANNEL, /* 2 x latent */
    LTX2_VAE_LOGVAR_CONSTANT,    /* latent+1, logvar replaced by a constant */
    LTX2_VAE_LOGVAR_NONE         /* latent */
} ltx2_vae_logvar;

typedef struct ltx2_vae_config {
    int64_t dims;             /* 3 (only 3-D convs are supported) */
    int64_t in_channels;      /* pixel channels, 3 */
    int64_t out_channels;     /* 3 */
    int64_t latent_channels;  /* 128 in real files */
    int64_t patch_size;       /* 4 */
    int64_t decoder_base_channels; /* 128; conv_in width = 8 x this (ltx-core hard-codes the 8) */
    bool causal_decoder;      /* false in 2.0/2.3: decoder convs replicate-pad both time ends */
    int timestep_conditioning; /* 1 / 0 as the config says, -1 when the key is absent */
    ltx2_vae_logvar latent_log_var;
    ltx2_vae_pad encoder_padding, decoder_padding;
    int n_encoder_blocks, n_decoder_blocks; /* -1 when the list is absent from the config */
    ltx2_vae_block encoder_blocks[LTX2_VAE_MAX_BLOCKS];
    ltx2_vae_block decoder_blocks[LTX2_VAE_MAX_BLOCKS]; /* in config order; the decoder runs them reversed */
} ltx2_vae_config;

/* `root` is the whole metadata config object (holding "vae"). `label` names the source in errors. */
ltx2_status ltx2_vae_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                  ltx2_vae_config *out);

/* Reads __metadata__["config"] of a safetensors file and parses its `vae` section. */
ltx2_status ltx2_vae_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_vae_config *out);

#endif
