/* The memory plan's denoise stage (memory_plan.h ltx2_mem_plan_dit): the DiT's real forward run on
 * the planning backend (backend_plan.h), which counts the device bytes the code holds. One device
 * runs the single-rank forward with its text K/V cache; a rank of a multi-rank run is planned as it
 * runs, on a null communicator (the other ranks stand still): its shards laid out
 * (ltx2_dit_parallel_create_layout) and the parallel forward run, so the exchanges' device scratch
 * and the FSDP gathers are counted too. Each rank plans itself, against its own device. */
#include "pipeline/memory_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_plan.h"
#include "core/context.h"
#include "model/connectors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "pipeline/pipeline.h"

/* The two sigmas the DiT stage runs at (any two distinct values): LTX-2.3 keys its text K/V cache
 * by sigma, so the second call fills the cache as every later step does. */
#define PLAN_SIGMA_A 1.0f
#define PLAN_SIGMA_B 0.5f

int64_t ltx2_mem_plan_text_dim(const ltx2_mem_request *req) {
    return req->text_dim ? req->text_dim : LTX2_GEMMA_TEXT_DIM;
}

/* Host inputs of one planning call: zeros, each sample its own prompt (the cache keys on the
 * context bytes, as CFG's two prompts differ). */
typedef struct plan_inputs {
    float *vl, *al, *vp, *ap, *vt, *at, *sg, *vc, *ac, *vo, *ao;
    int64_t B, Tv, Ta, S;
} plan_inputs;

static void plan_inputs_free(plan_inputs *d) {
    free(d->vl), free(d->al), free(d->vp), free(d->ap), free(d->vt), free(d->at), free(d->sg);
    free(d->vc), free(d->ac), free(d->vo), free(d->ao);
}

static float *zeros(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static ltx2_status plan_inputs_make(ltx2_context *ctx, const ltx2_mem_request *req, const ltx2_dit_config *cfg,
                                    int64_t Tv, int64_t Ta, plan_inputs *d) {
    const int64_t B = req->batch, S = req->text_tokens, Cv = cfg->in_channels, Ca = cfg->audio_in_channels;
    const int64_t dv = req->conn->video.inner_dim, da = req->conn->audio.inner_dim;
    *d = (plan_inputs){.B = B, .Tv = Tv, .Ta = Ta, .S = S};
    d->vl = zeros(B * Tv * Cv), d->al = zeros(B * Ta * Ca), d->vp = zeros(B * 3 * Tv * 2), d->ap = zeros(B * Ta * 2);
    d->vt = zeros(B * Tv), d->at = zeros(B * Ta), d->sg = zeros(B), d->vc = zeros(B * S * dv);
    d->ac = zeros(B * S * da), d->vo = zeros(B * Tv * Cv), d->ao = zeros(B * Ta * Ca);
    if (!d->vl || !d->al || !d->vp || !d->ap || !d->vt || !d->at || !d->sg || !d->vc || !d->ac || !d->vo || !d->ao)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "memory plan: DiT inputs for %lld samples", (long long)B);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t i = 0; i < S * dv; i++) d->vc[b * S * dv + i] = (float)b;
        for (int64_t i = 0; i < S * da; i++) d->ac[b * S * da + i] = (float)b;
    }
    return LTX2_OK;
}

/* The forward's params at one sigma. */
static void plan_inputs_at(plan_inputs *d, float sigma, ltx2_dit_forward_params *fp) {
    for (int64_t i = 0; i < d->B * d->Tv; i++) d->vt[i] = sigma;
    for (int64_t i = 0; i < d->B * d->Ta; i++) d->at[i] = sigma;
    for (int64_t b = 0; b < d->B; b++) d->sg[b] = sigma;
    ltx2_dit_forward_params_init(fp);
    fp->batch = d->B;
    fp->video = (ltx2_dit_modality){d->vl, d->vp, d->vt, d->sg, d->vc, NULL, d->Tv, d->S};
    fp->audio = (ltx2_dit_modality){d->al, d->ap, d->at, d->sg, d->ac, NULL, d->Ta, d->S};
}

/* What one device (or rank) holds. */
typedef struct plan_counts {
    uint64_t weights, stage, text;
} plan_counts;

/* On a fresh planning backend: the connectors, the DiT weights (whole, or this rank's of world),
 * then two calls. */
static ltx2_status plan_on(ltx2_context *ctx, const ltx2_mem_request *req, int64_t Tv, int64_t Ta, ltx2_comm *world,
                           plan_counts *out) {
    ltx2_backend *pb = NULL;
    LTX2_TRY(ltx2_backend_plan_create(ctx, &pb));
    ltx2_dit_weights *w = NULL;
    ltx2_dit_parallel *dp = NULL;
    ltx2_connectors_weights *cw = NULL;
    ltx2_dit_text_cache *cache = NULL;
    ltx2_dit_rope_cache *rope = NULL; /* as the denoising loop keeps one: its tables stay between calls */
    /* as the loop keeps one too: the second call runs beside the first one's buffers */
    ltx2_dit_act_pool *act = NULL;
    plan_inputs d = {0};
    size_t cur = 0, peak = 0;
    ltx2_status st = ltx2_connectors_weights_layout_on(ctx, pb, LTX2_BF16, req->conn, ltx2_mem_plan_text_dim(req), &cw);
    if (st == LTX2_OK) {
        ltx2_backend_plan_counts(pb, &cur, NULL);
        out->text = cur;
        if (world) {
            ltx2_dit_parallel_opts o;
            if (req->dit_par) o = *req->dit_par;
            else ltx2_dit_parallel_opts_init(&o);
            o.on_block = NULL; /* the run's hooks (fault injection, cancellation) are not the plan's */
            st = ltx2_dit_weights_layout_replicated_on(ctx, pb, LTX2_BF16, req->dit, &w);
            if (st == LTX2_OK) st = ltx2_dit_parallel_create_layout(ctx, world, w, req->dit_fp8_file, &o, &dp);
        } else {
            st = req->dit_fp8_file ? ltx2_dit_weights_layout_fp8(ctx, pb, LTX2_BF16, req->dit, req->dit_fp8_file, &w)
                                   : ltx2_dit_weights_layout_on(ctx, pb, LTX2_BF16, req->dit, &w);
        }
    }
    if (st == LTX2_OK) {
        ltx2_backend_plan_counts(pb, &cur, NULL);
        out->weights = cur - out->text;
        ltx2_backend_plan_reset_peak(pb);
        /* the parallel forward keeps no text cache (a rank's K/V are its own shards) */
        if (!world) st = ltx2_dit_text_cache_create(ctx, req->text_cache_entries, &cache);
        if (st == LTX2_OK) st = ltx2_dit_rope_cache_create(ctx, &rope);
        if (st == LTX2_OK) st = ltx2_dit_act_pool_create(ctx, &act);
    }
    if (st == LTX2_OK) st = plan_inputs_make(ctx, req, &w->cfg, Tv, Ta, &d);
    const float sigmas[2] = {PLAN_SIGMA_A, PLAN_SIGMA_B};
    for (int k = 0; k < 2 && st == LTX2_OK; k++) {
        ltx2_dit_forward_params fp;
        plan_inputs_at(&d, sigmas[k], &fp);
        fp.text_cache = cache;
        fp.rope_cache = rope;
        fp.act_pool = act;
        fp.attention_fp8 = req->attention_fp8;
        st = dp ? ltx2_dit_parallel_forward(ctx, dp, &fp, d.vo, d.ao) : ltx2_dit_forward(ctx, w, &fp, d.vo, d.ao);
    }
    if (st == LTX2_OK) {
        ltx2_backend_plan_counts(pb, &cur, &peak);
        out->stage = peak - out->weights - out->text;
    }
    plan_inputs_free(&d);
    ltx2_dit_text_cache_free(cache);
    ltx2_dit_rope_cache_free(rope);
    ltx2_dit_act_pool_free(act);
    ltx2_dit_parallel_free(dp);
    ltx2_dit_weights_free(w);
    ltx2_connectors_weights_free(cw);
    ltx2_backend_free(pb);
    return st;
}

ltx2_status ltx2_mem_plan_dit(ltx2_context *ctx, const ltx2_mem_request *req, int64_t video_tokens,
                              int64_t audio_tokens, uint64_t *weights, uint64_t *stage, uint64_t *text_weights) {
    plan_counts c = {0};
    ltx2_comm *world = NULL; /* a multi-rank run: this rank alone, nothing moving */
    ltx2_status st = LTX2_OK;
    if (req->mesh && ltx2_mesh_world_size(req->mesh) > 1) st = ltx2_comm_null(ctx, req->mesh, req->rank, &world);
    if (st == LTX2_OK) st = plan_on(ctx, req, video_tokens, audio_tokens, world, &c);
    ltx2_comm_free(world);
    if (st != LTX2_OK) return ltx2_error_prefix(ctx, "memory plan: the DiT forward on the planning backend");
    *weights = c.weights;
    *stage = c.stage;
    *text_weights = c.text;
    return LTX2_OK;
}
