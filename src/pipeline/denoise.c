/* One denoising stage (denoise.h): the model calls of each step, the guidance combination, the
 * Euler update. Moved out of generate.c so that the pipelines with two stages run the same loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/context.h"
#include "core/finite.h"
#include "core/timer.h"
#include "io/file.h"
#include "io/npy.h"
#include "pipeline/denoise.h"
#include "pipeline/generate_stages.h"
#include "pipeline/scheduler.h"

/* The state of one stage's model calls. */
typedef struct gen_loop {
    const ltx2_pipe_models *m;
    const ltx2_pipe_geometry *g;
    const ltx2_guidance_plan *plan;
    const ltx2_pipe_context *pos, *neg;
    const float *vpos, *apos;   /* positions of one sample */
    const float *video_mask;    /* [Tv] denoise mask of conditioned tokens (NULL: all 1) */
    bool audio_held;            /* the audio is given: timestep 0, the positive context in every pass */
    int64_t stg_block;
    /* every call's fixed params: the semantics' model rules (ltx2_sem_dit_rules) and the precision */
    ltx2_dit_forward_params rules_fp;
    /* text K/V reused across passes and steps: per stage, since a stage's weights may differ
     * (the two-stage pipeline's LoRA) */
    ltx2_dit_text_cache *text_cache;
    ltx2_dit_rope_cache *rope_cache; /* the positions' RoPE tables, per stage like the text cache */
    ltx2_dit_act_pool *act_pool;      /* the calls' activation buffers, per stage (freed before the decode) */
    ltx2_dit_parallel *dp;            /* multi-rank runs: the sharded DiT (NULL: one rank) */
    struct dit_dump *dit_dump;        /* --dump: the DiT's intermediates of one model call */
    int *model_calls;                 /* the run's model calls so far */
    float *v_video[LTX2_PASS_COUNT], *v_audio[LTX2_PASS_COUNT]; /* per-pass velocities */
} gen_loop;

/* The DiT's named intermediates (reference module paths, e.g. transformer_blocks.0.attn1.out) of
 * one model call (the run's call number `call`), as DIR/dit/<name>.npy, so `ltx2 compare REF
 * DIR/dit` lines them up with a PyTorch forward-hook dump. One call: every other one would
 * overwrite the same names. */
typedef struct dit_dump {
    ltx2_context *ctx;
    char dir[4096];
    ltx2_status st;
    int call;
} dit_dump;

/* Pass names in the per-step dumps (ltx2_guidance_pass order). */
static const char *const k_pass_names[LTX2_PASS_COUNT] = {"cond", "uncond", "ptb", "mod"};

static void dit_dump_npy(const char *name, const ltx2_tensor *t, void *user) {
    dit_dump *d = user;
    if (d->st != LTX2_OK) return;
    char path[4352];
    snprintf(path, sizeof path, "%s/%s.npy", d->dir, name);
    d->st = ltx2_npy_write(d->ctx, path, t);
}

/* Runs the slots[0..nb) of one model call as one DiT batch. */
static ltx2_status run_call(ltx2_context *ctx, gen_loop *L, const int *slots, int nb, const float *xv,
                            const float *xa, float sigma) {
    const ltx2_dit_config *dc = &L->m->dit->cfg;
    const ltx2_pipe_geometry *g = L->g;
    const int64_t Tv = g->video_tokens, Ta = g->at, Cv = g->lc, Ca = g->audio_feat;
    const int64_t dv = L->m->conn->cfg.video.inner_dim, da = L->m->conn->cfg.audio.inner_dim;
    const int64_t S = L->pos->S, nl = dc->num_layers;
    ltx2_status st = LTX2_OK;
    float *vl = ltx2_pipe_alloc_f(nb * Tv * Cv), *al = ltx2_pipe_alloc_f(nb * Ta * Ca);
    float *vp = ltx2_pipe_alloc_f(nb * 3 * Tv * 2), *ap = ltx2_pipe_alloc_f(nb * Ta * 2);
    float *vt = ltx2_pipe_alloc_f(nb * Tv), *at = ltx2_pipe_alloc_f(nb * Ta), *sg = ltx2_pipe_alloc_f(nb);
    float *vc = ltx2_pipe_alloc_f(nb * S * dv), *ac = ltx2_pipe_alloc_f(nb * S * da);
    float *vo = ltx2_pipe_alloc_f(nb * Tv * Cv), *ao = ltx2_pipe_alloc_f(nb * Ta * Ca);
    uint32_t *pert = calloc((size_t)(nb * nl), sizeof(uint32_t));
    if (!vl || !al || !vp || !ap || !vt || !at || !sg || !vc || !ac || !vo || !ao || !pert) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "denoise: out of memory for a batch of %d", nb);
        goto done;
    }
    bool any_pert = false;
    for (int b = 0; b < nb; b++) {
        const ltx2_guidance_pass pass = L->plan->order[slots[b]];
        const ltx2_pipe_context *c = pass == LTX2_PASS_UNCOND ? L->neg : L->pos;
        memcpy(vl + b * Tv * Cv, xv, (size_t)(Tv * Cv) * sizeof(float));
        memcpy(al + b * Ta * Ca, xa, (size_t)(Ta * Ca) * sizeof(float));
        memcpy(vp + b * 3 * Tv * 2, L->vpos, (size_t)(3 * Tv * 2) * sizeof(float));
        memcpy(ap + b * Ta * 2, L->apos, (size_t)(Ta * 2) * sizeof(float));
        /* timesteps_from_mask: denoise mask x sigma (1 x sigma for a free token) */
        for (int64_t t = 0; t < Tv; t++) vt[b * Tv + t] = L->video_mask ? L->video_mask[t] * sigma : sigma;
        for (int64_t t = 0; t < Ta; t++) at[b * Ta + t] = L->audio_held ? 0.0f : sigma;
        sg[b] = sigma;
        memcpy(vc + b * S * dv, c->video, (size_t)(S * dv) * sizeof(float));
        memcpy(ac + b * S * da, (L->audio_held ? L->pos : c)->audio, (size_t)(S * da) * sizeof(float));
        if (pass == LTX2_PASS_PTB) {
            uint32_t fl = (L->plan->stg_video ? LTX2_DIT_SKIP_VIDEO_SELF_ATTN : 0u) |
                          (L->plan->stg_audio ? LTX2_DIT_SKIP_AUDIO_SELF_ATTN : 0u);
            if ((st = ltx2_dit_perturb_set(ctx, pert, nl, b, fl, &L->stg_block, 1)) != LTX2_OK) goto done;
            any_pert = true;
        } else if (pass == LTX2_PASS_MOD) {
            if ((st = ltx2_dit_perturb_set(ctx, pert, nl, b, LTX2_DIT_SKIP_A2V_CROSS_ATTN | LTX2_DIT_SKIP_V2A_CROSS_ATTN,
                                           NULL, 0)) != LTX2_OK)
                goto done;
            any_pert = true;
        }
    }
    ltx2_dit_forward_params fp = L->rules_fp;
    fp.batch = nb;
    /* ltx-pipelines modality_from_latent_state passes context_mask=None (the connectors' registers
     * leave no padding). */
    fp.video = (ltx2_dit_modality){vl, vp, vt, sg, vc, NULL, Tv, S};
    fp.audio = (ltx2_dit_modality){al, ap, at, sg, ac, NULL, Ta, S};
    fp.perturb = any_pert ? pert : NULL;
    fp.text_cache = L->text_cache;
    fp.rope_cache = L->rope_cache;
    fp.act_pool = L->act_pool;
    dit_dump *dd = L->dit_dump && L->dit_dump->call == *L->model_calls ? L->dit_dump : NULL;
    ++*L->model_calls;
    if (dd) {
        fp.dump = dit_dump_npy;
        fp.dump_user = dd;
    }
    st = L->dp ? ltx2_dit_parallel_forward(ctx, L->dp, &fp, vo, ao) : ltx2_dit_forward(ctx, L->m->dit, &fp, vo, ao);
    if (st != LTX2_OK) goto done;
    if (dd && (st = dd->st) != LTX2_OK) goto done;
    for (int b = 0; b < nb; b++) {
        const ltx2_guidance_pass pass = L->plan->order[slots[b]];
        memcpy(L->v_video[pass], vo + b * Tv * Cv, (size_t)(Tv * Cv) * sizeof(float));
        memcpy(L->v_audio[pass], ao + b * Ta * Ca, (size_t)(Ta * Ca) * sizeof(float));
    }
done:
    free(vl); free(al); free(vp); free(ap); free(vt); free(at); free(sg);
    free(vc); free(ac); free(vo); free(ao); free(pert);
    return st;
}

/* All passes of one step: the plan's calls (the prompts have one length: see the text stage). */
static ltx2_status run_step(ltx2_context *ctx, gen_loop *L, const float *xv, const float *xa, float sigma) {
    if (L->neg && L->neg->S != L->pos->S)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "generate: prompt contexts of %lld and %lld tokens",
                          (long long)L->pos->S, (long long)L->neg->S);
    for (int c = 0; c < L->plan->n_calls; c++) {
        int slots[LTX2_PASS_COUNT], nb = 0;
        for (int s = 0; s < L->plan->n_passes; s++)
            if (L->plan->call_of[s] == c) slots[nb++] = s;
        if (nb) LTX2_TRY(run_call(ctx, L, slots, nb, xv, xa, sigma));
    }
    return LTX2_OK;
}


ltx2_status ltx2_denoise_check_cancel(ltx2_context *ctx, const ltx2_generate_params *p, const char *where, int step) {
    if (!p->cancel || !p->cancel(p->cancel_user)) return LTX2_OK;
    if (step > 0) return LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "generate: cancelled before denoising step %d", step);
    return LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "generate: cancelled before %s", where);
}

/* The stage's step loop on prepared state L (latents xv, xa in place). */
/* One step's guidance dumps: each pass's velocity, the guided velocity and x0 (audio: not when held). */
static ltx2_status dump_guidance(ltx2_context *ctx, const ltx2_denoise_stage *s, const gen_loop *L, int step,
                                 const float *gv, const float *ga, const float *x0v, const float *x0a) {
    const ltx2_pipe_geometry *g = s->g;
    const int64_t s1[2] = {g->video_tokens, g->lc}, s2[2] = {g->at, g->audio_feat};
    char name[128];
    for (int m = 0; m < 2; m++) {
        if (m == 1 && s->audio_held) break;
        const char *mod = m ? "audio" : "video";
        const int64_t *shape = m ? s2 : s1;
        for (int ps = 0; ps < LTX2_PASS_COUNT; ps++) {
            const float *v = m ? L->v_audio[ps] : L->v_video[ps];
            if (!v) continue;
            snprintf(name, sizeof name, "%sstep_%03d_pass_%s_%s", s->dump_prefix, step, k_pass_names[ps], mod);
            LTX2_TRY(ltx2_pipe_dump(ctx, s->dump_dir, name, v, 2, shape));
        }
        snprintf(name, sizeof name, "%sstep_%03d_guided_%s", s->dump_prefix, step, mod);
        LTX2_TRY(ltx2_pipe_dump(ctx, s->dump_dir, name, m ? ga : gv, 2, shape));
        snprintf(name, sizeof name, "%sstep_%03d_x0_%s", s->dump_prefix, step, mod);
        LTX2_TRY(ltx2_pipe_dump(ctx, s->dump_dir, name, m ? x0a : x0v, 2, shape));
    }
    return LTX2_OK;
}

static ltx2_status run_steps(ltx2_context *ctx, const ltx2_denoise_stage *s, const ltx2_generate_params *p,
                             bool report_progress, gen_loop *L, float *xv, float *xa, float *gv, float *ga,
                             float *x0v, float *x0a) {
    const ltx2_pipe_geometry *g = s->g;
    const int64_t nv = g->video_tokens * g->lc, na = g->at * g->audio_feat;
    const int64_t s1[2] = {g->video_tokens, g->lc}, s2[2] = {g->at, g->audio_feat};
    const ltx2_guidance_scales *sv = &s->gp->video, *sa = &s->gp->audio;
    char name[96];
    for (int i = 0; i < s->steps; i++) {
        const int step = s->steps_before + i + 1; /* 1-based over the whole run */
        LTX2_TRY(ltx2_denoise_check_cancel(ctx, p, NULL, step));
        const float sigma = s->sigmas[i], sigma_grid = ltx2_sched_grid_sigma(s->rules, s->steps, i);
        LTX2_TRY(run_step(ctx, L, xv, xa, sigma));
        const float *const *vv = (const float *const *)L->v_video, *const *va = (const float *const *)L->v_audio;
        if (s->video_mask)
            LTX2_TRY(ltx2_guidance_apply_masked(ctx, s->rules, sv, xv, vv, nv, s->g->lc, sigma, s->video_mask,
                                                s->video_clean, gv, x0v));
        else
            LTX2_TRY(ltx2_guidance_apply(ctx, s->rules, s->plan, sv, sv, xv, vv, 1, nv, sigma, sigma_grid, gv, x0v));
        /* a held audio latent: x0 = x (timestep 0) blended with itself by mask 0, velocity 0, so the
         * reference's update leaves it bit for bit; it is skipped */
        if (!s->audio_held)
            LTX2_TRY(ltx2_guidance_apply(ctx, s->rules, s->plan, sa, sv, xa, va, 1, na, sigma, sigma_grid, ga, x0a));
        if (s->dump_dir) LTX2_TRY(dump_guidance(ctx, s, L, i, gv, ga, x0v, x0a));
        ltx2_sched_euler_step(s->rules, xv, gv, sigma, s->sigmas[i + 1], nv);
        if (!s->audio_held) ltx2_sched_euler_step(s->rules, xa, ga, sigma, s->sigmas[i + 1], na);
        /* a NaN stops the run where it appears, not as black frames at the end */
        LTX2_TRY(ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, xv, 2, s1, "denoising step %d/%d (sigma %g): the video "
                                   "latent [token, channel]", step, s->steps_total, (double)sigma));
        LTX2_TRY(ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, xa, 2, s2, "denoising step %d/%d (sigma %g): the audio "
                                   "latent [token, feature]", step, s->steps_total, (double)sigma));
        if (s->dump_dir) {
            snprintf(name, sizeof name, "%sstep_%03d_video", s->dump_prefix, i);
            LTX2_TRY(ltx2_pipe_dump(ctx, s->dump_dir, name, xv, 2, s1));
            snprintf(name, sizeof name, "%sstep_%03d_audio", s->dump_prefix, i);
            LTX2_TRY(ltx2_pipe_dump(ctx, s->dump_dir, name, xa, 2, s2));
        }
        if (p->progress && report_progress)
            p->progress(step, s->steps_total, ltx2_timer_now() - s->t_start, p->progress_user);
    }
    return LTX2_OK;
}

ltx2_status ltx2_denoise_run(ltx2_context *ctx, const ltx2_denoise_stage *s, const ltx2_generate_params *p,
                             bool report_progress, float *xv, float *xa) {
    const ltx2_pipe_geometry *g = s->g;
    const int64_t nv = g->video_tokens * g->lc, na = g->at * g->audio_feat;
    gen_loop L;
    memset(&L, 0, sizeof L);
    L.m = s->m;
    L.g = g;
    L.plan = s->plan;
    L.pos = s->pos;
    L.neg = s->neg;
    L.vpos = s->vpos;
    L.apos = s->apos;
    L.video_mask = s->video_mask;
    L.audio_held = s->audio_held;
    L.stg_block = s->stg_block;
    ltx2_dit_forward_params_init(&L.rules_fp);
    ltx2_sem_dit_rules(s->rules, s->m->dit->cfg.cross_attention_adaln, &L.rules_fp);
    L.rules_fp.precision_tpu = p->precision == LTX2_GENERATE_PRECISION_TPU;
    L.rules_fp.attention_fp8 = ltx2_gen_attention_fp8(p);
    L.dp = s->dp;
    int calls_here = 0; /* a stage run on its own counts its own calls */
    L.model_calls = s->model_calls ? s->model_calls : &calls_here;
    float *gv = ltx2_pipe_alloc_f(nv), *ga = ltx2_pipe_alloc_f(na);
    /* the guided x0 is kept only to be dumped */
    float *x0v = s->dump_dir ? ltx2_pipe_alloc_f(nv) : NULL, *x0a = s->dump_dir ? ltx2_pipe_alloc_f(na) : NULL;
    ltx2_status st = LTX2_OK;
    if (!gv || !ga || (s->dump_dir && (!x0v || !x0a)))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the guided velocities");
    for (int ps = 0; st == LTX2_OK && ps < LTX2_PASS_COUNT; ps++) {
        if (ltx2_guidance_plan_slot(s->plan, (ltx2_guidance_pass)ps) < 0) continue;
        L.v_video[ps] = ltx2_pipe_alloc_f(nv);
        L.v_audio[ps] = ltx2_pipe_alloc_f(na);
        if (!L.v_video[ps] || !L.v_audio[ps])
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the guidance passes");
    }
    if (st == LTX2_OK) st = ltx2_dit_text_cache_create(ctx, LTX2_PIPE_TEXT_CACHE_ENTRIES, &L.text_cache);
    if (st == LTX2_OK) st = ltx2_dit_rope_cache_create(ctx, &L.rope_cache);
    if (st == LTX2_OK) st = ltx2_dit_act_pool_create(ctx, &L.act_pool);
    dit_dump ddump = {.ctx = ctx, .call = s->dump_call};
    /* the sharded DiT has no dump hook; a stage whose calls all lie before or after the one asked
     * for never writes, so the directory is made once by whichever stage holds it */
    const int first = *L.model_calls, last = first + s->steps * s->plan->n_calls;
    if (st == LTX2_OK && s->dump_dir && !s->dp && s->dump_call >= first && s->dump_call < last) {
        int n = snprintf(ddump.dir, sizeof ddump.dir, "%s/dit", s->dump_dir);
        if (n < 0 || (size_t)n >= sizeof ddump.dir)
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: --dump path too long: %s", s->dump_dir);
        else if (mkdir(ddump.dir, 0777) != 0 && !ltx2_path_is_dir(ddump.dir))
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "generate: cannot create %s for the DiT dump", ddump.dir);
        else
            L.dit_dump = &ddump;
    }
    if (st == LTX2_OK) st = run_steps(ctx, s, p, report_progress, &L, xv, xa, gv, ga, x0v, x0a);
    ltx2_dit_text_cache_free(L.text_cache);
    ltx2_dit_rope_cache_free(L.rope_cache);
    ltx2_dit_act_pool_free(L.act_pool);
    for (int ps = 0; ps < LTX2_PASS_COUNT; ps++) {
        free(L.v_video[ps]);
        free(L.v_audio[ps]);
    }
    free(gv);
    free(ga);
    free(x0v);
    free(x0a);
    return st;
}
