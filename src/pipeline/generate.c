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

#include "core/context.h"
#include "core/finite.h"
#include "core/timer.h"
#include "io/file.h"
#include "io/npy.h"
#include "pipeline/audio_cond.h"
#include "pipeline/denoise.h"
#include "pipeline/generate_stages.h"
#include "pipeline/generate_text.h"
#include "pipeline/injection.h"
#include "pipeline/memory_plan.h"
#include "pipeline/vae_parallel.h"
#include "pipeline/generate_dist.h"
#include "pipeline/generate_plan.h"
#include "pipeline/guidance.h"
#include "backend/backend.h"
#include "pipeline/pipeline.h"
#include "pipeline/scheduler.h"
#include "pipeline/semantics.h"
#include "pipeline/tiling.h"
#include "pipeline/video_cond.h"
#include "model/audio_encoder.h"
#include "model/ckpt_source.h"
#include "model/lora.h"
#include "model/upsampler.h"
#include "text/gemma_tokenizer.h"

/* ltx-pipelines constants.py LTX_2_PARAMS (num_inference_steps 40) / LTX_2_3_PARAMS (30). */
#define GEN_DEFAULT_STEPS_2_0 40
#define GEN_DEFAULT_STEPS_2_3 30
/* ltx_pipelines/utils/constants.py DISTILLED_SIGMA_VALUES and STAGE_2_DISTILLED_SIGMA_VALUES
 * (scheduler.h ltx2_sched_distilled holds the values). */
#define GEN_DISTILLED_STEPS_1 8
#define GEN_DISTILLED_STEPS_2 3
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
    p->enhance_seed = LTX2_ENHANCE_SEED;
    p->enhance_max_tokens = LTX2_ENHANCE_MAX_NEW_TOKENS;
    p->text_cache_max_bytes = LTX2_TEXT_CACHE_MAX_BYTES;
}

void ltx2_generate_result_free(ltx2_generate_result *r) {
    if (!r) return;
    free(r->video);
    free(r->audio);
    free(r->video_latent);
    free(r->audio_latent);
    free(r->enhanced_prompt);
    memset(r, 0, sizeof *r);
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

static const char *pipeline_name(ltx2_generate_pipeline pl) {
    return pl == LTX2_PIPELINE_DISTILLED ? "distilled" : pl == LTX2_PIPELINE_TWO_STAGE ? "two-stage" : "one-stage";
}

/* Refusals that depend on how the call runs: models loaded once take no LoRA (the two-stage pipeline
 * fuses the distilled one), and MaxDiffusion's bf16 precision runs on one rank. */
static ltx2_status check_loaded(ltx2_context *ctx, const ltx2_generate_params *p) {
    if (p->n_loras > 0 || p->pipeline == LTX2_PIPELINE_TWO_STAGE)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: LoRAs are fused into the DiT as it loads: not with "
                          "models loaded once (ltx2_model)");
    return LTX2_OK;
}

static ltx2_status check_ranks(ltx2_context *ctx, const ltx2_generate_params *p, int ranks) {
    if (p->precision == LTX2_GENERATE_PRECISION_TPU && ranks > 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: precision tpu (MaxDiffusion's bf16 DiT) runs on one rank, "
                          "not %d", ranks);
    return LTX2_OK;
}

static ltx2_status check_params(ltx2_context *ctx, const ltx2_generate_params *p) {
    if (!p->checkpoint && p->n_checkpoint_files <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: no checkpoint given");
    if (p->checkpoint && p->n_checkpoint_files > 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: give checkpoint or checkpoint_files, not both");
    if (p->n_checkpoint_files > 0 && !p->checkpoint_files)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: n_checkpoint_files is %d but checkpoint_files is NULL",
                          p->n_checkpoint_files);
    if (!p->prompt_embeds && !p->prompt && !p->context)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: give a prompt, prompt embeddings or contexts");
    if (p->context && (p->prompt || p->prompt_embeds || p->negative_prompt_embeds))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: injected contexts replace the prompt and its "
                          "embeddings: give one of them");
    if (p->context && p->save_prompt_embeds)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: with injected contexts there are no prompt embeddings to "
                          "save");
    if (p->dump_call < 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: dump call %d < 0", p->dump_call);
    if (p->prompt && (p->prompt_embeds || p->negative_prompt_embeds))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a text prompt and prompt embeddings are exclusive");
    if (p->negative_prompt && !p->prompt)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a negative text prompt needs a text prompt");
    if (p->prompt && !p->text_encoder)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a text prompt needs the Gemma-3 text encoder directory");
    if (p->enhance_prompt && (!p->prompt || p->enhance_max_tokens < 1))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: --enhance-prompt %s",
                          !p->prompt ? "rewrites a text prompt: give one" : "needs a token budget >= 1");
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
    if ((unsigned)p->precision > (unsigned)LTX2_GENERATE_PRECISION_TPU)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: unknown precision %d", (int)p->precision);
    if (p->precision == LTX2_GENERATE_PRECISION_TPU) {
        const char *why = p->semantics != LTX2_GENERATE_SEM_MAXDIFFUSION ? "MaxDiffusion's semantics (--semantics maxdiffusion)"
                          : p->pipeline != LTX2_PIPELINE_ONE_STAGE ? "the one-stage pipeline, MaxDiffusion's"
                          : p->n_loras > 0 ? "no LoRA (MaxDiffusion casts fused weights to bf16; not reproduced yet)"
                          : p->weights_dtype && strcmp(p->weights_dtype, "bf16") ? "bf16 weights, as MaxDiffusion's TPU configs"
                          : NULL;
        if (why) return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: precision tpu (MaxDiffusion's bf16 DiT) needs %s", why);
    }
    if (p->vae_tile_px < 0 || p->vae_tile_frames < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: tile sizes must be >= 0");
    if ((int)p->pipeline < 0 || (int)p->pipeline >= (int)LTX2_PIPELINE_COUNT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: unknown pipeline %d", (int)p->pipeline);
    if (p->n_images < 0 || (p->n_images && !p->images))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: %d images and no list", p->n_images);
    if (p->n_images && p->semantics != LTX2_GENERATE_SEM_LTX_CORE)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: image conditioning follows ltx-pipelines (--semantics "
                          "ltx-core)");
    if (p->audio && p->semantics != LTX2_GENERATE_SEM_LTX_CORE)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: audio conditioning follows ltx-pipelines (--semantics "
                          "ltx-core)");
    if (p->audio && (!isfinite(p->audio_start_time) || p->audio_start_time < 0 || !isfinite(p->audio_max_duration) ||
                     p->audio_max_duration < 0))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: audio start %g s and maximum duration %g s must be >= 0 "
                          "(duration 0: the clip's length)", p->audio_start_time, p->audio_max_duration);
    if (p->n_loras < 0 || (p->n_loras && !p->loras))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: %d LoRAs and no list", p->n_loras);
    if (!ltx2_gen_weights_dtype(p->weights_dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: weights dtype '%s': use bf16, fp8 or fp8-cast",
                          p->weights_dtype);
    if (p->attention_dtype && strcmp(p->attention_dtype, "bf16") && strcmp(p->attention_dtype, "fp8"))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: attention dtype '%s': use bf16 or fp8",
                          p->attention_dtype);
    if (ltx2_gen_attention_fp8(p) && p->precision == LTX2_GENERATE_PRECISION_TPU)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: fp8 attention with precision tpu: MaxDiffusion's bf16 "
                          "arithmetic has no e4m3 attention");
    if (p->text_cache_max_bytes < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text_cache_max_bytes is %lld (0: no bound)",
                          (long long)p->text_cache_max_bytes);
    if (p->text_encoder_dtype && strcmp(p->text_encoder_dtype, "bf16") && strcmp(p->text_encoder_dtype, "fp8"))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: text encoder dtype '%s': use bf16 or fp8",
                          p->text_encoder_dtype);
    if (ltx2_gen_fp8_cast(p) && (p->n_loras > 0 || p->pipeline == LTX2_PIPELINE_TWO_STAGE))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: fp8-cast weights with %s: ltx-core fuses LoRAs into "
                          "fp8-cast weights with stochastic rounding in a GPU kernel (fuse_loras.py, triton), which "
                          "nothing here reproduces; use bf16 or fp8 weights",
                          p->n_loras > 0 ? "LoRAs" : "the two-stage pipeline (its distilled LoRA)");
    const char *pl = pipeline_name(p->pipeline);
    if (p->pipeline != LTX2_PIPELINE_ONE_STAGE) {
        if (!ltx2_gen_upsampler_path(p))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: the %s pipeline needs the x2 spatial latent "
                              "upsampler (--spatial-upsampler-path; a diffusers checkpoint directory may hold it in "
                              "%s/)", pl, LTX2_UPSAMPLER_DF_FOLDER);
        if (p->pipeline == LTX2_PIPELINE_DISTILLED && p->steps)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: the distilled pipeline runs its fixed sigmas (%d + "
                              "%d steps): steps cannot be set (got %d)", GEN_DISTILLED_STEPS_1, GEN_DISTILLED_STEPS_2,
                              p->steps);
        if (p->semantics != LTX2_GENERATE_SEM_LTX_CORE)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: the %s pipeline follows ltx-pipelines "
                              "(--semantics ltx-core); the diffusers and MaxDiffusion semantics run one stage", pl);
    } else if (p->spatial_upsampler) {
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a latent upsampler was given but the one-stage pipeline "
                          "does not upsample (use the distilled or two-stage pipeline)");
    }
    if (p->pipeline == LTX2_PIPELINE_TWO_STAGE && !p->distilled_lora.path)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: the two-stage pipeline's stage 2 needs the distilled "
                          "LoRA (--distilled-lora PATH [STRENGTH]); with a distilled checkpoint use the distilled "
                          "pipeline");
    if (p->pipeline != LTX2_PIPELINE_TWO_STAGE && p->distilled_lora.path)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a distilled LoRA is for the two-stage pipeline's "
                          "stage 2; give other LoRAs as loras (--lora)");
    return LTX2_OK;
}

/* --semantics diffusers follows the model diffusers' converter builds (scripts/convert_ltx2_to_diffusers.py):
 * LTX-2.0 with perturbed_attn false, whose self-attention ignores the STG perturbation, so the STG
 * pass equals the conditional one and its term is zero; LTX-2.3 with perturbed_attn true. On 2.0 the
 * STG scales are therefore zeroed (the pass skipped: the same result without its cost), and the run
 * says so. The version comes from the checkpoint's connectors config (headers only). */
static ltx2_status diffusers_stg(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_sem_rules *rules,
                                 ltx2_guidance_params *gp) {
    if (rules->base != LTX2_SEM_DIFFUSERS || (gp->video.stg == 0 && gp->audio.stg == 0)) return LTX2_OK;
    ltx2_connectors_config cc;
    int64_t text_dim = 0;
    LTX2_TRY(ltx2_gen_ckpt_connectors(ctx, p, &cc, &text_dim));
    if (cc.fe == LTX2_TEXT_FE_V2) return LTX2_OK; /* 2.3: perturbed attention on */
    LTX2_LOGI(ctx, "generate: semantics diffusers: LTX-2.0 as diffusers' converter builds it has perturbed attention off "
              "(perturbed_attn false), so STG (video %g, audio %g) changes nothing there; its pass is skipped",
              gp->video.stg, gp->audio.stg);
    gp->video.stg = gp->audio.stg = 0;
    return LTX2_OK;
}

/* The final video latent [1, F', H', W', C] dumped as ltx-core lays it out, [1, C, F', H', W']: what
 * `ltx2 decode` and a PyTorch dump hold. */
static ltx2_status dump_latent_ncdhw(ltx2_context *ctx, const char *dump, const float *lat, const int64_t shape[5]) {
    if (!dump) return LTX2_OK;
    const int64_t pos = shape[1] * shape[2] * shape[3], C = shape[4];
    const int64_t out[5] = {1, C, shape[1], shape[2], shape[3]};
    float *t = ltx2_pipe_alloc_f(pos * C);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dump: video latent");
    for (int64_t i = 0; i < pos; i++)
        for (int64_t c = 0; c < C; c++) t[c * pos + i] = lat[i * C + c];
    const ltx2_status st = ltx2_pipe_dump(ctx, dump, "video_latent", t, 5, out);
    free(t);
    return st;
}

/* The decoded video into r (whole, tiled, or spread over the ranks). */
static ltx2_status decode_video(ltx2_context *ctx, const ltx2_video_decoder *vd, const ltx2_generate_dist *dist,
                                const ltx2_vae_tiling *tiling, const int64_t lat_shape[5], const char *dump,
                                ltx2_generate_result *r) {
    int64_t vshape[5];
    LTX2_TRY(ltx2_video_decoder_out_shape(ctx, vd, lat_shape, vshape));
    ltx2_tensor lt = ltx2_tensor_make(r->video_latent, LTX2_F32, 5, lat_shape);
    r->video = ltx2_pipe_alloc_f(vshape[1] * vshape[2] * vshape[3] * vshape[4]);
    if (!r->video) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the video");
    ltx2_tensor vt = ltx2_tensor_make(r->video, LTX2_F32, 5, vshape);
    gen_frames gf = {r->video, vshape[2] * vshape[3] * vshape[4], vshape[2]};
    ltx2_status st;
    if (dist)
        st = ltx2_vae_parallel_decode_stream(ctx, dist->world, vd, &lt, tiling, LTX2_VAE_PAR_AUTO, collect_frames, &gf,
                                             NULL);
    else if (tiling)
        st = ltx2_vae_tiled_decode_blocks(ctx, vd, &lt, tiling, collect_block, &gf, NULL);
    else
        st = ltx2_video_decoder_decode(ctx, vd, &lt, &vt, NULL, NULL);
    if (st == LTX2_OK)
        st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, r->video, 5, vshape,
                               "video decode: the frames [1, frame, row, column, rgb]");
    LTX2_TRY(st);
    r->frames = vshape[1];
    r->height = vshape[2];
    r->width = vshape[3];
    return ltx2_pipe_dump(ctx, dump, "video", r->video, 5, vshape);
}

/* The audio VAE decoder and the vocoder into r. */
static ltx2_status decode_audio(ltx2_context *ctx, const ltx2_pipe_models *m, const int64_t ashape[4],
                                const char *dump, ltx2_generate_result *r) {
    int64_t mshape[4], wshape[3];
    LTX2_TRY(ltx2_audio_decoder_out_shape(ctx, m->adec, ashape, mshape));
    LTX2_TRY(ltx2_vocoder_out_shape(ctx, m->voc, mshape, wshape));
    float *mel = ltx2_pipe_alloc_f(mshape[0] * mshape[1] * mshape[2] * mshape[3]);
    float *wav = ltx2_pipe_alloc_f(wshape[0] * wshape[1] * wshape[2]);
    ltx2_status st = LTX2_OK;
    if (!mel || !wav) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the audio");
    ltx2_tensor lt = ltx2_tensor_make(r->audio_latent, LTX2_F32, 4, ashape);
    ltx2_tensor mt = ltx2_tensor_make(mel, LTX2_F32, 4, mshape);
    ltx2_tensor wt = ltx2_tensor_make(wav, LTX2_F32, 3, wshape);
    if (st == LTX2_OK) st = ltx2_audio_decoder_decode(ctx, m->adec, &lt, &mt, NULL, NULL);
    if (st == LTX2_OK) st = ltx2_vocoder_run(ctx, m->voc, &mt, &wt, NULL, NULL);
    if (st == LTX2_OK)
        st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, wav, 3, wshape, "audio decode: the waveform [1, channel, sample]");
    if (st == LTX2_OK) st = ltx2_pipe_dump(ctx, dump, "mel", mel, 4, mshape);
    if (st == LTX2_OK) st = ltx2_pipe_dump(ctx, dump, "waveform", wav, 3, wshape);
    if (st == LTX2_OK) {
        r->audio = wav;
        wav = NULL;
        r->audio_channels = wshape[1];
        r->audio_samples = wshape[2];
        r->audio_rate = ltx2_vocoder_sample_rate(m->voc);
    }
    free(mel);
    free(wav);
    return st;
}

static ltx2_status generate(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                            ltx2_pipe_models *m, const ltx2_generate_dist *dist, ltx2_generate_result *r) {
    const double t0 = ltx2_timer_now();
    ltx2_status st = LTX2_OK;
    ltx2_pipe_context pos = {0}, neg = {0};
    ltx2_pipe_text tp = {0}, tn = {0};
    gen_stage stage[2];
    memset(stage, 0, sizeof stage);
    const bool two_stage = p->pipeline != LTX2_PIPELINE_ONE_STAGE;
    const bool distilled = p->pipeline == LTX2_PIPELINE_DISTILLED; /* stage 1 unguided on fixed sigmas */
    const int n_stages = two_stage ? 2 : 1;
    ltx2_upsampler *ups = NULL;
    ltx2_two_stage_clip clip = {0}; /* stage 1's clip, when there are two */
    ltx2_lora_set *loras1 = NULL, *loras2 = NULL; /* stage 1's (the user's); stage 2's (+ the distilled one) */
    ltx2_lora_spec *specs2 = NULL;
    ltx2_cond_image *imgs = NULL; /* the images, decoded and pre-processed once for every stage */
    gen_cond cond = {NULL, 0, NULL};
    ltx2_dit_parallel *dp = NULL;
    float *xv = NULL, *xa = NULL, *alat = NULL;
    ltx2_wav_audio ain = {0}; /* audio-to-video: the given audio's window */
    float *inj_sigmas[2] = {NULL, NULL}; /* --sigmas: each stage's, when the file has them */
    const bool rank0 = !dist || dist->world->rank == 0;
    const char *dump = rank0 ? p->dump_dir : NULL;

    /* the guidance plans (how many passes each model call batches) and, on a device, the memory
     * plan: refusals before anything is loaded. The distilled pipeline and every stage 2 run
     * without guidance (simple_denoising_func: one conditional pass). */
    ltx2_sem_rules rules = ltx2_sem_rules_for((ltx2_semantics)p->semantics);
    if (p->latent_bf16 >= 0) rules.latent_bf16 = p->latent_bf16 != 0;
    ltx2_guidance_params gp, gp_off;
    gp_off.video = gp_off.audio = ltx2_guidance_scales_off();
    if (distilled) {
        gp = gp_off;
    } else {
        gp.video = (ltx2_guidance_scales){p->video_cfg, p->video_stg, p->video_rescale, p->video_modality, 0};
        gp.audio = ltx2_guidance_scales_off(); /* a2vid: the audio guider is MultiModalGuiderParams() */
        if (!p->audio) {
            ltx2_guidance_scales audio_in = {p->audio_cfg, p->audio_stg, p->audio_rescale, p->audio_modality, 0};
            LTX2_TRY(ltx2_guidance_resolve_audio(ctx, &rules, &gp.video, &audio_in, &gp.audio));
            LTX2_TRY(diffusers_stg(ctx, p, &rules, &gp));
        }
    }
    ltx2_guidance_plan plan, plan_off;
    LTX2_TRY(ltx2_guidance_plan_make(ctx, &rules, &gp, &plan));
    LTX2_TRY(ltx2_guidance_plan_make(ctx, &rules, &gp_off, &plan_off));
    plan.velocity_bf16 = plan_off.velocity_bf16 = p->precision == LTX2_GENERATE_PRECISION_TPU;
    const bool preloaded = m->set != NULL;
    const bool need_neg = ltx2_guidance_plan_slot(&plan, LTX2_PASS_UNCOND) >= 0;
    /* LoRAs and the upsampler are opened (and refused) before the text encoder runs */
    if (preloaded) LTX2_TRY(check_loaded(ctx, p));
    /* models loaded once: their DiT's dtype is the handle's (ltx2_generate_model passes it on) */
    if (preloaded && (ltx2_gen_fp8_weights(p) != m->fp8 || ltx2_gen_fp8_cast(p) != m->fp8_cast))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: weights dtype %s, but the loaded models' DiT is %s",
                          p->weights_dtype ? p->weights_dtype : "bf16", m->fp8 ? "fp8" : m->fp8_cast ? "fp8-cast" : "bf16");
    /* before any work (Gemma, loads): an fp8 GEMM on this device, as the fp8 loaders require */
    if (ltx2_gen_fp8_weights(p))
        LTX2_TRY(ltx2_backend_require_fp8_gemm(ctx, be, "generate: --weights-dtype fp8 (the default weights dtype runs "
                                               "an fp8 file dequantised)"));
    if (ltx2_gen_attention_fp8(p)) LTX2_TRY(ltx2_backend_require_fp8_attention(ctx, be, "generate: --attention-dtype fp8"));
    /* a rank keeps its shards of the Linears as the single-device loader keeps the whole */
    const ltx2_dit_shard_weights shard_kind = ltx2_gen_fp8_weights(p) ? LTX2_DIT_SHARDS_FP8
                                              : ltx2_gen_fp8_cast(p)  ? LTX2_DIT_SHARDS_FP8_CAST
                                                                      : LTX2_DIT_SHARDS_PLAIN;
    /* models a handle keeps loaded are resident already: the device's free memory no longer counts
     * them, so the plan (weights + stage peaks against what is free) would count them twice. The
     * final stage is the largest (full size). */
    if (!preloaded) LTX2_TRY(ltx2_gen_plan_memory(ctx, p, be, &plan, dist));
    if (p->n_loras) LTX2_TRY(ltx2_lora_set_open(ctx, p->loras, p->n_loras, &loras1));
    if (p->pipeline == LTX2_PIPELINE_TWO_STAGE) { /* ModelLedger.with_additional_loras: the user's, then it */
        specs2 = malloc((size_t)(p->n_loras + 1) * sizeof *specs2);
        if (!specs2) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: LoRA list");
        if (st == LTX2_OK) {
            if (p->n_loras) memcpy(specs2, p->loras, (size_t)p->n_loras * sizeof *specs2);
            specs2[p->n_loras] = p->distilled_lora;
            st = ltx2_lora_set_open(ctx, specs2, p->n_loras + 1, &loras2);
        }
        if (st != LTX2_OK) goto done;
    }
    if (two_stage && (st = ltx2_gen_load_upsampler(ctx, p, &ups, &clip)) != LTX2_OK) goto done;
    if (p->n_images) {
        /* every rank decodes and encodes the images itself (deterministic): the conditioned latent
         * and its per-token denoise mask are whole on each rank, which the sharded DiT slices */
        imgs = calloc((size_t)p->n_images, sizeof *imgs);
        if (!imgs) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: image list");
        if (st == LTX2_OK) st = ltx2_cond_images_load(ctx, p->images, p->n_images, p->frames, imgs);
        if (st != LTX2_OK) goto done;
        cond.imgs = imgs;
        cond.n = p->n_images;
    }
    if (p->audio) {
        if ((st = ltx2_audio_cond_read(ctx, p, &ain)) != LTX2_OK) goto done;
    }

    /* a text prompt: Gemma runs, and is freed, before any other model is loaded (never two
     * resident); the hidden states wait in host memory */
    double text_seconds = 0;
    if ((st = ltx2_denoise_check_cancel(ctx, p, "the text stage", 0)) != LTX2_OK) goto done;
    if (p->prompt) {
        const double t_enc = ltx2_timer_now();
        if ((st = ltx2_gen_text_ranked(ctx, p, need_neg, dist ? dist->world : NULL, be, &tp, &tn,
                                      &r->enhanced_prompt)) !=
            LTX2_OK)
            goto done;
        text_seconds = ltx2_timer_now() - t_enc;
    }

    /* ranks read only their shards of the DiT's layers from the file (no whole copy anywhere) */
    const char *const *ckpt_paths = NULL;
    int n_ckpt = 0;
    ltx2_gen_checkpoint_paths(p, &ckpt_paths, &n_ckpt);
    if (!preloaded &&
        (st = dist                      ? ltx2_pipe_models_load_dit_replicated(ctx, ckpt_paths, n_ckpt, be, loras1, m)
              : ltx2_gen_fp8_weights(p) ? ltx2_pipe_models_load_fp8(ctx, ckpt_paths, n_ckpt, be, loras1, m)
              : ltx2_gen_fp8_cast(p)    ? ltx2_pipe_models_load_fp8_cast(ctx, ckpt_paths, n_ckpt, be, m)
                                        : ltx2_pipe_models_load_lora(ctx, ckpt_paths, n_ckpt, be, loras1, m)) != LTX2_OK)
        goto done;
    if (cond.n) {
        if ((st = ltx2_pipe_models_load_encoder(ctx, m)) != LTX2_OK) goto done;
        cond.enc = m->venc;
    }
    r->model_version = m->is_2_3 ? "2.3" : "2.0";
    const double t_load = ltx2_timer_now();
    r->timings.load = t_load - t0 - text_seconds;
    /* a handle's shards are made once (borrowed, dist->dp); otherwise read for this call */
    if (dist && dist->dp) dp = dist->dp;
    else if (dist && (st = ltx2_dit_parallel_create_sharded_lora(ctx, dist->world, m->dit, m->set->files[0], NULL,
                                                                 loras1, shard_kind, &dist->dit, &dp)) != LTX2_OK)
        goto done;

    /* ---- geometry of each stage, rules: everything that can refuse, before any compute ---- */
    const ltx2_video_decoder *vd = m->vdec;
    /* the final stage first: the first of two runs on the upsampler's source clip, with the final
     * clip's audio */
    for (int s = n_stages - 1; s >= 0; s--) {
        const bool first = s + 1 < n_stages;
        gen_stage *g = &stage[s];
        g->height = first ? clip.height : p->height;
        g->width = first ? clip.width : p->width;
        g->fps = first ? clip.fps : p->fps;
        g->frame_div = first ? clip.frame_div : 1;
        if ((st = ltx2_pipe_geometry_make(ctx, first ? clip.frames : p->frames, g->height, g->width, g->fps,
                                          vd->time_factor, vd->space_factor, vd->cfg.latent_channels,
                                          m->adec->cfg.z_channels, m->dit->cfg.audio_in_channels, &g->g)) != LTX2_OK)
            goto done;
        if (first) g->g.at = stage[n_stages - 1].g.at;
        g->dump_prefix = two_stage ? (s ? "stage_2_" : "stage_1_") : "";
        g->gr = g->g;
        g->gr.video_tokens += ltx2_video_cond_extra_tokens(cond.imgs, cond.n, &g->g);
    }
    const ltx2_pipe_geometry *gf = &stage[n_stages - 1].g; /* the final latent */
    if (gf->lc != m->dit->cfg.in_channels) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "the VAE has %lld latent channels but the DiT takes %lld",
                        (long long)gf->lc, (long long)m->dit->cfg.in_channels);
        goto done;
    }
    if (two_stage) {
        const ltx2_pipe_geometry *g1 = &stage[0].g;
        const int64_t in[5] = {1, g1->lf, g1->lh, g1->lw, g1->lc};
        int64_t out[5];
        if ((st = ltx2_upsampler_out_shape(ctx, ups, in, out)) != LTX2_OK) {
            ltx2_error_prefix(ctx, "latent upsampler %s against the checkpoint's VAE", ltx2_gen_upsampler_path(p));
            goto done;
        }
        if (out[1] != gf->lf || out[2] != gf->lh || out[3] != gf->lw) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "the upsampler makes %lldx%lldx%lld latents of %lldx%lldx%lld, "
                            "stage 2 takes %lldx%lldx%lld", (long long)out[1], (long long)out[2], (long long)out[3],
                            (long long)in[1], (long long)in[2], (long long)in[3], (long long)gf->lf,
                            (long long)gf->lh, (long long)gf->lw);
            goto done;
        }
    }
    if (need_neg && !p->negative_prompt_embeds && !p->prompt && !p->context) {
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
    int inj_steps[2] = {0, 0};
    if (p->sigmas) {
        for (int s = 0; st == LTX2_OK && s < n_stages; s++)
            st = ltx2_inject_sigmas(ctx, p->sigmas, s + 1, &inj_sigmas[s], &inj_steps[s]);
        if (st == LTX2_OK && p->steps && p->steps != inj_steps[0])
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: %d steps asked, but the sigmas of %s make %d", p->steps,
                            p->sigmas, inj_steps[0]);
        if (st != LTX2_OK) goto done;
    }
    const int steps1 = inj_steps[0] ? inj_steps[0]
                       : distilled  ? GEN_DISTILLED_STEPS_1
                       : p->steps   ? p->steps
                                    : (m->is_2_3 ? GEN_DEFAULT_STEPS_2_3 : GEN_DEFAULT_STEPS_2_0);
    const int steps2 = inj_steps[1] ? inj_steps[1] : GEN_DISTILLED_STEPS_2;
    const int steps_total = steps1 + (two_stage ? steps2 : 0);
    { /* the DiT call --dump writes must be one the run makes */
        const int calls = steps1 * (distilled ? plan_off : plan).n_calls + (two_stage ? steps2 * plan_off.n_calls : 0);
        if (dump && p->dump_call >= calls) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: dump call %d, but the run makes %d model calls "
                            "(0 to %d)", p->dump_call, calls, calls - 1);
            goto done;
        }
    }
    ltx2_vae_tiling tiling = {0};
    const bool tiled = p->vae_tile_px > 0 || p->vae_tile_frames > 0;
    const int64_t lat_shape[5] = {1, gf->lf, gf->lh, gf->lw, gf->lc};
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
    if (two_stage) {
        int n2 = 0;
        const float *s2 = inj_sigmas[1] ? inj_sigmas[1] : ltx2_sched_distilled(LTX2_DISTILLED_STAGE2, &n2);
        LTX2_LOGI(ctx, "generate: pipeline %s: stage 1 at %lldx%lldx%lld @ %g fps (%s) on %d %s; %s latent "
                  "upsampler; stage 2 at %dx%dx%d%s re-noised to sigma %.6g, %d sigmas, no guidance",
                  pipeline_name(p->pipeline), (long long)clip.width, (long long)clip.height, (long long)clip.frames,
                  clip.fps, clip.what, steps1,
                  inj_sigmas[0] ? (distilled ? "injected sigmas, no guidance" : "injected sigmas, guided")
                                : (distilled ? "distilled sigmas, no guidance" : "scheduler sigmas, guided"),
                  clip.kind, p->width, p->height, p->frames, distilled ? "" : " with the distilled LoRA", (double)s2[0],
                  steps2);
    }
    if (ltx2_gen_fp8_weights(p)) {
        ltx2_dit_parallel_weight_mem wm = {0};
        if (dp) ltx2_dit_parallel_get_weight_mem(dp, &wm); /* a rank: its shards are the fp8 ones */
        LTX2_LOGI(ctx, "generate: fp8 DiT weights: %lld scaled fp8 Linears run as fp8 GEMMs (ltx-core's fp8_scaled_mm)%s",
                  dp ? (long long)wm.fp8_linears : (long long)m->dit->store.n_fp8, dp ? " on rank 0's shards" : "");
    }
    if (ltx2_gen_attention_fp8(p)) {
        const bool applies = ltx2_dit_attention_fp8(true, m->dit->cfg.head_dim);
        LTX2_LOGI(ctx, "generate: fp8 attention: %s (video head dim %lld)",
                  applies ? "the video self- and text cross-attention run on e4m3 Q, K, V and probabilities"
                          : "this model's video attentions are not of the head dim it takes (128): they run as before",
                  (long long)m->dit->cfg.head_dim);
    }
    if (ltx2_gen_fp8_cast(p))
        LTX2_LOGI(ctx, "generate: fp8-cast DiT weights: the blocks' q/k/v/out and feed-forward weights and biases "
                  "rounded to e4m3 as ltx-core's fp8_cast policy casts them, run in %s",
                  ltx2_dtype_name(m->dit->dtype));
    if (loras1) {
        int64_t pairs = 0, used = 0;
        ltx2_lora_counts(loras1, &pairs, &used);
        LTX2_LOGI(ctx, "generate: %d LoRA(s) fused into the DiT: %lld adapter pairs", p->n_loras, (long long)used);
    }
    LTX2_LOGI(ctx, "generate: %s pipeline, LTX-%s, %dx%dx%d @ %g fps -> video latent %lldx%lldx%lldx%lld, audio latent %lldx%lldx%lld, "
              "%d steps, %d model calls/step, semantics %s, seed %llu", pipeline_name(p->pipeline), r->model_version, p->width, p->height, p->frames,
              p->fps, (long long)gf->lf, (long long)gf->lh, (long long)gf->lw, (long long)gf->lc, (long long)gf->az,
              (long long)gf->at, (long long)gf->afreq, steps_total, plan.n_calls, ltx2_sem_name(rules.base),
              (unsigned long long)p->seed);

    /* ---- text: computed once, reused by every step of every stage ---- */
    if (p->context) {
        st = ltx2_inject_contexts(ctx, p->context, m->conn->cfg.video.inner_dim, m->conn->cfg.audio.inner_dim, need_neg,
                                  &pos, &neg);
        if (st == LTX2_OK) LTX2_LOGI(ctx, "generate: contexts from %s (%lld tokens): the connectors do not run",
                                     p->context, (long long)pos.S);
    } else {
        ltx2_generate_params q = *p;
        if (!rank0) q.save_prompt_embeds = NULL; /* rank 0 writes the outputs */
        st = ltx2_gen_text_contexts(ctx, &q, m, rules.dit_rope_xla, need_neg, &tp, &tn, &pos, &neg);
    }
    if (st != LTX2_OK) goto done;
    { /* the names --context reads back */
        const int64_t sv[3] = {1, pos.S, m->conn->cfg.video.inner_dim}, sa[3] = {1, pos.S, m->conn->cfg.audio.inner_dim};
        if ((st = ltx2_pipe_dump(ctx, dump, "video_context", pos.video, 3, sv)) != LTX2_OK) goto done;
        if ((st = ltx2_pipe_dump(ctx, dump, "audio_context", pos.audio, 3, sa)) != LTX2_OK) goto done;
        if (need_neg && (st = ltx2_pipe_dump(ctx, dump, "negative_video_context", neg.video, 3, sv)) != LTX2_OK) goto done;
        if (need_neg && (st = ltx2_pipe_dump(ctx, dump, "negative_audio_context", neg.audio, 3, sa)) != LTX2_OK) goto done;
    }
    const double t_text = ltx2_timer_now();
    r->timings.text = t_text - t_load + text_seconds;

    /* ---- stage 1's initial state ---- */
    for (int s = 0; s < n_stages; s++) {
        /* injected sigmas replace the stage's own */
        const int fixed = inj_sigmas[s] ? LTX2_GEN_SIGMAS_GIVEN
                          : s           ? LTX2_DISTILLED_STAGE2
                          : distilled   ? LTX2_DISTILLED_STAGE1
                                        : -1;
        st = ltx2_gen_stage_prepare(ctx, &rules, vd, s ? steps2 : steps1, fixed, &stage[s]);
        if (st != LTX2_OK) goto done;
        if (inj_sigmas[s]) memcpy(stage[s].sigmas, inj_sigmas[s], (size_t)(stage[s].steps + 1) * sizeof(float));
    }
    const ltx2_pipe_geometry *g1 = &stage[0].g, *g1r = &stage[0].gr;
    const int64_t na = g1->at * g1->audio_feat; /* the audio geometry is the same in both stages */
    xv = ltx2_pipe_alloc_f(g1r->video_tokens * g1->lc);
    xa = ltx2_pipe_alloc_f(na);
    if (!xv || !xa) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the latents");
        goto done;
    }
    if (p->noise) {
        if ((st = ltx2_pipe_noise_load(ctx, p->noise, 0, g1r, xv, xa)) != LTX2_OK) goto done;
    } else {
        ltx2_pipe_noise_philox(g1r, p->seed, 0, xv, xa);
    }
    if ((st = ltx2_pipe_noise_dump(ctx, dump, 0, g1r, xv, xa)) != LTX2_OK) goto done; /* --noise reads it back */
    if (cond.n) { /* the images' tokens in a zero latent, the noise mixed in by their mask */
        float *x0 = calloc((size_t)(g1r->video_tokens * g1->lc), sizeof(float));
        if (!x0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the latents");
            goto done;
        }
        st = ltx2_gen_noise_stage(ctx, &rules, &cond, &stage[0], x0, xv, 1.0f);
        free(xv);
        xv = x0;
        if (st != LTX2_OK) goto done;
    } else { /* GaussianNoiser: noise * 1 + zeros * 0, cast to the pipeline dtype. */
        ltx2_sched_round_latent(&rules, xv, g1->video_tokens * g1->lc);
    }
    /* a given audio replaces the noise: the noiser's scale 0 keeps the initial latent as it is */
    if (p->audio && (st = ltx2_audio_cond_encode(ctx, m, &ain, g1, dump, xa)) != LTX2_OK) goto done;
    ltx2_sched_round_latent(&rules, xa, na);
    if ((st = ltx2_gen_dump_stage(ctx, dump, &stage[0], xv, xa)) != LTX2_OK) goto done;
    const double t_noise = ltx2_timer_now();
    r->timings.noise = t_noise - t_text;

    /* ---- the stages ---- */
    double t_between = 0, t_reload = 0;
    int model_calls = 0; /* over the run, for --dump's DiT call */
    for (int s = 0; s < n_stages; s++) {
        if (s) { /* stage 2 starts from the upsampled, re-noised stage-1 latents */
            const double tu = ltx2_timer_now();
            if ((st = ltx2_denoise_check_cancel(ctx, p, "the latent upsampler", 0)) != LTX2_OK) goto done;
            st = ltx2_gen_upsample_and_renoise(ctx, p, &rules, m, ups, &cond, &stage[0], &stage[1], dump, &xv, xa);
            if (st != LTX2_OK) goto done;
            if ((st = ltx2_gen_dump_stage(ctx, dump, &stage[s], xv, xa)) != LTX2_OK) goto done;
            t_between += ltx2_timer_now() - tu;
            if (loras2) { /* ti2vid_two_stages: stage 2's transformer is built again with the distilled LoRA */
                const double tl = ltx2_timer_now();
                LTX2_LOGI(ctx, "generate: stage 2: the DiT again with the distilled LoRA %s (strength %g) fused",
                          p->distilled_lora.path, p->distilled_lora.strength);
                /* a rank: its shards go first too, then come again from the file with the adapters
                 * (never a handle's borrowed ones: loaded models take no LoRA, check_loaded) */
                ltx2_dit_parallel_free(dp);
                dp = NULL;
                if ((st = ltx2_pipe_models_reload_dit(ctx, m, loras2)) != LTX2_OK) goto done;
                if (dist && (st = ltx2_dit_parallel_create_sharded_lora(ctx, dist->world, m->dit, m->set->files[0],
                                                                        NULL, loras2, shard_kind, &dist->dit,
                                                                        &dp)) != LTX2_OK)
                    goto done;
                t_reload = ltx2_timer_now() - tl;
                r->timings.load += t_reload;
            }
        }
        const bool guided = s == 0 && !distilled;
        const ltx2_denoise_stage ds = {
            .m = m, .g = &stage[s].gr, .rules = &rules, .gp = guided ? &gp : &gp_off,
            .plan = guided ? &plan : &plan_off, .pos = &pos, .neg = guided && need_neg ? &neg : NULL,
            .vpos = stage[s].vpos, .apos = stage[s].apos, .sigmas = stage[s].sigmas,
            .video_mask = stage[s].mask, .video_clean = stage[s].clean, .audio_held = p->audio != NULL,
            .steps = stage[s].steps, .stg_block = stg_block, .dp = dp, .dump_dir = dump,
            .dump_prefix = stage[s].dump_prefix, .dump_call = p->dump_call, .model_calls = &model_calls,
            .steps_before = s ? steps1 : 0,
            .steps_total = steps_total, .t_start = t_noise};
        if ((st = ltx2_denoise_run(ctx, &ds, p, rank0, xv, xa)) != LTX2_OK) goto done;
    }
    const double t_denoise = ltx2_timer_now();
    r->timings.upsample = t_between;
    r->timings.denoise = t_denoise - t_noise - t_between - t_reload;

    /* ---- outputs: latents (the video tokens are already NDHWC) ---- */
    r->seed = p->seed;
    r->steps = steps_total;
    r->fps = p->fps;
    memcpy(r->video_latent_shape, lat_shape, sizeof lat_shape);
    r->video_latent = xv;
    xv = NULL;
    alat = ltx2_pipe_alloc_f(na);
    if (!alat) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory");
        goto done;
    }
    ltx2_pipe_audio_unpatchify(gf, xa, alat);
    const int64_t ashape[4] = {1, gf->az, gf->at, gf->afreq};
    memcpy(r->audio_latent_shape, ashape, sizeof ashape);
    r->audio_latent = alat;
    alat = NULL;
    if ((st = dump_latent_ncdhw(ctx, dump, r->video_latent, lat_shape)) != LTX2_OK) goto done;
    if ((st = ltx2_pipe_dump(ctx, dump, "audio_latent", r->audio_latent, 4, ashape)) != LTX2_OK) goto done;

    /* ---- decode ---- */
    if ((p->decode_video || p->decode_audio) && (st = ltx2_denoise_check_cancel(ctx, p, "decoding", 0)) != LTX2_OK)
        goto done;
    if (p->decode_video && (st = decode_video(ctx, vd, dist, tiled ? &tiling : NULL, lat_shape, dump, r)) != LTX2_OK)
        goto done;
    const double t_vdec = ltx2_timer_now();
    r->timings.video_decode = t_vdec - t_denoise;
    if (p->audio) { /* a2vid returns the input waveform, not a decode */
        r->audio = ain.samples;
        r->audio_channels = ain.channels;
        r->audio_samples = ain.frames;
        r->audio_rate = ain.sample_rate;
        memset(&ain, 0, sizeof ain);
    } else if (p->decode_audio && (st = decode_audio(ctx, m, ashape, dump, r)) != LTX2_OK) {
        goto done;
    }
    const double t_adec = ltx2_timer_now();
    r->timings.audio_decode = t_adec - t_vdec;
    r->timings.total = t_adec - t0;

done:
    ltx2_pipe_text_free(&tp);
    ltx2_pipe_text_free(&tn);
    if (!dist || !dist->dp) ltx2_dit_parallel_free(dp);
    ltx2_upsampler_free(ups);
    ltx2_lora_set_free(loras1);
    if (imgs) ltx2_cond_images_free(imgs, p->n_images);
    ltx2_wav_audio_free(&ain);
    free(inj_sigmas[0]);
    free(inj_sigmas[1]);
    free(imgs);
    ltx2_lora_set_free(loras2);
    free(specs2);
    for (int s = 0; s < 2; s++) ltx2_gen_stage_free(&stage[s]);
    free(pos.video); free(pos.audio); free(neg.video); free(neg.audio);
    free(xv); free(xa); free(alat);
    return st;
}

ltx2_status ltx2_generate_with_models(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                                      ltx2_pipe_models *m, ltx2_generate_result *result) {
    if (!p || !result || !be || !m)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params, backend, models or result");
    memset(result, 0, sizeof *result);
    LTX2_TRY(check_params(ctx, p));
    if (p->precision == LTX2_GENERATE_PRECISION_TPU && be->device != LTX2_DEVICE_CPU)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: precision tpu (MaxDiffusion's bf16 DiT) runs on the CPU "
                          "(--device cpu): its bf16 rounding is a CPU reference mode, not %s", be->name);
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

/* ltx2_generate_ranked, on models loaded once (preloaded, with dist->be) or loaded for the call */
static ltx2_status ranked(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_dist *dist,
                          ltx2_pipe_models *preloaded, ltx2_generate_result *result) {
    if (!dist || !dist->world) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: no communicator given");
    if (preloaded && (!dist->be || !dist->dp))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a rank's loaded models without their device or shards");
    ltx2_status st = LTX2_OK;
    if (!p || !result) st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params or result");
    if (st == LTX2_OK) {
        memset(result, 0, sizeof *result);
        st = check_params(ctx, p);
    }
    if (st == LTX2_OK) st = check_ranks(ctx, p, dist->world->size);
    if (st == LTX2_OK && dist->world->rank == 0) {
        const ltx2_mesh *m = &dist->world->mesh;
        LTX2_LOGI(ctx, "generate: %d ranks, mesh %d,%d,%d,%d (data, fsdp, context, tensor), sharding %s",
                  dist->world->size, m->size[0], m->size[1], m->size[2], m->size[3],
                  ltx2_shard_profile_name(dist->dit.profile));
    }
    const ltx2_backend *be = dist->be, *opened = NULL;
    if (st == LTX2_OK && !be) {
        char desc[256];
        st = ltx2_backend_open_rank(ctx, p->device, dist->device_index, &opened, desc, sizeof desc);
        if (st == LTX2_OK && dist->world->rank == 0) LTX2_LOGI(ctx, "generate: rank 0 device %s", desc);
        be = opened;
    }
    if (st == LTX2_OK && p->precision == LTX2_GENERATE_PRECISION_TPU && be->device != LTX2_DEVICE_CPU)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "generate: precision tpu runs on the CPU (--device cpu), not %s",
                        be->name);
    if (st == LTX2_OK) {
        ltx2_pipe_models own;
        memset(&own, 0, sizeof own);
        st = generate(ctx, p, be, preloaded ? preloaded : &own, dist, result);
        ltx2_pipe_models_free(&own);
        if (st != LTX2_OK) ltx2_generate_result_free(result);
    }
    ltx2_backend_free(opened);
    /* Whatever failed here (a load, a shape, a collective), the other ranks must not wait for us. */
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "rank %d of %d", dist->world->rank, dist->world->size);
        ltx2_comm_abort(dist->world, ltx2_last_error(ctx));
    }
    return st;
}

ltx2_status ltx2_generate_check_params(ltx2_context *ctx, const ltx2_generate_params *p, bool loaded, int ranks) {
    if (!p) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: NULL params");
    LTX2_TRY(check_params(ctx, p));
    if (loaded) LTX2_TRY(check_loaded(ctx, p));
    return check_ranks(ctx, p, ranks);
}

ltx2_status ltx2_generate_ranked(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_dist *dist,
                                 ltx2_generate_result *result) {
    return ranked(ctx, p, dist, NULL, result);
}

ltx2_status ltx2_generate_ranked_models(ltx2_context *ctx, const ltx2_generate_params *p,
                                        const ltx2_generate_dist *dist, ltx2_pipe_models *m,
                                        ltx2_generate_result *result) {
    if (!m || !m->set) {
        if (result) memset(result, 0, sizeof *result);
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "generate: a rank's models are not loaded");
    }
    return ranked(ctx, p, dist, m, result);
}
