/* The parts of `ltx2 generate` (cmd_generate.c) kept in files of their own: the help text and the
 * choice of pipeline. */
#ifndef LTX2_CLI_GENERATE_CLI_H
#define LTX2_CLI_GENERATE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "ltx2/ltx2.h"

#define CLI_GENERATE_CMD "generate"

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

#endif
