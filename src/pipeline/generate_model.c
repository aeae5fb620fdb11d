/* The public model handle (ltx2.h: ltx2_model_load, ltx2_generate_model): the pipeline's models
 * and their backend, loaded once and handed to every generation. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "pipeline/pipeline.h"

struct ltx2_model {
    char *checkpoint;
    const ltx2_backend *be;
    ltx2_pipe_models m;
};

void ltx2_model_free(ltx2_model *model) {
    if (!model) return;
    ltx2_pipe_models_free(&model->m);
    ltx2_backend_free(model->be);
    free(model->checkpoint);
    free(model);
}

ltx2_status ltx2_model_load(ltx2_context *ctx, const char *checkpoint, const char *device, ltx2_model **out) {
    if (!checkpoint || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "model load: NULL checkpoint or output");
    *out = NULL;
    ltx2_model *model = calloc(1, sizeof *model);
    const size_t n = strlen(checkpoint) + 1;
    if (model) model->checkpoint = malloc(n);
    if (!model || !model->checkpoint) {
        free(model);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %s", checkpoint);
    }
    memcpy(model->checkpoint, checkpoint, n);
    char desc[256];
    ltx2_status st = ltx2_backend_open(ctx, device, &model->be, desc, sizeof desc);
    if (st == LTX2_OK) {
        LTX2_LOGI(ctx, "model: device %s", desc);
        st = ltx2_pipe_models_load(ctx, checkpoint, model->be, &model->m);
    }
    if (st != LTX2_OK) {
        ltx2_model_free(model);
        return st;
    }
    *out = model;
    return LTX2_OK;
}

ltx2_status ltx2_generate_model(ltx2_context *ctx, ltx2_model *model, const ltx2_generate_params *p,
                                ltx2_generate_result *result) {
    if (!model || !p || !result)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL model, params or result");
    if (p->n_checkpoint_files > 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: the parameters name split checkpoint files, the "
                          "model was loaded from %s (leave them NULL)", model->checkpoint);
    if (p->checkpoint && strcmp(p->checkpoint, model->checkpoint) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "generate: the parameters name checkpoint %s, the model was loaded from %s (leave it NULL)",
                          p->checkpoint, model->checkpoint);
    ltx2_generate_params q = *p;
    q.checkpoint = model->checkpoint;
    q.checkpoint_files = NULL;
    q.n_checkpoint_files = 0;
    return ltx2_generate_with_models(ctx, &q, model->be, &model->m, result);
}
