/* The public model handle (ltx2.h: ltx2_model_load, ltx2_model_load_parallel, ltx2_generate_model):
 * the pipeline's models and their backend, loaded once and handed to every generation; or, over
 * several ranks, the rank threads that each hold theirs (pipeline/model_ranks.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "pipeline/generate_dist.h"
#include "pipeline/generate_stages.h"
#include "pipeline/model_ranks.h"
#include "pipeline/pipeline.h"

struct ltx2_model {
    char **paths; /* the checkpoint: one file or directory, or split component files */
    int n_paths;
    const ltx2_backend *be;
    ltx2_pipe_models m;
    const char *weights_dtype; /* "bf16", "fp8" or "fp8-cast": how the DiT's Linears were loaded */
    ltx2_model_ranks *ranks;   /* over several ranks: they hold the models (be and m unused) */
};

void ltx2_model_free(ltx2_model *model) {
    if (!model) return;
    ltx2_model_ranks_free(model->ranks);
    ltx2_pipe_models_free(&model->m);
    ltx2_backend_free(model->be);
    for (int i = 0; i < model->n_paths; i++) free(model->paths[i]);
    free(model->paths);
    free(model);
}

ltx2_status ltx2_model_load_files(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  ltx2_model **out) {
    return ltx2_model_load_dtype(ctx, paths, n, device, NULL, out);
}

/* The handle's record (paths copied, weights dtype read), nothing loaded yet. */
static ltx2_status model_new(ltx2_context *ctx, const char *const *paths, int n, const char *weights_dtype,
                             ltx2_model **out) {
    if (!paths || n < 1 || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "model load: no checkpoint or output");
    *out = NULL;
    const char *wdt = ltx2_gen_weights_dtype(weights_dtype);
    if (!wdt)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "model load: weights dtype \"%s\": use bf16, fp8 or fp8-cast",
                          weights_dtype);
    for (int i = 0; i < n; i++)
        if (!paths[i]) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "model load: checkpoint path %d is NULL", i);
    ltx2_model *model = calloc(1, sizeof *model);
    if (model) model->paths = calloc((size_t)n, sizeof *model->paths);
    if (!model || !model->paths) {
        free(model);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %s", paths[0]);
    }
    model->n_paths = n;
    model->weights_dtype = wdt;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(paths[i]) + 1;
        model->paths[i] = malloc(len);
        if (!model->paths[i]) {
            ltx2_model_free(model);
            return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %s", paths[i]);
        }
        memcpy(model->paths[i], paths[i], len);
    }
    *out = model;
    return LTX2_OK;
}

ltx2_status ltx2_model_load_dtype(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  const char *weights_dtype, ltx2_model **out) {
    ltx2_model *model = NULL;
    LTX2_TRY(model_new(ctx, paths, n, weights_dtype, &model));
    const char *wdt = model->weights_dtype;
    char desc[256];
    ltx2_status st = ltx2_backend_open(ctx, device, &model->be, desc, sizeof desc);
    if (st == LTX2_OK) {
        LTX2_LOGI(ctx, "model: device %s, DiT weights %s", desc, wdt);
        if (!strcmp(wdt, "fp8")) /* the fp8 loader refuses a device without fp8 GEMMs before reading */
            st = ltx2_pipe_models_load_fp8(ctx, paths, n, model->be, NULL, &model->m);
        else if (!strcmp(wdt, "fp8-cast"))
            st = ltx2_pipe_models_load_fp8_cast(ctx, paths, n, model->be, &model->m);
        else
            st = ltx2_pipe_models_load_lora(ctx, paths, n, model->be, NULL, &model->m);
    }
    if (st != LTX2_OK) {
        ltx2_model_free(model);
        return st;
    }
    *out = model;
    return LTX2_OK;
}

ltx2_status ltx2_model_load_parallel(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                     const char *weights_dtype, const ltx2_parallel_params *pp, ltx2_model **out) {
    if (out) *out = NULL;
    if (!pp) return ltx2_model_load_dtype(ctx, paths, n, device, weights_dtype, out);
    ltx2_generate_parallel_opts o;
    LTX2_TRY(ltx2_generate_parallel_opts_from(ctx, pp, "", &o));
    if (ltx2_mesh_world_size(&o.mesh) == 1) return ltx2_model_load_dtype(ctx, paths, n, device, weights_dtype, out);
    ltx2_model *model = NULL;
    LTX2_TRY(model_new(ctx, paths, n, weights_dtype, &model));
    LTX2_LOGI(ctx, "model: DiT weights %s over %d ranks", model->weights_dtype, ltx2_mesh_world_size(&o.mesh));
    const ltx2_status st = ltx2_model_ranks_load(ctx, (const char *const *)model->paths, n, device,
                                                 model->weights_dtype, &o, &model->ranks);
    if (st != LTX2_OK) {
        ltx2_model_free(model);
        return st;
    }
    *out = model;
    return LTX2_OK;
}

ltx2_status ltx2_model_load(ltx2_context *ctx, const char *checkpoint, const char *device, ltx2_model **out) {
    if (!checkpoint) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "model load: NULL checkpoint");
    return ltx2_model_load_files(ctx, &checkpoint, 1, device, out);
}

/* Whether the parameters' checkpoint (path or split files, either may be unset) is the model's. */
static bool names_model(const ltx2_model *model, const ltx2_generate_params *p) {
    if (p->n_checkpoint_files > 0) {
        if (p->n_checkpoint_files != model->n_paths || p->checkpoint) return false;
        for (int i = 0; i < model->n_paths; i++)
            if (!p->checkpoint_files[i] || strcmp(p->checkpoint_files[i], model->paths[i]) != 0) return false;
        return true;
    }
    return !p->checkpoint || (model->n_paths == 1 && strcmp(p->checkpoint, model->paths[0]) == 0);
}

ltx2_status ltx2_generate_model(ltx2_context *ctx, ltx2_model *model, const ltx2_generate_params *p,
                                ltx2_generate_result *result) {
    if (!model || !p || !result)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL model, params or result");
    if (!names_model(model, p))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "generate: the parameters name checkpoint %s, the model was loaded from %s%s (leave the "
                          "checkpoint NULL)",
                          p->n_checkpoint_files > 0 ? p->checkpoint_files[0] : p->checkpoint, model->paths[0],
                          model->n_paths > 1 ? " and other split files" : "");
    const char *asked = ltx2_gen_weights_dtype(p->weights_dtype);
    if (p->weights_dtype && asked != model->weights_dtype)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "generate: weights dtype %s, but the model's DiT was loaded with %s weights (leave it NULL, "
                          "or load the model with ltx2_model_load_dtype)",
                          p->weights_dtype, model->weights_dtype);
    ltx2_generate_params q = *p;
    q.weights_dtype = model->weights_dtype;
    q.checkpoint = model->n_paths == 1 ? model->paths[0] : NULL;
    q.checkpoint_files = model->n_paths > 1 ? (const char *const *)model->paths : NULL;
    q.n_checkpoint_files = model->n_paths > 1 ? model->n_paths : 0;
    if (model->ranks) {
        /* refused here, before the ranks are involved: a call they all fail would cost a reload */
        memset(result, 0, sizeof *result);
        LTX2_TRY(ltx2_generate_check_params(ctx, &q, true, ltx2_model_ranks_count(model->ranks)));
        return ltx2_model_ranks_generate(ctx, model->ranks, &q, result);
    }
    return ltx2_generate_with_models(ctx, &q, model->be, &model->m, result);
}
