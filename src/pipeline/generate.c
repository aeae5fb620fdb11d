/* ltx2_generate: prompt hidden states -> connectors (once) -> initial noise -> sigma schedule ->
 * Euler loop with CFG / STG / modality guidance (passes laid out in model calls as the semantics
 * say) -> video VAE decode (optionally tiled) and audio VAE + vocoder. Follows ltx-pipelines
 * 1.0.0 TI2VidOneStagePipeline.__call__ (see PARITY.md, "End-to-end generation"). The same code
 * runs one rank of a multi-rank job (ltx2_generate_ranked, generate_dist.h): sharded DiT, spread
 * VAE decode, everything else replicated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/context.h"
#include "core/finite.h"
#include "core/timer.h"
#include "io/file.h"
#include "io/npy.h"
#include "pipeline/memory_plan.h"
#include "pipeline/vae_parallel.h"
#include "pipeline/generate_dist.h"
#include "pipeline/guidance.h"
#include "backend/backend.h"
#include "pipeline/pipeline.h"
#include "pipeline/scheduler.h"
#include "pipeline/semantics.h"
#include "pipeline/tiling.h"
#include "model/gemma.h"
#include "text/gemma_tokenizer.h"

/* ltx-pipelines constants.py LTX_2_PARAMS (num_inference_steps 40) / LTX_2_3_PARAMS (30). */
#define GEN_DEFAULT_STEPS_2_0 40
#define GEN_DEFAULT_STEPS_2_3 30
/* Tile overlaps used when tiled decoding is asked for: the smallest legal ones (one VAE factor)
 * below a tile of two factors, else ltx-core's usual 64 px / 24 frames. */
#define GEN_TILE_OVERLAP_PX 64
#define GEN_TILE_OVERLAP_FRAMES 24

void ltx2_generate_params_init(ltx2_generate_params *p) {
    memset(p, 0, sizeof *p);
    p->seed = 10; /* ltx-pipelines PipelineParams.seed */
    p->steps = 0; /* 0: the version's default */
    p->height = 512;
    p->width = 768;
    p->frames = 121;
    p->fps = 24.0;
    p->video_cfg = 3.0;
    p->video_stg = 1.0;
    p->video_rescale = 0.7;
    p->video_modality = 3.0;
    p->audio_cfg = 7.0;
    p->audio_stg = 1.0;
    p->audio_rescale = 0.7;
    p->audio_modality = 3.0;
    p->stg_block = -1;
    p->semantics = LTX2_GENERATE_SEM_LTX_CORE;
    p->latent_bf16 = -1;
    p->decode_video = 1;
    p->decode_audio = 1;
}

void ltx2_generate_result_free(ltx2_generate_result *r) {
    if (!r) return;
    free(r->video);
    free(r->audio);
    free(r->video_latent);
    free(r->audio_latent);
    memset(r, 0, sizeof *r);
}

/* One encoded prompt: the DiT contexts for both streams. */
typedef struct gen_context {
    float *video, *audio;
    int64_t S;
} gen_context;

/* The text connectors on loaded prompt embeddings t. */
static ltx2_status encode_prompt(ltx2_context *ctx, const ltx2_pipe_models *m, const char *path,
                                 const ltx2_pipe_text *t, gen_context *out) {
    const int64_t dv = m->conn->cfg.video.inner_dim, da = m->conn->cfg.audio.inner_dim;
    out->S = t->S;
    out->video = malloc((size_t)(t->S * dv) * sizeof(float));
    out->audio = malloc((size_t)(t->S * da) * sizeof(float));
    uint8_t *mask = malloc((size_t)t->S);
    ltx2_status st = LTX2_OK;
    if (!out->video || !out->audio || !mask) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt %s: out of memory", path);
    } else {
        ltx2_text_hidden in = {t->hidden, t->mask, 1, t->S, t->D, t->L};
        st = ltx2_connectors_forward(ctx, m->conn, &in, NULL, NULL, out->video, out->audio, mask);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "text connectors on %s", path);
    }
    if (st == LTX2_OK) {
        const int64_t sv[2] = {t->S, dv}, sa[2] = {t->S, da};
        st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, out->video, 2, sv, "text connectors on %s: the video context "
                               "[token, channel]", path);
        if (st == LTX2_OK)
            st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, out->audio, 2, sa, "text connectors on %s: the audio "
                                   "context [token, channel]", path);
    }
    free(mask);
    return st;
}

/* The prompt (and, with CFG, the negative prompt or Lightricks' default) through Gemma-3 in one
 * batch, on p->text_encoder_device (the CPU by default). */
static ltx2_status text_from_prompts(ltx2_context *ctx, const ltx2_generate_params *p, bool need_neg,
                                     ltx2_pipe_text *tp, ltx2_pipe_text *tn) {
    /* the encoder's width x hidden states against the checkpoint's text projection, from the
     * headers alone, before anything is run */
    ltx2_gemma_config gc;
    ltx2_connectors_config cc;
    ltx2_st_set *set = NULL;
    int64_t text_dim = 0;
    LTX2_TRY(ltx2_gemma_config_load(ctx, p->text_encoder, &gc));
    ltx2_status st = ltx2_st_set_open(ctx, p->checkpoint, &set);
    if (st == LTX2_OK) st = ltx2_connectors_config_from_st(ctx, set->files[0], &cc);
    if (st == LTX2_OK) st = ltx2_connectors_text_dim(ctx, set->files[0], &cc, &text_dim);
    ltx2_st_set_close(set);
    LTX2_TRY(st);
    if (gc.hidden * (gc.layers + 1) != text_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "the text encoder %s gives %lld hidden states of %lld (%lld wide) but the checkpoint's text "
                          "projection takes %lld: not the Gemma-3 this model was trained with",
                          p->text_encoder, (long long)(gc.layers + 1), (long long)gc.hidden,
                          (long long)(gc.hidden * (gc.layers + 1)), (long long)text_dim);
    const char *prompts[2] = {p->prompt, p->negative_prompt ? p->negative_prompt : LTX2_PIPE_DEFAULT_NEGATIVE_PROMPT};
    if (need_neg && !p->negative_prompt) LTX2_LOGI(ctx, "generate: CFG is on: Lightricks' default negative prompt");
    ltx2_pipe_text out[2];
    const ltx2_backend *tbe = NULL;
    char desc[256];
    LTX2_TRY(ltx2_backend_open(ctx, p->text_encoder_device ? p->text_encoder_device : "cpu", &tbe, desc, sizeof desc));
    LTX2_LOGI(ctx, "text encoder device: %s", desc);
    size_t free_b = 0, total_b = 0;
    if (tbe->mem_info && (st = tbe->mem_info(tbe, ctx, &free_b, &total_b)) == LTX2_OK) {
        /* Gemma is alone on the device (loaded first, freed before the DiT): its weights and one
         * forward's buffers, plus the runtime's share */
        const uint64_t need = ltx2_gemma_device_bytes(&gc, need_neg ? 2 : 1, LTX2_GEMMA_MAX_TOKENS) +
                              LTX2_MEM_RUNTIME_BYTES;
        LTX2_LOGI(ctx, "text encoder memory: %.2f GiB needed, %.2f GiB free", (double)need / (1 << 30),
                  (double)free_b / (1 << 30));
        if (need > free_b)
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM,
                            "the text encoder needs %.2f GiB on %s but %.2f GiB are free: use --text-encoder-device cpu",
                            (double)need / (1 << 30), desc, (double)free_b / (1 << 30));
    }
    if (st != LTX2_OK) {
        ltx2_backend_free(tbe);
        return st;
    }
    st = ltx2_pipe_text_encode(ctx, p->text_encoder, tbe, prompts, need_neg ? 2 : 1, p->text_cache, p->cancel,
                               p->cancel_user, out);
    ltx2_backend_free(tbe);
    LTX2_TRY(st);
    *tp = out[0];
    if (need_neg) *tn = out[1];
    return LTX2_OK;
}

/* The caller's cancel callback, polled between stages and steps. */
static ltx2_status check_cancel(ltx2_context *ctx, const ltx2_generate_params *p, const char *where, int step) {
    if (!p->cancel || !p->cancel(p->cancel_user)) return LTX2_OK;
    if (step > 0) return LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "generate: cancelled before denoising step %d", step);
    return LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "generate: cancelled before %s", where);
}

/* The state shared by the denoising loop's model calls. */
typedef struct gen_loop {
    const ltx2_pipe_models *m;
    const ltx2_pipe_geometry *g;
    const ltx2_guidance_plan *plan;
    const gen_context *pos, *neg;
    const float *vpos, *apos;   /* positions of one sample */
    int64_t stg_block;
    ltx2_dit_av_timestep av_timestep; /* the semantics' cross-modal timestep rule */
    bool stg_blend_every_block, rope_ladder_f32; /* the semantics' other model rules */
    ltx2_dit_text_cache *text_cache;  /* text K/V reused across passes and steps */
    ltx2_dit_parallel *dp;            /* multi-rank runs: the sharded DiT (NULL: one rank) */
    struct dit_dump *dit_dump;        /* --dump: the DiT's intermediates of the first model call */
    float *v_video[LTX2_PASS_COUNT], *v_audio[LTX2_PASS_COUNT]; /* per-pass velocities */
} gen_loop;

/* The DiT's named intermediates (reference module paths, e.g. transformer_blocks.0.attn1.out) of
 * the first model call, as DIR/dit/<name>.npy, so `ltx2 compare REF DIR/dit` lines them up with a
 * PyTorch forward-hook dump. Only the first call: every later one would overwrite the same names. */
typedef struct dit_dump {
    ltx2_context *ctx;
    char dir[4096];
    ltx2_status st;
    bool done;
} dit_dump;

static void dit_dump_npy(const char *name, const ltx2_tensor *t, void *user) {
    dit_dump *d = user;
    if (d->st != LTX2_OK) return;
    char path[4352];
    snprintf(path, sizeof path, "%s/%s.npy", d->dir, name);
    d->st = ltx2_npy_write(d->ctx, path, t);
}

static void *xmalloc_f(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

/* Runs the slots[0..nb) of one model call as one DiT batch. */
static ltx2_status run_call(ltx2_context *ctx, gen_loop *L, const int *slots, int nb, const float *xv,
                            const float *xa, float sigma) {
    const ltx2_dit_config *dc = &L->m->dit->cfg;
    const ltx2_pipe_geometry *g = L->g;
    const int64_t Tv = g->video_tokens, Ta = g->at, Cv = g->lc, Ca = g->audio_feat;
    const int64_t dv = L->m->conn->cfg.video.inner_dim, da = L->m->conn->cfg.audio.inner_dim;
    const int64_t S = L->pos->S, nl = dc->num_layers;
    ltx2_status st = LTX2_OK;
    float *vl = xmalloc_f(nb * Tv * Cv), *al = xmalloc_f(nb * Ta * Ca);
    float *vp = xmalloc_f(nb * 3 * Tv * 2), *ap = xmalloc_f(nb * Ta * 2);
    float *vt = xmalloc_f(nb * Tv), *at = xmalloc_f(nb * Ta), *sg = xmalloc_f(nb);
    float *vc = xmalloc_f(nb * S * dv), *ac = xmalloc_f(nb * S * da);
    float *vo = xmalloc_f(nb * Tv * Cv), *ao = xmalloc_f(nb * Ta * Ca);
    uint32_t *pert = calloc((size_t)(nb * nl), sizeof(uint32_t));
    if (!vl || !al || !vp || !ap || !vt || !at || !sg || !vc || !ac || !vo || !ao || !pert) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "denoise: out of memory for a batch of %d", nb);
        goto done;
    }
    bool any_pert = false;
    for (int b = 0; b < nb; b++) {
        const ltx2_guidance_pass pass = L->plan->order[slots[b]];
        const gen_context *c = pass == LTX2_PASS_UNCOND ? L->neg : L->pos;
        memcpy(vl + b * Tv * Cv, xv, (size_t)(Tv * Cv) * sizeof(float));
        memcpy(al + b * Ta * Ca, xa, (size_t)(Ta * Ca) * sizeof(float));
        memcpy(vp + b * 3 * Tv * 2, L->vpos, (size_t)(3 * Tv * 2) * sizeof(float));
        memcpy(ap + b * Ta * 2, L->apos, (size_t)(Ta * 2) * sizeof(float));
        for (int64_t t = 0; t < Tv; t++) vt[b * Tv + t] = sigma; /* denoise mask 1 x sigma */
        for (int64_t t = 0; t < Ta; t++) at[b * Ta + t] = sigma;
        sg[b] = sigma;
        memcpy(vc + b * S * dv, c->video, (size_t)(S * dv) * sizeof(float));
        memcpy(ac + b * S * da, c->audio, (size_t)(S * da) * sizeof(float));
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
    ltx2_dit_forward_params fp;
    ltx2_dit_forward_params_init(&fp);
    fp.batch = nb;
    /* ltx-pipelines modality_from_latent_state passes context_mask=None (the connectors' registers
     * leave no padding). */
    fp.video = (ltx2_dit_modality){vl, vp, vt, sg, vc, NULL, Tv, S};
    fp.audio = (ltx2_dit_modality){al, ap, at, sg, ac, NULL, Ta, S};
    fp.perturb = any_pert ? pert : NULL;
    fp.av_timestep = L->av_timestep;
    fp.text_cache = L->text_cache;
    fp.stg_blend_every_block = L->stg_blend_every_block;
    fp.rope_ladder_f32 = L->rope_ladder_f32;
    dit_dump *dd = L->dit_dump && !L->dit_dump->done ? L->dit_dump : NULL;
    if (dd) {
        fp.dump = dit_dump_npy;
        fp.dump_user = dd;
    }
    st = L->dp ? ltx2_dit_parallel_forward(ctx, L->dp, &fp, vo, ao) : ltx2_dit_forward(ctx, L->m->dit, &fp, vo, ao);
    if (st != LTX2_OK) goto done;
    if (dd) {
        dd->done = true;
        if ((st = dd->st) != LTX2_OK) goto done;
    }
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

typedef struct gen_frames {
    float *video;
    int64_t frame_floats, height;
} gen_frames;

static ltx2_status collect_frames(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first, void *user) {
    gen_frames *gf = user;
    memcpy(gf->video + first * gf->frame_floats, frames->data,
           (size_t)(frames->shape[1] * gf->frame_floats) * sizeof(float));
    return LTX2_OK;
}

/* Blocks (B = 1) straight into the video: no frame-sized staging buffer in the tiler. */
static ltx2_status collect_block(ltx2_context *ctx, const ltx2_tensor *blk, const ltx2_vae_block_pos *pos,
                                 void *user) {
    (void)ctx;
    gen_frames *gf = user;
    const int64_t n = blk->shape[1], rows = blk->shape[2], row_floats = blk->shape[3] * blk->shape[4];
    const int64_t frame_row_floats = gf->frame_floats / gf->height;
    for (int64_t f = 0; f < n; f++)
        for (int64_t y = 0; y < rows; y++)
            memcpy(gf->video + (pos->first_frame + f) * gf->frame_floats + (pos->first_row + y) * frame_row_floats +
                       pos->first_col * blk->shape[4],
                   (const float *)blk->data + (f * rows + y) * row_floats, (size_t)row_floats * sizeof(float));
    return LTX2_OK;
}

static ltx2_status check_params(ltx2_context *ctx, const ltx2_generate_params *p) {
    if (!p->checkpoint) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: no checkpoint given");
    if (!p->prompt_embeds && !p->prompt)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: give a prompt or prompt embeddings");
    if (p->prompt && (p->prompt_embeds || p->negative_prompt_embeds))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a text prompt and prompt embeddings are exclusive");
    if (p->negative_prompt && !p->prompt)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a negative text prompt needs a text prompt");
    if (p->prompt && !p->text_encoder)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a text prompt needs the Gemma-3 text encoder directory");
    const char *texts[2] = {p->prompt, p->negative_prompt};
    for (int i = 0; i < 2; i++) {
        const size_t n = texts[i] ? strlen(texts[i]) : 0, bad = texts[i] ? ltx2_utf8_invalid_at(texts[i], n) : 0;
        if (bad != n)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: the %s is not valid UTF-8 (byte %zu of %zu)",
                              i ? "negative prompt" : "prompt", bad, n);
    }
    if (p->prompt) {
        size_t b, e;
        ltx2_text_strip(p->prompt, strlen(p->prompt), &b, &e);
        if (b == e)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "generate: the prompt is empty (or only whitespace): nothing to condition on");
    }
    if (p->steps < 0 || p->steps == 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: steps must be >= 2 (the stretched schedule needs two), got %d",
                          p->steps);
    const double sc[8] = {p->video_cfg, p->video_stg, p->video_rescale, p->video_modality,
                          p->audio_cfg, p->audio_stg, p->audio_rescale, p->audio_modality};
    for (int i = 0; i < 8; i++)
        if (!isfinite(sc[i])) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: guidance scales must be finite");
    if ((int)p->semantics < 0 || (int)p->semantics >= (int)LTX2_SEM_COUNT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: unknown semantics %d", (int)p->semantics);
    if (p->vae_tile_px < 0 || p->vae_tile_frames < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: tile sizes must be >= 0");
    return LTX2_OK;
}

/* The samples the largest model call of a step batches. */
static int64_t max_call_batch(const ltx2_guidance_plan *plan) {
    int64_t best = 1;
    for (int c = 0; c < plan->n_calls; c++) {
        int64_t nb = 0;
        for (int s = 0; s < plan->n_passes; s++) nb += plan->call_of[s] == c;
        if (nb > best) best = nb;
    }
    return best;
}

/* On a backend with device memory to plan: the plan from the checkpoint's configs (nothing else
 * read), logged, and a run that cannot fit refused with the options (memory_plan.h). */
static ltx2_status plan_memory(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                               const ltx2_guidance_plan *plan) {
    if (!be->mem_info) return LTX2_OK;
    size_t free_b = 0, total_b = 0;
    LTX2_TRY(be->mem_info(be, ctx, &free_b, &total_b));
    ltx2_st_set *set = NULL;
    LTX2_TRY(ltx2_st_set_open(ctx, p->checkpoint, &set));
    const ltx2_st_file *f = set->files[0];
    ltx2_dit_config dcfg;
    ltx2_connectors_config ccfg;
    ltx2_vae_config vcfg;
    ltx2_audio_vae_config acfg;
    ltx2_vocoder_config vocfg;
    ltx2_status st = ltx2_dit_config_from_st(ctx, f, &dcfg);
    if (st == LTX2_OK) st = ltx2_connectors_config_from_st(ctx, f, &ccfg);
    if (st == LTX2_OK) st = ltx2_vae_config_from_file(ctx, f, &vcfg);
    if (st == LTX2_OK) st = ltx2_audio_vae_config_from_file(ctx, f, &acfg);
    if (st == LTX2_OK) st = ltx2_vocoder_config_from_file(ctx, f, &vocfg);
    int64_t text_dim = 0;
    if (st == LTX2_OK) st = ltx2_connectors_text_dim(ctx, f, &ccfg, &text_dim);
    const ltx2_mem_request req = {.dit = &dcfg, .conn = &ccfg, .vae = &vcfg, .audio = &acfg, .vocoder = &vocfg,
                                  .frames = p->frames,
                                  .height = p->height, .width = p->width, .fps = p->fps,
                                  .batch = max_call_batch(plan), .text_tokens = LTX2_PIPE_TEXT_TOKENS, .text_dim = text_dim,
                                  .text_cache_entries = LTX2_PIPE_TEXT_CACHE_ENTRIES, .vae_tile_px = p->vae_tile_px,
                                  .vae_tile_frames = p->vae_tile_frames, .free_bytes = free_b};
    ltx2_mem_plan mp;
    if (st == LTX2_OK) st = ltx2_mem_plan_make(ctx, &req, &mp);
    if (st == LTX2_OK) {
        char text[LTX2_MEM_PLAN_TEXT_CAP];
        ltx2_mem_plan_format(&mp, text, sizeof text, "");
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) LTX2_LOGI(ctx, "%s", line);
        st = ltx2_mem_plan_check(ctx, &req, &mp);
    }
    ltx2_st_set_close(set);
    return st;
}

static ltx2_status generate(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                            ltx2_pipe_models *m, const ltx2_generate_dist *dist, ltx2_generate_result *r) {
    const double t0 = ltx2_timer_now();
    ltx2_status st = LTX2_OK;
    gen_context pos = {0}, neg = {0};
    ltx2_pipe_text tp = {0}, tn = {0};
    gen_loop L;
    memset(&L, 0, sizeof L);
    float *xv = NULL, *xa = NULL, *vpos = NULL, *apos = NULL, *sigmas = NULL, *gv = NULL, *ga = NULL;
    float *alat = NULL, *mel = NULL, *wav = NULL;
    const bool rank0 = !dist || dist->world->rank == 0;
    const char *dump = rank0 ? p->dump_dir : NULL;
    char name[64];

    /* the guidance plan (how many passes each model call batches) and, on a device, the memory
     * plan: refusals before anything is loaded */
    ltx2_sem_rules rules = ltx2_sem_rules_for((ltx2_semantics)p->semantics);
    if (p->latent_bf16 >= 0) rules.latent_bf16 = p->latent_bf16 != 0;
    ltx2_guidance_params gp;
    gp.video = (ltx2_guidance_scales){p->video_cfg, p->video_stg, p->video_rescale, p->video_modality, 0};
    ltx2_guidance_scales audio_in = {p->audio_cfg, p->audio_stg, p->audio_rescale, p->audio_modality, 0};
    LTX2_TRY(ltx2_guidance_resolve_audio(ctx, &rules, &gp.video, &audio_in, &gp.audio));
    ltx2_guidance_plan plan;
    LTX2_TRY(ltx2_guidance_plan_make(ctx, &rules, &gp, &plan));
    /* models a handle keeps loaded are resident already: the device's free memory no longer counts
     * them, so the plan (weights + stage peaks against what is free) would count them twice */
    const bool preloaded = m->set != NULL;
    if (!dist && !preloaded) LTX2_TRY(plan_memory(ctx, p, be, &plan));
    const bool need_neg = ltx2_guidance_plan_slot(&plan, LTX2_PASS_UNCOND) >= 0;

    /* a text prompt: Gemma runs, and is freed, before any other model is loaded (never two
     * resident); the hidden states wait in host memory */
    double text_seconds = 0;
    LTX2_TRY(check_cancel(ctx, p, "the text stage", 0));
    if (p->prompt) {
        const double t_enc = ltx2_timer_now();
        LTX2_TRY(text_from_prompts(ctx, p, need_neg, &tp, &tn));
        text_seconds = ltx2_timer_now() - t_enc;
    }

    /* ranks read only their shards of the DiT's layers from the file (no whole copy anywhere) */
    if (!preloaded && (st = dist ? ltx2_pipe_models_load_dit_replicated(ctx, p->checkpoint, m)
                                 : ltx2_pipe_models_load(ctx, p->checkpoint, be, m)) != LTX2_OK)
        goto done;
    r->model_version = m->is_2_3 ? "2.3" : "2.0";
    const double t_load = ltx2_timer_now();
    r->timings.load = t_load - t0 - text_seconds;
    if (dist && (st = ltx2_dit_parallel_create_sharded(ctx, dist->world, m->dit, m->set->files[0], NULL, &dist->dit,
                                                       &L.dp)) != LTX2_OK)
        goto done;

    /* ---- geometry, rules, guidance plan: everything that can refuse, before any compute ---- */
    ltx2_pipe_geometry g;
    const ltx2_video_decoder *vd = m->vdec;
    if ((st = ltx2_pipe_geometry_make(ctx, p->frames, p->height, p->width, p->fps, vd->time_factor, vd->space_factor,
                                      vd->cfg.latent_channels, m->adec->cfg.z_channels, m->dit->cfg.audio_in_channels,
                                      &g)) != LTX2_OK)
        goto done;
    if (g.lc != m->dit->cfg.in_channels) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "the VAE has %lld latent channels but the DiT takes %lld",
                        (long long)g.lc, (long long)m->dit->cfg.in_channels);
        goto done;
    }
    if (need_neg && !p->negative_prompt_embeds && !p->prompt) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "CFG (video %g, audio %g) needs negative prompt embeddings; give them "
                        "or set both CFG scales to 1", gp.video.cfg, gp.audio.cfg);
        goto done;
    }
    const int64_t nl = m->dit->cfg.num_layers;
    int64_t stg_block = p->stg_block;
    if (stg_block < 0) {
        stg_block = m->is_2_3 ? LTX2_PIPE_STG_BLOCK_2_3 : LTX2_PIPE_STG_BLOCK_2_0;
        if (stg_block >= nl) stg_block = nl - 1;
    } else if (stg_block >= nl) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "STG block %lld out of range: the DiT has %lld blocks",
                        (long long)stg_block, (long long)nl);
        goto done;
    }
    const int steps = p->steps ? p->steps : (m->is_2_3 ? GEN_DEFAULT_STEPS_2_3 : GEN_DEFAULT_STEPS_2_0);
    ltx2_vae_tiling tiling = {0};
    const bool tiled = p->vae_tile_px > 0 || p->vae_tile_frames > 0;
    const int64_t lat_shape[5] = {1, g.lf, g.lh, g.lw, g.lc};
    if (tiled) {
        tiling.tile_px = p->vae_tile_px;
        tiling.overlap_px = p->vae_tile_px > GEN_TILE_OVERLAP_PX ? GEN_TILE_OVERLAP_PX : vd->space_factor;
        tiling.tile_frames = p->vae_tile_frames;
        tiling.overlap_frames = p->vae_tile_frames > GEN_TILE_OVERLAP_FRAMES ? GEN_TILE_OVERLAP_FRAMES : vd->time_factor;
        if (!p->vae_tile_px) tiling.overlap_px = 0;
        if (!p->vae_tile_frames) tiling.overlap_frames = 0;
        tiling.tile_batch = 1;
        if ((st = ltx2_vae_tiled_decode_plan(ctx, vd, lat_shape, &tiling, NULL)) != LTX2_OK) goto done;
    }
    LTX2_LOGI(ctx, "generate: LTX-%s, %dx%dx%d @ %g fps -> video latent %lldx%lldx%lldx%lld, audio latent %lldx%lldx%lld, "
              "%d steps, %d model calls/step, semantics %s, seed %llu", r->model_version, p->width, p->height, p->frames,
              p->fps, (long long)g.lf, (long long)g.lh, (long long)g.lw, (long long)g.lc, (long long)g.az,
              (long long)g.at, (long long)g.afreq, steps, plan.n_calls, ltx2_sem_name(rules.base),
              (unsigned long long)p->seed);

    /* ---- text: computed once, reused by every step; prompts of different lengths are left-padded
     * with masked tokens to the longer one (as the tokenizer pads a batch) ---- */
    {
        if (!p->prompt) {
            st = ltx2_pipe_text_load(ctx, p->prompt_embeds, m->conn->text_dim, &tp);
            if (st == LTX2_OK && need_neg)
                st = ltx2_pipe_text_load(ctx, p->negative_prompt_embeds, m->conn->text_dim, &tn);
        }
        if (st == LTX2_OK && p->save_prompt_embeds) st = ltx2_pipe_text_save(ctx, &tp, p->save_prompt_embeds);
        if (st == LTX2_OK && need_neg && tp.S != tn.S) {
            const int64_t S = tp.S > tn.S ? tp.S : tn.S;
            ltx2_log(ctx, LTX2_LOG_INFO, "generate: positive prompt %lld tokens, negative %lld: the shorter is "
                     "left-padded with masked tokens to %lld", (long long)tp.S, (long long)tn.S, (long long)S);
            st = ltx2_pipe_text_pad_left(ctx, &tp, S);
            if (st == LTX2_OK) st = ltx2_pipe_text_pad_left(ctx, &tn, S);
        }
        if (st == LTX2_OK) st = encode_prompt(ctx, m, p->prompt ? "the prompt" : p->prompt_embeds, &tp, &pos);
        if (st == LTX2_OK && need_neg)
            st = encode_prompt(ctx, m, p->prompt ? "the negative prompt" : p->negative_prompt_embeds, &tn, &neg);
        ltx2_pipe_text_free(&tp);
        ltx2_pipe_text_free(&tn);
        if (st != LTX2_OK) goto done;
    }

    {
        const int64_t sv[3] = {1, pos.S, m->conn->cfg.video.inner_dim}, sa[3] = {1, pos.S, m->conn->cfg.audio.inner_dim};
        if ((st = ltx2_pipe_dump(ctx, dump, "video_context", pos.video, 3, sv)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "audio_context", pos.audio, 3, sa)) != LTX2_OK) goto done;
    }
    const double t_text = ltx2_timer_now();
    r->timings.text = t_text - t_load + text_seconds;

    /* ---- initial state ---- */
    const int64_t nv = g.video_tokens * g.lc, na = g.at * g.audio_feat;
    xv = xmalloc_f(nv);
    xa = xmalloc_f(na);
    gv = xmalloc_f(nv);
    ga = xmalloc_f(na);
    vpos = xmalloc_f(3 * g.video_tokens * 2);
    apos = xmalloc_f(g.at * 2);
    sigmas = xmalloc_f(steps + 1);
    if (!xv || !xa || !gv || !ga || !vpos || !apos || !sigmas) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the latents");
        goto done;
    }
    for (int ps = 0; ps < LTX2_PASS_COUNT; ps++) {
        if (ltx2_guidance_plan_slot(&plan, (ltx2_guidance_pass)ps) < 0) continue;
        L.v_video[ps] = xmalloc_f(nv);
        L.v_audio[ps] = xmalloc_f(na);
        if (!L.v_video[ps] || !L.v_audio[ps]) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the guidance passes");
            goto done;
        }
    }
    if (p->noise) {
        if ((st = ltx2_pipe_noise_load(ctx, p->noise, &g, xv, xa)) != LTX2_OK) goto done;
    } else {
        ltx2_pipe_noise_philox(&g, p->seed, xv, xa);
    }
    /* GaussianNoiser: noise * 1 + zeros * 0, cast to the pipeline dtype. */
    ltx2_sched_round_latent(&rules, xv, nv);
    ltx2_sched_round_latent(&rules, xa, na);
    ltx2_pipe_video_positions(&g, vd->time_factor, vd->space_factor, p->fps, rules.latent_bf16, vpos);
    ltx2_pipe_audio_positions(&g, apos);
    ltx2_sched_params sp = ltx2_sched_params_default(steps, g.video_tokens);
    if ((st = ltx2_sched_sigmas(ctx, &rules, &sp, sigmas)) != LTX2_OK) goto done;
    {
        const int64_t s1[2] = {g.video_tokens, g.lc}, s2[2] = {g.at, g.audio_feat}, s3[1] = {steps + 1};
        const int64_t s4[4] = {1, 3, g.video_tokens, 2}, s5[4] = {1, 1, g.at, 2};
        if ((st = ltx2_pipe_dump(ctx, dump, "noise_video", xv, 2, s1)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "noise_audio", xa, 2, s2)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "sigmas", sigmas, 1, s3)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "video_positions", vpos, 4, s4)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "audio_positions", apos, 4, s5)) != LTX2_OK) goto done;
    }
    const double t_noise = ltx2_timer_now();
    r->timings.noise = t_noise - t_text;

    /* ---- denoising loop ---- */
    L.m = m;
    L.g = &g;
    L.plan = &plan;
    L.pos = &pos;
    L.neg = need_neg ? &neg : NULL;
    L.vpos = vpos;
    L.apos = apos;
    L.stg_block = stg_block;
    L.av_timestep = ltx2_sem_dit_av_timestep(&rules, m->dit->cfg.cross_attention_adaln);
    L.stg_blend_every_block = rules.dit_stg_blend_every_block;
    L.rope_ladder_f32 = rules.dit_rope_ladder_f32;
    if ((st = ltx2_dit_text_cache_create(ctx, LTX2_PIPE_TEXT_CACHE_ENTRIES, &L.text_cache)) != LTX2_OK) goto done;
    dit_dump ddump = {.ctx = ctx};
    if (dump && !L.dp) { /* the sharded DiT has no dump hook */
        int n = snprintf(ddump.dir, sizeof ddump.dir, "%s/dit", dump);
        if (n < 0 || (size_t)n >= sizeof ddump.dir) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: --dump path too long: %s", dump);
            goto done;
        }
        if (mkdir(ddump.dir, 0777) != 0 && !ltx2_path_is_dir(ddump.dir)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "generate: cannot create %s for the DiT dump", ddump.dir);
            goto done;
        }
        L.dit_dump = &ddump;
    }
    for (int i = 0; i < steps; i++) {
        if ((st = check_cancel(ctx, p, NULL, i + 1)) != LTX2_OK) goto done;
        const float sigma = sigmas[i], sigma_grid = ltx2_sched_grid_sigma(&rules, steps, i);
        if ((st = run_step(ctx, &L, xv, xa, sigma)) != LTX2_OK) goto done;
        const float *const *vv = (const float *const *)L.v_video, *const *va = (const float *const *)L.v_audio;
        if ((st = ltx2_guidance_apply(ctx, &rules, &plan, &gp.video, &gp.video, xv, vv, 1, nv, sigma, sigma_grid, gv,
                                      NULL)) != LTX2_OK)
            goto done;
        if ((st = ltx2_guidance_apply(ctx, &rules, &plan, &gp.audio, &gp.video, xa, va, 1, na, sigma, sigma_grid, ga,
                                      NULL)) != LTX2_OK)
            goto done;
        ltx2_sched_euler_step(&rules, xv, gv, sigma, sigmas[i + 1], nv);
        ltx2_sched_euler_step(&rules, xa, ga, sigma, sigmas[i + 1], na);
        /* a NaN stops the run where it appears, not as black frames at the end */
        {
            const int64_t s1[2] = {g.video_tokens, g.lc}, s2[2] = {g.at, g.audio_feat};
            if ((st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, xv, 2, s1, "denoising step %d/%d (sigma %g): the video "
                                        "latent [token, channel]", i + 1, steps, (double)sigma)) != LTX2_OK ||
                (st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, xa, 2, s2, "denoising step %d/%d (sigma %g): the audio "
                                        "latent [token, feature]", i + 1, steps, (double)sigma)) != LTX2_OK)
                goto done;
        }
        if (dump) {
            const int64_t s1[2] = {g.video_tokens, g.lc}, s2[2] = {g.at, g.audio_feat};
            snprintf(name, sizeof name, "step_%03d_video", i);
            if ((st = ltx2_pipe_dump(ctx, dump, name, xv, 2, s1)) != LTX2_OK) goto done;
            snprintf(name, sizeof name, "step_%03d_audio", i);
            if ((st = ltx2_pipe_dump(ctx, dump, name, xa, 2, s2)) != LTX2_OK) goto done;
        }
        if (p->progress && rank0) p->progress(i + 1, steps, ltx2_timer_now() - t_noise, p->progress_user);
    }
    const double t_denoise = ltx2_timer_now();
    r->timings.denoise = t_denoise - t_noise;

    /* ---- outputs: latents (the video tokens are already NDHWC) ---- */
    r->seed = p->seed;
    r->steps = steps;
    r->fps = p->fps;
    memcpy(r->video_latent_shape, lat_shape, sizeof lat_shape);
    r->video_latent = xv;
    xv = NULL;
    alat = xmalloc_f(na);
    if (!alat) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory");
        goto done;
    }
    ltx2_pipe_audio_unpatchify(&g, xa, alat);
    const int64_t ashape[4] = {1, g.az, g.at, g.afreq};
    memcpy(r->audio_latent_shape, ashape, sizeof ashape);
    r->audio_latent = alat;
    alat = NULL;
    if ((st = ltx2_pipe_dump(ctx, dump, "video_latent", r->video_latent, 5, lat_shape)) != LTX2_OK) goto done;
    if ((st = ltx2_pipe_dump(ctx, dump, "audio_latent", r->audio_latent, 4, ashape)) != LTX2_OK) goto done;

    /* ---- video decode ---- */
    if ((p->decode_video || p->decode_audio) && (st = check_cancel(ctx, p, "decoding", 0)) != LTX2_OK) goto done;
    if (p->decode_video) {
        int64_t vshape[5];
        if ((st = ltx2_video_decoder_out_shape(ctx, vd, lat_shape, vshape)) != LTX2_OK) goto done;
        ltx2_tensor lt = ltx2_tensor_make(r->video_latent, LTX2_F32, 5, lat_shape);
        r->video = xmalloc_f(vshape[1] * vshape[2] * vshape[3] * vshape[4]);
        if (!r->video) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the video");
            goto done;
        }
        ltx2_tensor vt = ltx2_tensor_make(r->video, LTX2_F32, 5, vshape);
        if (dist) {
            gen_frames gf = {r->video, vshape[2] * vshape[3] * vshape[4], vshape[2]};
            st = ltx2_vae_parallel_decode_stream(ctx, dist->world, vd, &lt, tiled ? &tiling : NULL, LTX2_VAE_PAR_AUTO,
                                                 collect_frames, &gf, NULL);
        } else if (tiled) {
            gen_frames gf = {r->video, vshape[2] * vshape[3] * vshape[4], vshape[2]};
            st = ltx2_vae_tiled_decode_blocks(ctx, vd, &lt, &tiling, collect_block, &gf, NULL);
        } else {
            st = ltx2_video_decoder_decode(ctx, vd, &lt, &vt, NULL, NULL);
        }
        if (st == LTX2_OK)
            st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, r->video, 5, vshape,
                                   "video decode: the frames [1, frame, row, column, rgb]");
        if (st != LTX2_OK) goto done;
        r->frames = vshape[1];
        r->height = vshape[2];
        r->width = vshape[3];
        if ((st = ltx2_pipe_dump(ctx, dump, "video", r->video, 5, vshape)) != LTX2_OK) goto done;
    }
    const double t_vdec = ltx2_timer_now();
    r->timings.video_decode = t_vdec - t_denoise;

    /* ---- audio decode + vocoder ---- */
    if (p->decode_audio) {
        int64_t mshape[4], wshape[3];
        if ((st = ltx2_audio_decoder_out_shape(ctx, m->adec, ashape, mshape)) != LTX2_OK) goto done;
        if ((st = ltx2_vocoder_out_shape(ctx, m->voc, mshape, wshape)) != LTX2_OK) goto done;
        mel = xmalloc_f(mshape[0] * mshape[1] * mshape[2] * mshape[3]);
        wav = xmalloc_f(wshape[0] * wshape[1] * wshape[2]);
        if (!mel || !wav) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the audio");
            goto done;
        }
        ltx2_tensor lt = ltx2_tensor_make(r->audio_latent, LTX2_F32, 4, ashape);
        ltx2_tensor mt = ltx2_tensor_make(mel, LTX2_F32, 4, mshape);
        ltx2_tensor wt = ltx2_tensor_make(wav, LTX2_F32, 3, wshape);
        if ((st = ltx2_audio_decoder_decode(ctx, m->adec, &lt, &mt, NULL, NULL)) != LTX2_OK) goto done;
        if ((st = ltx2_vocoder_run(ctx, m->voc, &mt, &wt, NULL, NULL)) != LTX2_OK) goto done;
        if ((st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, wav, 3, wshape,
                                    "audio decode: the waveform [1, channel, sample]")) != LTX2_OK)
            goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "mel", mel, 4, mshape)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "waveform", wav, 3, wshape)) != LTX2_OK) goto done;
        r->audio = wav;
        wav = NULL;
        r->audio_channels = wshape[1];
        r->audio_samples = wshape[2];
        r->audio_rate = ltx2_vocoder_sample_rate(m->voc);
    }
    const double t_adec = ltx2_timer_now();
    r->timings.audio_decode = t_adec - t_vdec;
    r->timings.total = t_adec - t0;

done:
    ltx2_pipe_text_free(&tp);
    ltx2_pipe_text_free(&tn);
    ltx2_dit_text_cache_free(L.text_cache);
    ltx2_dit_parallel_free(L.dp);
    for (int ps = 0; ps < LTX2_PASS_COUNT; ps++) {
        free(L.v_video[ps]);
        free(L.v_audio[ps]);
    }
    free(pos.video); free(pos.audio); free(neg.video); free(neg.audio);
    free(xv); free(xa); free(gv); free(ga); free(vpos); free(apos); free(sigmas);
    free(alat); free(mel); free(wav);
    return st;
}

ltx2_status ltx2_generate_with_models(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                                      ltx2_pipe_models *m, ltx2_generate_result *result) {
    if (!p || !result || !be || !m)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params, backend, models or result");
    memset(result, 0, sizeof *result);
    LTX2_TRY(check_params(ctx, p));
    const ltx2_status st = generate(ctx, p, be, m, NULL, result);
    if (st != LTX2_OK) ltx2_generate_result_free(result);
    return st;
}

ltx2_status ltx2_generate_on(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                             ltx2_generate_result *result) {
    ltx2_pipe_models m;
    memset(&m, 0, sizeof m);
    const ltx2_status st = ltx2_generate_with_models(ctx, p, be, &m, result);
    ltx2_pipe_models_free(&m);
    return st;
}

ltx2_status ltx2_generate(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_generate_result *result) {
    if (!p || !result) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params or result");
    memset(result, 0, sizeof *result);
    LTX2_TRY(check_params(ctx, p));
    const ltx2_backend *be = NULL;
    char desc[256];
    LTX2_TRY(ltx2_backend_open(ctx, p->device, &be, desc, sizeof desc));
    LTX2_LOGI(ctx, "generate: device %s", desc);
    ltx2_status st = ltx2_generate_on(ctx, p, be, result);
    ltx2_backend_free(be);
    return st;
}

ltx2_status ltx2_generate_ranked(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_dist *dist,
                                 ltx2_generate_result *result) {
    if (!dist || !dist->world) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: no communicator given");
    ltx2_status st = LTX2_OK;
    if (!p || !result) st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params or result");
    if (st == LTX2_OK) {
        memset(result, 0, sizeof *result);
        st = check_params(ctx, p);
    }
    /* the ranks' DiT shards are host f32: several ranks compute on the CPU (auto picks it) */
    if (st == LTX2_OK && p->device && strcmp(p->device, "cpu") && strcmp(p->device, "auto"))
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                        "device %s: multi-rank generation computes on the CPU for now (each rank on its own GPU is "
                        "not written yet); use --device cpu or one rank",
                        p->device);
    if (st == LTX2_OK) {
        ltx2_pipe_models m;
        memset(&m, 0, sizeof m);
        st = generate(ctx, p, ltx2_backend_cpu(), &m, dist, result);
        ltx2_pipe_models_free(&m);
        if (st != LTX2_OK) ltx2_generate_result_free(result);
    }
    /* Whatever failed here (a load, a shape, a collective), the other ranks must not wait for us. */
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "rank %d of %d", dist->world->rank, dist->world->size);
        ltx2_comm_abort(dist->world, ltx2_last_error(ctx));
    }
    return st;
}
