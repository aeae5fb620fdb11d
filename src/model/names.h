/* Checkpoint key tables for both layouts: the Lightricks single file (`model.diffusion_model.*`,
 * `text_embedding_projection.*`, config JSON in `__metadata__["config"]`) and the diffusers
 * directory (`transformer/` + `connectors/`, each with config.json and sharded safetensors). A
 * diffusers directory is opened as a *view*: an in-memory ltx2_st_file whose tensors carry the
 * Lightricks names (data still mapped from the shards) and whose metadata holds an equivalent
 * Lightricks config, so the one loader per model (dit_weights.c, connectors_weights.c) serves
 * both layouts. Every rename is one row of the table in names.c (spec sections 1.1, 2.2-2.4). */
#ifndef LTX2_MODEL_NAMES_H
#define LTX2_MODEL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "io/safetensors.h"
#include "ltx2/ltx2.h"

/* Which diffusers component a key belongs to (the renames differ: `transformer_blocks` is the DiT's
 * name in both layouts but the connectors' `transformer_1d_blocks`). */
typedef enum ltx2_df_component {
    LTX2_DF_TRANSFORMER = 0,
    LTX2_DF_CONNECTORS,
    LTX2_DF_VAE,
    LTX2_DF_AUDIO_VAE,
    LTX2_DF_VOCODER,
    LTX2_DF_COUNT
} ltx2_df_component;

/* Lightricks name of a diffusers tensor name (full, with `model.diffusion_model.` where the single
 * file has it). Names no row matches keep their path under the component's default prefix, so the
 * loader reports them as unexpected. False if it does not fit in cap. */
bool ltx2_names_df_to_lt(ltx2_df_component comp, const char *df, char *out, size_t cap);
/* The inverse: diffusers name (without the component folder) of a Lightricks name; *comp says which
 * folder. False for names outside the DiT / connectors / text projection, or when cap is short. */
bool ltx2_names_lt_to_df(const char *lt, ltx2_df_component *comp, char *out, size_t cap);

/* Our (ltx-core) spelling of a MaxDiffusion / diffusers DiT module path, such as an activation's
 * dump name (`proj_in.out`, `transformer_blocks.attn1.norm_q.out`): each whole dot-separated
 * component one of the DiT's rows renames (proj_in -> patchify_proj, time_embed -> adaln_single,
 * av_cross_attn_* -> av_ca_*, norm_q -> q_norm, rope -> video_args.pe, ...) is renamed, the others
 * kept, so our own names map to themselves. False when cap is short. */
bool ltx2_names_module_to_lt(const char *name, char *out, size_t cap);

typedef struct ltx2_df_view ltx2_df_view;

/* Opens `dir/transformer` (required) and `dir/connectors`, `dir/vae`, `dir/audio_vae`, `dir/vocoder`
 * (each optional; names_vae.h translates the last three to `vae.` / `audio_vae.` / `vocoder.` names
 * and config sections). The view's file is usable
 * with ltx2_dit_config_from_st / ltx2_connectors_config_from_st and the weight loaders. Configs
 * are translated key by key; a value the Lightricks model cannot express (other patch sizes,
 * per-modality differences the single-file config has one key for, registers != 128) is an error
 * naming the diffusers key. */
ltx2_status ltx2_df_view_open(ltx2_context *ctx, const char *dir, ltx2_df_view **out);
const ltx2_st_file *ltx2_df_view_file(const ltx2_df_view *v);
bool ltx2_df_view_has_connectors(const ltx2_df_view *v);
/* Whether the directory had component c (its config.json; transformer always). */
bool ltx2_df_view_has(const ltx2_df_view *v, ltx2_df_component c);
/* The subfolder of component c ("transformer", "connectors", "vae", "audio_vae", "vocoder"). */
const char *ltx2_df_folder(ltx2_df_component c);
void ltx2_df_view_close(ltx2_df_view *v);

/* True when path is a directory laid out like a diffusers model (has transformer/config.json). */
bool ltx2_names_is_diffusers_dir(const char *path);

#endif
