/* A model handle over ranks (ltx2.h: ltx2_model_load_parallel): the ranks are threads of this
 * process on the loopback communicator, each holding its models and its DiT shards on its own
 * device for the handle's life, and all of them run each ltx2_generate_model call together
 * (pipeline/generate_dist.h: ltx2_generate_ranked_models). A call that fails on some rank aborts
 * the communicator: the handle then loads its ranks again on the next call (logged), so one bad
 * call does not leave the handle unusable. */
#ifndef LTX2_PIPELINE_MODEL_RANKS_H
#define LTX2_PIPELINE_MODEL_RANKS_H

#include "pipeline/generate_parallel.h"

typedef struct ltx2_model_ranks ltx2_model_ranks;

/* Starts o's ranks and loads paths[0..n) on each (device as ltx2_generate_params.device: rank r on
 * its own GPU; wdt "bf16", "fp8" or "fp8-cast"). paths are borrowed for a reload: they must outlive
 * the ranks (the handle's own copies). On failure nothing is left running. */
ltx2_status ltx2_model_ranks_load(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  const char *wdt, const ltx2_generate_parallel_opts *o, ltx2_model_ranks **out);
/* One generation on every rank (p already checked by the caller); *result gets rank 0's. Logs go
 * to ctx's log function. Calls on one handle must not overlap. */
ltx2_status ltx2_model_ranks_generate(ltx2_context *ctx, ltx2_model_ranks *t, const ltx2_generate_params *p,
                                      ltx2_generate_result *result);
/* The ranks' count. */
int ltx2_model_ranks_count(const ltx2_model_ranks *t);
void ltx2_model_ranks_free(ltx2_model_ranks *t);

#endif
