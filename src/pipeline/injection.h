/* Injection points for validating the pipeline against another engine's run (a TPU run of
 * MaxDiffusion, a PyTorch one): the DiT's text contexts after the connectors and the sigma
 * schedule, read from files instead of computed. Both read what `--dump` writes (a dump directory,
 * its .npy files, or a .safetensors / .npz holding the same names), so a run can be replayed from
 * any of its stages. The initial noise has its own (--noise, pipeline.h). */
#ifndef LTX2_PIPELINE_INJECTION_H
#define LTX2_PIPELINE_INJECTION_H

#include <stdbool.h>

#include "ltx2/ltx2.h"
#include "pipeline/denoise.h"

/* video_context [1, S, dv] and audio_context [1, S, da] (a leading 1 may be dropped) into pos, and
 * with need_neg negative_video_context / negative_audio_context (the same S) into neg. */
ltx2_status ltx2_inject_contexts(ltx2_context *ctx, const char *path, int64_t dv, int64_t da, bool need_neg,
                                 ltx2_pipe_context *pos, ltx2_pipe_context *neg);

/* The longest schedule read: the sampler's own step bound. */
#define LTX2_INJECT_MAX_SIGMAS 1001

/* The sigmas of stage `stage` (1 or 2): "sigmas" or "stage_1_sigmas" (or a lone .npy, whatever
 * its name) for stage 1, "stage_2_sigmas" for stage 2 (the names --dump gives them). *out (malloc'd, steps + 1
 * values) is NULL when the file has none for a stage 2 (it keeps its own); stage 1's must be there.
 * Refused: not 1-D, fewer than 2 values, a value outside [0, 1] or not finite, an increase, a zero
 * before the last value. */
ltx2_status ltx2_inject_sigmas(ltx2_context *ctx, const char *path, int stage, float **out, int *steps);

#endif
