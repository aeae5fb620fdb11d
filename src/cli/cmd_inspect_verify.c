/* `ltx2 inspect --verify PATH`: loads what `ltx2 generate` would load from PATH, every tensor read,
 * converted and checked (names, shapes, dtypes against the config, NaN and infinity), the DiT and
 * connectors onto the planning backend (backend_plan.h), which holds no memory: so a 19B DiT is
 * verified with the host memory of its largest tensor (the VAEs and the vocoder, small, load as
 * generate loads them), and "will load" means the loaders themselves passed. A
 * Gemma-3 directory is verified as the text encoder (its tokenizer too, when there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_plan.h"
#include "cli/cli.h"
#include "core/timer.h"
#include "io/file.h"
#include "model/gemma.h"
#include "pipeline/pipeline.h"
#include "text/gemma_tokenizer.h"

/* A directory with a Gemma-3 config.json. */
static bool is_gemma_dir(ltx2_context *ctx, const char *path) {
    if (!ltx2_path_is_dir(path)) return false;
    ltx2_context *quiet = ltx2_context_create(NULL);
    ltx2_gemma_config c;
    const bool yes = ltx2_gemma_config_load(quiet ? quiet : ctx, path, &c) == LTX2_OK;
    ltx2_context_free(quiet);
    return yes;
}

static ltx2_status verify_gemma(ltx2_context *ctx, const ltx2_backend *plan, const char *dir) {
    ltx2_gemma_weights *w = NULL;
    LTX2_TRY(ltx2_gemma_weights_load_on(ctx, plan, LTX2_BF16, dir, &w));
    printf("verify:     Gemma-3 text encoder: %lld layers of %lld, %lld/%lld heads x %lld, vocabulary %lld: ok\n",
           (long long)w->cfg.layers, (long long)w->cfg.hidden, (long long)w->cfg.heads, (long long)w->cfg.kv_heads,
           (long long)w->cfg.head_dim, (long long)w->cfg.vocab);
    const int64_t vocab = w->cfg.vocab;
    ltx2_gemma_weights_free(w);
    char *tp = ltx2_path_join(dir, "tokenizer.model");
    ltx2_status st = LTX2_OK;
    if (tp && ltx2_path_is_file(tp)) {
        ltx2_gemma_tokenizer *tok = NULL;
        st = ltx2_gemma_tokenizer_load(ctx, tp, &tok);
        if (st == LTX2_OK && tok->vocab > vocab)
            st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s has %lld pieces, more than the %lld embeddings", tp,
                            (long long)tok->vocab, (long long)vocab);
        if (st == LTX2_OK) printf("verify:     tokenizer %s: %lld pieces: ok\n", tp, (long long)tok->vocab);
        ltx2_gemma_tokenizer_free(tok);
    } else {
        printf("verify:     no tokenizer.model beside the weights (text prompts need it)\n");
    }
    free(tp);
    return st;
}

int cli_inspect_verify(ltx2_context *ctx, const char *path) {
    ltx2_backend *plan = NULL;
    if (ltx2_backend_plan_create(ctx, &plan) != LTX2_OK) {
        cli_report_error("inspect", ctx);
        return CLI_EXIT_RUNTIME;
    }
    const double t0 = ltx2_timer_now();
    ltx2_status st;
    if (is_gemma_dir(ctx, path)) {
        st = verify_gemma(ctx, plan, path);
    } else {
        ltx2_pipe_models m;
        st = ltx2_pipe_models_load(ctx, path, plan, &m);
        if (st == LTX2_OK) {
            printf("verify:     LTX-%s: DiT, text connectors, video VAE decoder, audio VAE decoder, vocoder: ok\n",
                   m.is_2_3 ? "2.3" : "2.0");
            ltx2_pipe_models_free(&m);
        }
    }
    ltx2_backend_free(plan);
    if (st != LTX2_OK) {
        printf("verify:     will not load: %s\n", ltx2_last_error(ctx));
        return cli_exit_for(st);
    }
    printf("verify:     will load (every tensor read and checked in %.1f s)\n", ltx2_timer_now() - t0);
    return CLI_EXIT_OK;
}
