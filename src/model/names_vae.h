/* The diffusers view's video VAE, audio VAE and vocoder parts: the Lightricks `vae` / `audio_vae` /
 * `vocoder` config sections written from diffusers' AutoencoderKLLTX2Video / AutoencoderKLLTX2Audio
 * / LTX2Vocoder(WithBWE) config.json, and the tensor renames (the inverse of diffusers 0.42.1
 * loaders/single_file_utils.py convert_ltx2_vae_to_diffusers / convert_ltx2_audio_vae_to_diffusers
 * and scripts/convert_ltx2_to_diffusers.py's vocoder table; tests/golden/gen_tiny_diffusers.py
 * says which parts follow only the pattern of those tables). */
#ifndef LTX2_MODEL_NAMES_VAE_H
#define LTX2_MODEL_NAMES_VAE_H

#include <stdbool.h>
#include <stddef.h>

#include "io/json.h"
#include "ltx2/ltx2.h"
#include "model/names.h"
#include "model/vae_config.h"

/* Where each diffusers video VAE block sits in the Lightricks block lists (from its config). */
typedef struct ltx2_df_vae_map {
    int n_down, n_up;                          /* diffusers down_blocks / up_blocks */
    int enc_res[LTX2_VAE_MAX_BLOCKS], enc_down[LTX2_VAE_MAX_BLOCKS], enc_mid; /* -1: none */
    int dec_res[LTX2_VAE_MAX_BLOCKS], dec_up[LTX2_VAE_MAX_BLOCKS], dec_mid;
} ltx2_df_vae_map;

/* Appends `"<section>": {...}` (with a leading ",\n") for comp (LTX2_DF_VAE / _AUDIO_VAE / _VOCODER)
 * from its diffusers config; map (video VAE only, may be NULL otherwise) gets the block positions.
 * conv_in_width: the video encoder's conv_in output width (diffusers does not store it). A setting
 * the Lightricks model cannot express is an error naming label and the key. */
ltx2_status ltx2_names_df_section(ltx2_context *ctx, ltx2_df_component comp, const ltx2_json *cfg, const char *label,
                                  int64_t conv_in_width, ltx2_sbuf *out, ltx2_df_vae_map *map);
/* Full Lightricks name (with `vae.` / `audio_vae.` / `vocoder.`) of a diffusers tensor of comp. Names
 * no rule matches keep their path under the prefix (the loader reports them). False if cap is short. */
bool ltx2_names_df_vae_to_lt(ltx2_df_component comp, const ltx2_df_vae_map *map, const char *df, char *out,
                             size_t cap);

#endif
