/* The parts of `ltx2 generate` (cmd_generate.c) kept in files of their own: the help text, the
 * choice of pipeline and the checks of its paths and texts. */
#ifndef LTX2_CLI_GENERATE_CLI_H
#define LTX2_CLI_GENERATE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ltx2/ltx2.h"
#include "pipeline/two_stage_clip.h"

#define CLI_GENERATE_CMD "generate"
/* Room for one path the command builds (the embedded model's files, the cache directory). */
#define CLI_GENERATE_PATH_CAP 4096

void cli_generate_usage(FILE *out);

/* The pipeline: --pipeline (asked >= 0), else --distilled-checkpoint-path or the checkpoint's name
 * saying distilled (distilled), else --distilled-lora (two-stage), else one-stage; sets
 * p->pipeline and *why_out (what decided it, for the run's first lines). Refuses (a message on
 * stderr, false) a pipeline on a checkpoint its name says it was not made for, flags the pipeline
 * has no use for, and missing inputs. */
/* Of the checkpoint paths (a file, a diffusers directory, or split files), the one whose name says
 * dev or distilled (for a directory its own name), else the first. */
const char *cli_generate_named_checkpoint(const char *const *paths, int n);
bool cli_generate_pick_pipeline(int asked, bool distilled_ckpt, const char *ckpt, bool guidance_flags, bool have_dlora,
                                ltx2_generate_params *p, const char **why_out);

/* Stage 1 of p's two-stage pipeline from its latent upsampler's config (two_stage_clip.h); false
 * (said on stderr) when the file is no upsampler, or p's size, frames or image frames do not fit it. */
bool cli_generate_two_stage_clip(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_two_stage_clip *clip);

/* The checks of generate_inputs.c: each prints why on stderr and returns false when refused. */
/* rel under the executable's directory, its parent, or the source tree, into out. */
bool cli_generate_find_embedded(const char *rel, char *out, size_t cap);
/* The directory that will hold path exists and is writable, and path is not a directory. */
bool cli_generate_parent_writable(const char *flag, const char *path);
/* path is a writable directory, or can be made one. */
bool cli_generate_dir_usable(const char *flag, const char *path);
/* path is a readable file. */
bool cli_generate_input_file(const char *flag, const char *path);
/* --maxdiffusion-weights: path is readable and a MaxDiffusion converted-weights cache; appended to the
 * checkpoint paths ckpts[*n] (room for cap), where it takes the DiT's place (model/ckpt_source.h). */
bool cli_generate_md_weights(ltx2_context *ctx, const char *path, const char **ckpts, int *n, int cap);
/* The text flags against each other and the prompt itself (valid UTF-8, not empty). */
bool cli_generate_text_flags_valid(const ltx2_generate_params *p, const char *pos, const char *neg);
/* The outputs of one run name different paths. */
bool cli_generate_outputs_distinct(const char *output, const char *wav, const char *png_dir, const char *dump,
                                   const char *embeds);
/* $XDG_CACHE_HOME/ltx2c/prompts, else $HOME/.cache/ltx2c/prompts; false without either. */
bool cli_generate_default_text_cache(char *out, size_t cap);
/* A Gemma-3 directory with its config.json and tokenizer.model. */
bool cli_generate_text_encoder_usable(const char *dir);

#endif
