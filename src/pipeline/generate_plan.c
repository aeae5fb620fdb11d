/* The memory plan of a generation before any work (generate_plan.h): the checkpoint's configs
 * only, the request memory_plan.h prices, and for a rank of several its share of its device. */
#include "pipeline/generate_plan.h"

#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "model/audio_encoder.h"
#include "model/ckpt_source.h"
#include "model/upsampler.h"
#include "pipeline/generate_stages.h"
#include "pipeline/generate_text.h"
#include "pipeline/memory_plan.h"

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

/* Collective over world: how many of its ranks compute on the device be is on (ranks whose
 * backends report the same device id; a rank whose backend has none counts alone). Thread ranks and
 * process ranks alike, whichever index or CUDA_VISIBLE_DEVICES each opened its GPU under. */
static ltx2_status rank_device_share(ltx2_context *ctx, const ltx2_backend *be, ltx2_comm *world, int *share) {
    unsigned char key[1 + LTX2_DEVICE_ID_BYTES + sizeof(int)] = {0};
    if (be->device_id) {
        key[0] = 1;
        LTX2_TRY(be->device_id(be, ctx, key + 1));
    } else {
        memcpy(key + 1 + LTX2_DEVICE_ID_BYTES, &world->rank, sizeof(int));
    }
    return ltx2_comm_count_equal(world, ctx, key, sizeof key, share);
}

/* Prompts whose states wait on the device beside the loaded models (ltx2_gen_text_keep; across
 * ranks rank 0 sends them from the host before any model loads). */
static int64_t kept_prompts(const ltx2_generate_params *p, const ltx2_guidance_plan *plan,
                            const ltx2_generate_dist *dist) {
    if (!ltx2_gen_text_keep(p) || (dist && dist->world->size > 1)) return 0;
    return ltx2_guidance_plan_slot(plan, LTX2_PASS_UNCOND) >= 0 ? 2 : 1;
}

ltx2_status ltx2_gen_plan_memory(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                                 const ltx2_guidance_plan *plan, const ltx2_generate_dist *dist) {
    int share = 1;
    if (dist) LTX2_TRY(rank_device_share(ctx, be, dist->world, &share));
    if (!be->mem_info) return LTX2_OK;
    size_t free_b = 0, total_b = 0;
    LTX2_TRY(be->mem_info(be, ctx, &free_b, &total_b));
    if (share > 1) {
        LTX2_LOGI(ctx, "memory plan: %d ranks compute on this device; each plans against 1/%d of its %.1f GiB free",
                  share, share, (double)free_b / (double)(1ull << 30));
        free_b /= (size_t)share;
    }
    ltx2_ckpt_source *src = NULL;
    LTX2_TRY(ltx2_gen_open_source(ctx, p, &src));
    const ltx2_st_file *f = ltx2_ckpt_source_set(src)->files[0];
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
    ltx2_audio_encoder_config aecfg; /* audio conditioning's encoder, its config only */
    if (st == LTX2_OK && p->audio) st = ltx2_audio_encoder_config_from_file(ctx, f, &aecfg);
    ltx2_upsampler_config ucfg; /* the two-stage pipelines' upsampler, its config only */
    const bool ups = p->pipeline != LTX2_PIPELINE_ONE_STAGE;
    if (st == LTX2_OK && ups) st = ltx2_upsampler_read_config(ctx, ltx2_gen_upsampler_path(p), &ucfg);
    const ltx2_mem_request req = {.dit = &dcfg, .conn = &ccfg, .vae = &vcfg, .audio = &acfg, .vocoder = &vocfg,
                                  .frames = p->frames,
                                  .height = p->height, .width = p->width, .fps = p->fps,
                                  .batch = max_call_batch(plan), .text_tokens = LTX2_PIPE_TEXT_TOKENS, .text_dim = text_dim,
                                  .text_cache_entries = LTX2_PIPE_TEXT_CACHE_ENTRIES,
                                  .text_kept_prompts = kept_prompts(p, plan, dist),
                                  .vae_tile_px = p->vae_tile_px,
                                  .vae_tile_frames = p->vae_tile_frames, .free_bytes = free_b,
                                  .dit_fp8_file = ltx2_gen_fp8_weights(p) ? f : NULL,
                                  .attention_fp8 = ltx2_gen_attention_fp8(p),
                                  .upsampler = ups ? &ucfg : NULL, .image_cond = p->n_images > 0,
                                  .audio_encoder = p->audio ? &aecfg : NULL,
                                  /* at most the maximum duration, else the clip's length (audio_cond.c) */
                                  .audio_cond_seconds = !p->audio ? 0.0
                                                        : p->audio_max_duration > 0 ? p->audio_max_duration
                                                                                    : (double)p->frames / p->fps,
                                  .mesh = dist ? &dist->world->mesh : NULL, .dit_par = dist ? &dist->dit : NULL,
                                  .rank = dist ? dist->world->rank : 0, .device_share = share};
    ltx2_mem_plan mp;
    if (st == LTX2_OK) st = ltx2_mem_plan_make(ctx, &req, &mp);
    if (st == LTX2_OK) {
        char text[LTX2_MEM_PLAN_TEXT_CAP];
        ltx2_mem_plan_format(&mp, text, sizeof text, "");
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) LTX2_LOGI(ctx, "%s", line);
        st = ltx2_mem_plan_check(ctx, &req, &mp);
    }
    ltx2_ckpt_source_close(src);
    return st;
}
