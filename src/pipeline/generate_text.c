/* The text stage of a generation (generate_text.h): the checkpoint's connectors config read from its
 * headers, the prompts through Gemma-3, and the hidden states through the text connectors into the
 * DiT's contexts. Moved out of generate.c, which orchestrates the stages. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "core/finite.h"
#include "dist/comm.h"
#include "model/ckpt_source.h"
#include "model/gemma.h"
#include "pipeline/generate_stages.h"
#include "pipeline/generate_text.h"
#include "pipeline/memory_plan.h"
#include "text/gemma_tokenizer.h"

/* The text connectors on loaded prompt embeddings t. */
static ltx2_status encode_prompt(ltx2_context *ctx, const ltx2_pipe_models *m, bool rope_xla, const char *path,
                                 ltx2_pipe_text *t, ltx2_pipe_context *out) {
    /* states kept on the device go in as they are where the connectors live there in their dtype
     * (not under --precision tpu's f32 connectors) */
    const bool on_device = t->dev.data && t->dev_be == m->conn->be && t->dev.dtype == m->conn->dtype;
    if (!on_device) LTX2_TRY(ltx2_pipe_text_to_host(ctx, t));
    else LTX2_LOGI(ctx, "text connectors: %s's hidden states taken on %s, where Gemma left them", path, t->dev_be->name);
    const int64_t dv = m->conn->cfg.video.inner_dim, da = m->conn->cfg.audio.inner_dim;
    out->S = t->S;
    out->video = malloc((size_t)(t->S * dv) * sizeof(float));
    out->audio = malloc((size_t)(t->S * da) * sizeof(float));
    uint8_t *mask = malloc((size_t)t->S);
    ltx2_status st = LTX2_OK;
    if (!out->video || !out->audio || !mask) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt %s: out of memory", path);
    } else {
        ltx2_text_hidden in = {t->hidden, t->mask, 1, t->S, t->D, t->L, .layer_major = true,
                               .dev = on_device ? &t->dev : NULL};
        st = ltx2_connectors_forward_rope(ctx, m->conn, &in, rope_xla, NULL, NULL, out->video, out->audio, mask);
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

/* Whatever checkpoint source p names (a single file, a diffusers directory, split files), headers
 * only. */
ltx2_status ltx2_gen_open_source(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_ckpt_source **src) {
    const char *const *paths = NULL;
    int n_paths = 0;
    ltx2_gen_checkpoint_paths(p, &paths, &n_paths);
    return ltx2_ckpt_source_open(ctx, paths, n_paths, src);
}

/* The checkpoint's connectors config and the text width its projection takes. */
ltx2_status ltx2_gen_ckpt_connectors(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_connectors_config *cc,
                                   int64_t *text_dim) {
    ltx2_ckpt_source *src = NULL;
    LTX2_TRY(ltx2_gen_open_source(ctx, p, &src));
    const ltx2_st_file *f = ltx2_ckpt_source_set(src)->files[0];
    ltx2_status st = ltx2_connectors_config_from_st(ctx, f, cc);
    if (st == LTX2_OK) st = ltx2_connectors_text_dim(ctx, f, cc, text_dim);
    ltx2_ckpt_source_close(src);
    return st;
}

/* Where Gemma runs (*tbe; *opened: the backend to free, if one was opened here). Named by
 * p->text_encoder_device: that device, refused when Gemma does not fit it. By default the
 * generation's own GPU (run_be) when Gemma fits its free memory, else the CPU, said in one line. */
bool ltx2_gen_text_keep(const ltx2_generate_params *p) {
    return p->prompt && !p->text_encoder_device;
}

static ltx2_status text_device(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_gemma_config *gc, int n,
                               bool fp8, bool keep, const ltx2_backend *run_be, const ltx2_backend **tbe,
                               const ltx2_backend **opened) {
    char desc[256];
    const bool chosen = p->text_encoder_device != NULL;
    if (chosen) {
        LTX2_TRY(ltx2_backend_open(ctx, p->text_encoder_device, opened, desc, sizeof desc));
        *tbe = *opened;
    } else {
        *tbe = run_be && run_be->mem_info ? run_be : ltx2_backend_cpu();
        ltx2_backend_describe(*tbe, desc, sizeof desc);
    }
    size_t free_b = 0, total_b = 0;
    ltx2_status st = LTX2_OK;
    if ((*tbe)->mem_info && (st = (*tbe)->mem_info(*tbe, ctx, &free_b, &total_b)) == LTX2_OK) {
        /* Gemma is alone on the device (loaded first, freed before the DiT): its weights and one
         * forward's buffers, plus the runtime's share */
        uint64_t need = ltx2_gemma_device_bytes(gc, n, LTX2_GEMMA_MAX_TOKENS, fp8) + LTX2_MEM_RUNTIME_BYTES;
        if (keep) /* the states it leaves there, bf16 [layers + 1, S, hidden] a prompt */
            need += (uint64_t)n * (uint64_t)((gc->layers + 1) * LTX2_GEMMA_MAX_TOKENS * gc->hidden) * 2;
        LTX2_LOGI(ctx, "text encoder memory: %.2f GiB needed, %.2f GiB free on %s", (double)need / (1 << 30),
                  (double)free_b / (1 << 30), desc);
        if (need > free_b && chosen) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM,
                            "the text encoder needs %.2f GiB on %s but %.2f GiB are free: use --text-encoder-device cpu",
                            (double)need / (1 << 30), desc, (double)free_b / (1 << 30));
        } else if (need > free_b) {
            LTX2_LOGW(ctx, "text encoder: Gemma needs %.2f GiB and %s has %.2f GiB free: it runs on the CPU instead "
                      "(slower; --text-encoder-device chooses)", (double)need / (1 << 30), desc,
                      (double)free_b / (1 << 30));
            *tbe = ltx2_backend_cpu();
            ltx2_backend_describe(*tbe, desc, sizeof desc);
        }
    }
    if (st != LTX2_OK) {
        ltx2_backend_free(*opened);
        *opened = NULL;
        return st;
    }
    LTX2_LOGI(ctx, "text encoder device: %s%s", desc, chosen ? "" : " (the default: the generation's GPU when Gemma "
              "fits, else the CPU)");
    return LTX2_OK;
}

/* The prompt (and, with CFG, the negative prompt or Lightricks' default) through Gemma-3 in one
 * batch, where text_device puts it. */
ltx2_status ltx2_gen_text_from_prompts(ltx2_context *ctx, const ltx2_generate_params *p, bool need_neg,
                                     const ltx2_backend *run_be, ltx2_pipe_text *tp, ltx2_pipe_text *tn,
                                     char **enhanced) {
    /* the encoder's width x hidden states against the checkpoint's text projection, from the
     * headers alone, before anything is run */
    ltx2_gemma_config gc;
    ltx2_connectors_config cc;
    int64_t text_dim = 0;
    LTX2_TRY(ltx2_gemma_config_load(ctx, p->text_encoder, &gc));
    LTX2_TRY(ltx2_gen_ckpt_connectors(ctx, p, &cc, &text_dim));
    if (gc.hidden * (gc.layers + 1) != text_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "the text encoder %s gives %lld hidden states of %lld (%lld wide) but the checkpoint's text "
                          "projection takes %lld: not the Gemma-3 this model was trained with",
                          p->text_encoder, (long long)(gc.layers + 1), (long long)gc.hidden,
                          (long long)(gc.hidden * (gc.layers + 1)), (long long)text_dim);
    const char *prompts[2] = {p->prompt, p->negative_prompt ? p->negative_prompt : LTX2_PIPE_DEFAULT_NEGATIVE_PROMPT};
    const bool fp8 = p->text_encoder_dtype && !strcmp(p->text_encoder_dtype, "fp8");
    if (need_neg && !p->negative_prompt) LTX2_LOGI(ctx, "generate: CFG is on: Lightricks' default negative prompt");
    ltx2_pipe_text out[2];
    const ltx2_backend *tbe = NULL, *opened = NULL;
    const bool keep = ltx2_gen_text_keep(p);
    LTX2_TRY(text_device(ctx, p, &gc, need_neg ? 2 : 1, fp8, keep, run_be, &tbe, &opened));
    ltx2_status st = LTX2_OK;
    ltx2_gemma_weights *gw = NULL; /* loaded once for the enhancement and the encoding */
    if (p->enhance_prompt) {
        /* the encoder's own checkpoint rewrites the prompt first, then encodes it; the
         * enhancement's K/V cache is freed before the encoder's 1024-token rows are taken */
        /* with images, the first one (ltx-pipelines' images[0][0]) goes through Gemma's vision tower */
        const ltx2_enhance_params ep = {.system_prompt = p->enhance_system_prompt,
                                        .image = p->n_images > 0 ? p->images[0].path : NULL,
                                        .seed = p->enhance_seed, .max_new_tokens = p->enhance_max_tokens,
                                        .greedy = p->enhance_greedy != 0, .cancel = p->cancel,
                                        .cancel_user = p->cancel_user};
        st = ltx2_pipe_enhance_prompt(ctx, p->text_encoder, tbe, fp8, p->prompt, &ep, &gw, enhanced);
        if (st == LTX2_ERR_OOM && !p->text_encoder_device && !gw && tbe->device != LTX2_DEVICE_CPU) {
            /* the default placement priced the encoder's batch; the enhancement's K/V cache and LM
             * head table (or the vision tower) did not fit beside Gemma: the CPU, as when the
             * encoder itself does not fit, and the encoding follows the weights there */
            LTX2_LOGW(ctx, "%s; Gemma runs on the CPU instead (slower; --text-encoder-device chooses)",
                      ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
            tbe = ltx2_backend_cpu();
            st = ltx2_pipe_enhance_prompt(ctx, p->text_encoder, tbe, fp8, p->prompt, &ep, &gw, enhanced);
        }
        size_t b = 0, e = 0;
        if (st == LTX2_OK) ltx2_text_strip(*enhanced, strlen(*enhanced), &b, &e);
        if (st == LTX2_OK && b == e) {
            /* ltx-pipelines would encode the empty answer; an empty prompt conditions on nothing */
            LTX2_LOGW(ctx, "--enhance-prompt: the model's answer is empty or only whitespace: the prompt as given is "
                      "encoded (another --enhance-seed or a larger --enhance-max-tokens may help)");
            free(*enhanced);
            *enhanced = NULL;
        }
        if (*enhanced) prompts[0] = *enhanced;
    }
    const ltx2_text_cache_opts cache = {p->text_cache, (uint64_t)p->text_cache_max_bytes};
    if (st == LTX2_OK)
        /* the states stay on the generation's GPU for the connectors (no 385 MB a prompt up again,
         * nor down unless the text cache writes them), unless Gemma ran elsewhere */
        st = ltx2_pipe_text_encode(ctx, p->text_encoder, tbe, fp8, gw, prompts, need_neg ? 2 : 1,
                                   p->text_cache ? &cache : NULL, keep && tbe == run_be && !opened, p->cancel,
                                   p->cancel_user, out);
    if (gw) LTX2_LOGI(ctx, "text encoder: freed");
    ltx2_gemma_weights_free(gw);
    ltx2_backend_free(opened);
    LTX2_TRY(st);
    *tp = out[0];
    if (need_neg) *tn = out[1];
    return LTX2_OK;
}

/* t's states from rank 0 to every rank of world (t filled on the others): its shape, mask and hidden
 * states, the numbers moved as they are (the shape and mask as exact floats). */
static ltx2_status broadcast_states(ltx2_context *ctx, ltx2_comm *world, ltx2_pipe_text *t) {
    if (world->rank == 0) LTX2_TRY(ltx2_pipe_text_to_host(ctx, t));
    float shape[3] = {(float)t->S, (float)t->D, (float)t->L};
    LTX2_TRY(ltx2_comm_broadcast(world, ctx, shape, shape, 3, LTX2_F32, 0));
    const int64_t S = (int64_t)shape[0], D = (int64_t)shape[1], L = (int64_t)shape[2];
    if (world->rank != 0) {
        t->S = S, t->D = D, t->L = L;
        t->hidden = malloc((size_t)(S * D * L) * sizeof(float));
        t->mask = malloc((size_t)S);
        if (!t->hidden || !t->mask)
            return LTX2_ERROR(ctx, LTX2_ERR_OOM, "rank %d: the prompt's hidden states [%lld, %lld, %lld]", world->rank,
                              (long long)S, (long long)D, (long long)L);
    }
    float *mask = malloc((size_t)(S ? S : 1) * sizeof(float));
    if (!mask) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "the prompt's mask");
    for (int64_t i = 0; world->rank == 0 && i < S; i++) mask[i] = t->mask[i];
    ltx2_status st = ltx2_comm_broadcast(world, ctx, mask, mask, (size_t)S, LTX2_F32, 0);
    for (int64_t i = 0; st == LTX2_OK && world->rank != 0 && i < S; i++) t->mask[i] = mask[i] != 0.0f;
    free(mask);
    if (st == LTX2_OK) st = ltx2_comm_broadcast_chunked(world, ctx, t->hidden, (size_t)(S * D * L), LTX2_F32, 0);
    return st;
}

ltx2_status ltx2_gen_text_ranked(ltx2_context *ctx, const ltx2_generate_params *p, bool need_neg, ltx2_comm *world,
                                 const ltx2_backend *run_be, ltx2_pipe_text *tp, ltx2_pipe_text *tn, char **enhanced) {
    if (!world || world->size == 1) return ltx2_gen_text_from_prompts(ctx, p, need_neg, run_be, tp, tn, enhanced);
    *enhanced = NULL;
    ltx2_status st = LTX2_OK;
    if (world->rank == 0) {
        LTX2_TRY(ltx2_gen_text_from_prompts(ctx, p, need_neg, run_be, tp, tn, enhanced));
        LTX2_LOGI(ctx, "text: encoded on rank 0, sent to the other %d rank%s", world->size - 1,
                  world->size == 2 ? "" : "s");
        char *unused = NULL;
        st = ltx2_comm_broadcast_text(world, ctx, *enhanced, &unused);
        free(unused);
    } else {
        st = ltx2_comm_broadcast_text(world, ctx, NULL, enhanced);
    }
    if (st == LTX2_OK) st = broadcast_states(ctx, world, tp);
    if (st == LTX2_OK && need_neg) st = broadcast_states(ctx, world, tn);
    return st; /* on failure the caller frees what tp / tn hold */
}

/* The prompt contexts (the connectors on the loaded or encoded hidden states; prompts of
 * different lengths are left-padded with masked tokens to the longer one, as the tokenizer pads a
 * batch). Takes tp and tn over (freed here). */
ltx2_status ltx2_gen_text_contexts(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_pipe_models *m, bool rope_xla,
                                 bool need_neg, ltx2_pipe_text *tp, ltx2_pipe_text *tn, ltx2_pipe_context *pos,
                                 ltx2_pipe_context *neg) {
    ltx2_status st = LTX2_OK;
    if (!p->prompt) {
        st = ltx2_pipe_text_load(ctx, p->prompt_embeds, m->conn->text_dim, tp);
        if (st == LTX2_OK && need_neg) st = ltx2_pipe_text_load(ctx, p->negative_prompt_embeds, m->conn->text_dim, tn);
    }
    if (st == LTX2_OK && p->save_prompt_embeds) st = ltx2_pipe_text_save(ctx, tp, p->save_prompt_embeds);
    if (st == LTX2_OK && need_neg && tp->S != tn->S) {
        const int64_t S = tp->S > tn->S ? tp->S : tn->S;
        ltx2_log(ctx, LTX2_LOG_INFO, "generate: positive prompt %lld tokens, negative %lld: the shorter is "
                 "left-padded with masked tokens to %lld", (long long)tp->S, (long long)tn->S, (long long)S);
        st = ltx2_pipe_text_pad_left(ctx, tp, S);
        if (st == LTX2_OK) st = ltx2_pipe_text_pad_left(ctx, tn, S);
    }
    if (st == LTX2_OK) st = encode_prompt(ctx, m, rope_xla, p->prompt ? "the prompt" : p->prompt_embeds, tp, pos);
    if (st == LTX2_OK && need_neg)
        st = encode_prompt(ctx, m, rope_xla, p->prompt ? "the negative prompt" : p->negative_prompt_embeds, tn, neg);
    ltx2_pipe_text_free(tp);
    ltx2_pipe_text_free(tn);
    return st;
}

