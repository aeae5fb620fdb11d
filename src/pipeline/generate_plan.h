/* The memory plan a generation makes before any work (generate.c calls it; memory_plan.h prices it). */
#ifndef LTX2_PIPELINE_GENERATE_PLAN_H
#define LTX2_PIPELINE_GENERATE_PLAN_H

#include "ltx2/ltx2.h"
#include "pipeline/generate_dist.h"
#include "pipeline/guidance.h"

/* On a backend with device memory to plan: the plan from the checkpoint's configs (nothing else
 * read), logged, and a run that cannot fit refused with the options (memory_plan.h). A rank of a
 * multi-rank run plans what it holds (its DiT shards, its share of each call) against its device. */
ltx2_status ltx2_gen_plan_memory(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                                 const ltx2_guidance_plan *plan, const ltx2_generate_dist *dist);

#endif
