/* --enhance-prompt (issue #13 item 9): the prompt rewritten by the Gemma-3 checkpoint that encodes
 * it, as ltx-pipelines does before encoding when no separate enhancer is given (ltx-core 400fd31,
 * LTXGemmaTextEncoder.enhance_t2v and _enhance; ltx-pipelines' generate_enhanced_prompt): the system
 * prompt and "user prompt: ..." in Gemma-3's chat template, tokenised as Gemma3Processor does it
 * (BOS added in front of the template's own, so two), left-padded to a multiple of 8, sampled at
 * temperature 0.7 with the checkpoint's generation_config top-k / top-p, at most 512 new tokens,
 * decoded without special tokens and cleaned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/timer.h"
#include "io/file.h"
#include "io/json.h"
#include "model/gemma.h"
#include "model/gemma_generate.h"
#include "model/gemma_vision.h"
#include "pipeline/memory_plan.h"
#include "pipeline/pipeline.h"
#include "text/gemma_tokenizer.h"
#include "text/prompt_text.h"

/* ltx-core's GEMMA3_ENHANCE_GENERATION_KWARGS and its alignment padding */
#define ENHANCE_TEMPERATURE 0.7f
#define ENHANCE_ALIGN 8
#define ENHANCE_MAX_STOP 8

/* The stop ids and warpers generate takes from dir/generation_config.json (else config.json's
 * eos_token_id and transformers' defaults). */
static ltx2_status read_generation_config(ltx2_context *ctx, const char *dir, ltx2_gemma_sampling *s, int32_t *stop,
                                          int64_t *n_stop) {
    s->top_k = LTX2_GEMMA_DEFAULT_TOP_K, s->top_p = LTX2_GEMMA_DEFAULT_TOP_P;
    *n_stop = 0;
    const char *names[2] = {"generation_config.json", "config.json"};
    for (int f = 0; f < 2 && *n_stop == 0; f++) {
        char *path = ltx2_path_join(dir, names[f]);
        if (!path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: path");
        ltx2_json_doc *doc = NULL;
        ltx2_status st = LTX2_OK;
        if (ltx2_path_is_file(path)) st = ltx2_json_parse_file(ctx, path, &doc);
        const ltx2_json *root = doc ? ltx2_json_root(doc) : NULL;
        if (root && f == 0) {
            double p;
            if (ltx2_json_get_int(root, "top_k", &s->top_k) && s->top_k < 0)
                st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: top_k %lld < 0", path, (long long)s->top_k);
            if (ltx2_json_get_num(root, "top_p", &p)) s->top_p = (float)p;
        }
        const ltx2_json *eos = root ? ltx2_json_get(root, "eos_token_id") : NULL;
        if (root && !eos && ltx2_json_get(root, "text_config"))
            eos = ltx2_json_get(ltx2_json_get(root, "text_config"), "eos_token_id");
        const size_t n = !eos ? 0 : eos->type == LTX2_JSON_ARRAY ? eos->count : 1;
        for (size_t i = 0; st == LTX2_OK && i < n; i++) {
            const ltx2_json *e = eos->type == LTX2_JSON_ARRAY ? ltx2_json_at(eos, i) : eos;
            if (e->type != LTX2_JSON_NUMBER || !e->is_int || e->integer < 0 || e->integer > INT32_MAX ||
                *n_stop == ENHANCE_MAX_STOP)
                st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: eos_token_id must be up to %d token ids", path,
                                ENHANCE_MAX_STOP);
            else stop[(*n_stop)++] = (int32_t)e->integer;
        }
        ltx2_json_free(doc);
        free(path);
        LTX2_TRY(st);
    }
    if (*n_stop == 0) stop[(*n_stop)++] = 1; /* Gemma's <eos> */
    return LTX2_OK;
}

/* need (runtime included) against what be has free: logged, refused with the advice. */
static ltx2_status fits(ltx2_context *ctx, const ltx2_backend *be, size_t free_b, uint64_t need, const char *what,
                        const char *advice) {
    const double gib = 1 << 30;
    LTX2_LOGI(ctx, "enhance memory: %s: %.2f GiB needed, %.2f GiB free", what, (double)need / gib,
              (double)free_b / gib);
    if (need > free_b)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt enhancement needs %.2f GiB on %s for %s but %.2f GiB are free: %s",
                          (double)need / gib, be->name, what, (double)free_b / gib, advice);
    return LTX2_OK;
}

/* Gemma, the prompt's forward and the K/V cache of `tokens` rows against what be has free,
 * before the weights load (the encoder's own check in generate_text.c prices its 2 x 1024 batch). */
static ltx2_status check_memory(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8, ltx2_dtype dt,
                                int64_t tokens) {
    size_t free_b = 0, total_b = 0;
    if (!be->mem_info) return LTX2_OK;
    LTX2_TRY(be->mem_info(be, ctx, &free_b, &total_b));
    ltx2_gemma_config gc;
    LTX2_TRY(ltx2_gemma_config_load(ctx, dir, &gc));
    /* + the tied table for the LM head on the device (the encoder keeps it on the host) */
    const uint64_t need = ltx2_gemma_device_bytes(&gc, 1, tokens, fp8) +
                          ltx2_gemma_kv_bytes(&gc, tokens, ltx2_dtype_size(dt)) +
                          (uint64_t)(gc.vocab * gc.hidden) * ltx2_dtype_size(dt) + LTX2_MEM_RUNTIME_BYTES;
    char what[96];
    snprintf(what, sizeof what, "Gemma with a %lld-token K/V cache and the LM head's table", (long long)tokens);
    return fits(ctx, be, free_b, need, what,
                "use --text-encoder-device cpu, --text-encoder-dtype fp8 or a smaller --enhance-max-tokens");
}

/* The vision tower and its forward against what be has free, before the tower loads (it is freed
 * before Gemma's language model loads, so the two are priced apart). */
static ltx2_status check_vision_memory(ltx2_context *ctx, const char *dir, const ltx2_backend *be, ltx2_dtype dt) {
    size_t free_b = 0, total_b = 0;
    if (!be->mem_info) return LTX2_OK;
    LTX2_TRY(be->mem_info(be, ctx, &free_b, &total_b));
    ltx2_gemma_vision_config vc;
    LTX2_TRY(ltx2_gemma_vision_config_load(ctx, dir, &vc));
    return fits(ctx, be, free_b, ltx2_gemma_vision_device_bytes(&vc, dt) + LTX2_MEM_RUNTIME_BYTES,
                "Gemma's vision tower", "use --text-encoder-device cpu");
}

/* The system prompt's text: ep's file, else the one (named `name`) in the Gemma directory. */
static ltx2_status read_system_prompt(ltx2_context *ctx, const char *dir, const char *path_in, const char *name,
                                      char **out) {
    *out = NULL;
    char *path = path_in ? strdup(path_in) : ltx2_path_join(dir, name);
    if (!path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: path");
    ltx2_status st = LTX2_OK;
    if (!path_in && !ltx2_path_is_file(path))
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                        "--enhance-prompt needs Lightricks' Gemma-3 %s system prompt, which is not part of this "
                        "engine: pass --enhance-system-prompt FILE (ltx-core ships it as "
                        "ltx_core/text_encoders/gemma/encoders/prompts/%s) or put it in the Gemma directory as %s",
                        strcmp(name, LTX2_ENHANCE_SYSTEM_PROMPT_FILE) ? "image-to-video" : "text-to-video", name, path);
    size_t n = 0;
    if (st == LTX2_OK) st = ltx2_file_read_all(ctx, path, out, &n);
    if (st == LTX2_OK && (n == 0 || strlen(*out) != n))
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "system prompt %s: %s", path, n ? "holds a NUL byte" : "empty");
    if (st != LTX2_OK) free(*out), *out = NULL;
    free(path);
    return st;
}

/* The image's features through the checkpoint's vision tower on be (loaded and freed here, before
 * the language model loads), and the tower's config. */
static ltx2_status image_features(ltx2_context *ctx, const char *dir, const ltx2_backend *be, ltx2_dtype dt,
                                  const char *image, ltx2_gemma_vision_config *vc, float **features) {
    *features = NULL;
    ltx2_gemma_vision_weights *vw = NULL;
    LTX2_TRY(check_vision_memory(ctx, dir, be, dt));
    LTX2_TRY(ltx2_gemma_vision_load(ctx, be, dt, dir, &vw));
    *vc = vw->cfg;
    const int64_t n_px = vc->channels * vc->image_size * vc->image_size;
    float *px = malloc((size_t)n_px * sizeof *px);
    *features = malloc((size_t)(vc->mm_tokens * vc->text_hidden) * sizeof **features);
    ltx2_status st = px && *features ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: image features");
    if (st == LTX2_OK && vc->channels != 3)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: a vision tower of %lld channels (RGB: 3)", dir,
                        (long long)vc->channels);
    if (st == LTX2_OK) st = ltx2_enhance_image_pixels(ctx, image, vc->image_size, px);
    if (st == LTX2_OK) st = ltx2_gemma_vision_forward(ctx, vw, px, *features);
    if (st == LTX2_OK)
        LTX2_LOGI(ctx, "enhance: %s through the vision tower (%lld px, %lld layers) into %lld image tokens", image,
                  (long long)vc->image_size, (long long)vc->layers, (long long)vc->mm_tokens);
    if (st != LTX2_OK) free(*features), *features = NULL;
    free(px);
    ltx2_gemma_vision_free(vw);
    return st;
}

/* The request's ids: the chat text encoded, or with an image its two halves around <start_of_image>,
 * the image tokens and <end_of_image> (the second half's own BOS dropped). */
static ltx2_status chat_ids(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *system, const char *prompt,
                            const ltx2_gemma_vision_config *vc, int32_t **ids, int64_t *n) {
    if (!vc) {
        char *chat = NULL;
        LTX2_TRY(ltx2_gemma3_enhance_chat(ctx, system, prompt, &chat));
        const ltx2_status st = ltx2_gemma_encode(ctx, tok, chat, ids, n);
        free(chat);
        return st;
    }
    char *before = NULL, *after = NULL;
    int32_t *a = NULL, *b = NULL;
    int64_t na = 0, nb = 0;
    LTX2_TRY(ltx2_gemma3_enhance_chat_image(ctx, system, prompt, &before, &after));
    ltx2_status st = ltx2_gemma_encode(ctx, tok, before, &a, &na);
    if (st == LTX2_OK) st = ltx2_gemma_encode(ctx, tok, after, &b, &nb);
    const int64_t total = na + 2 + vc->mm_tokens + (nb - 1);
    if (st == LTX2_OK && !(*ids = malloc((size_t)total * sizeof **ids))) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: ids");
    if (st == LTX2_OK) {
        int32_t *p = *ids;
        memcpy(p, a, (size_t)na * sizeof *p), p += na;
        *p++ = vc->boi_token;
        for (int64_t i = 0; i < vc->mm_tokens; i++) *p++ = vc->image_token;
        *p++ = vc->eoi_token;
        memcpy(p, b + 1, (size_t)(nb - 1) * sizeof *p);
        *n = total;
    }
    free(before), free(after), free(a), free(b);
    return st;
}

ltx2_status ltx2_pipe_enhance_prompt(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                     const char *prompt, const ltx2_enhance_params *ep, ltx2_gemma_weights **w_io,
                                     char **out) {
    *out = NULL;
    if (ep->max_new_tokens < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "enhance: at most %lld new tokens (>= 1)",
                          (long long)ep->max_new_tokens);
    const double t0 = ltx2_timer_now();
    ltx2_gemma_gen_params gp = {.max_new_tokens = ep->max_new_tokens, .align = ENHANCE_ALIGN, .cancel = ep->cancel,
                                .cancel_user = ep->cancel_user};
    gp.sampling = (ltx2_gemma_sampling){.sample = !ep->greedy, .temperature = ENHANCE_TEMPERATURE, .seed = ep->seed};
    int32_t stop[ENHANCE_MAX_STOP];
    char *system = NULL, *tok_path = ltx2_path_join(dir, "tokenizer.model"), *text = NULL;
    int32_t *ids = NULL, *gen = NULL;
    float *features = NULL;
    ltx2_gemma_vision_config vc = {0};
    const ltx2_dtype dt = be->device == LTX2_DEVICE_CPU ? LTX2_F32 : LTX2_BF16;
    int64_t n_ids = 0, n_gen = 0;
    ltx2_gemma_tokenizer *tok = NULL;
    ltx2_status st = tok_path ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: path");
    if (st == LTX2_OK) st = read_generation_config(ctx, dir, &gp.sampling, stop, &gp.n_stop);
    gp.stop_ids = stop;
    if (st == LTX2_OK)
        st = read_system_prompt(ctx, dir, ep->system_prompt,
                                ep->image ? LTX2_ENHANCE_I2V_SYSTEM_PROMPT_FILE : LTX2_ENHANCE_SYSTEM_PROMPT_FILE, &system);
    if (st == LTX2_OK) st = ltx2_gemma_tokenizer_load(ctx, tok_path, &tok);
    if (st == LTX2_OK && ep->image) st = image_features(ctx, dir, be, dt, ep->image, &vc, &features);
    if (st == LTX2_OK) st = chat_ids(ctx, tok, system, prompt, ep->image ? &vc : NULL, &ids, &n_ids);
    const ltx2_gemma_images img = {ep->image ? vc.image_token : 0, features, ep->image ? vc.mm_tokens : 0};
    if (ep->image) gp.images = &img;
    if (st == LTX2_OK && !*w_io) {
        st = check_memory(ctx, dir, be, fp8, dt, n_ids + ENHANCE_ALIGN + gp.max_new_tokens);
        if (st == LTX2_OK) st = ltx2_pipe_gemma_load(ctx, dir, be, fp8, w_io);
    }
    const ltx2_gemma_weights *w = *w_io;
    if (st == LTX2_OK) gp.pad_id = tok->pad;
    if (st == LTX2_OK && tok->vocab > w->cfg.vocab)
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s has %lld pieces but the Gemma checkpoint's embedding table only %lld "
                        "rows: the tokenizer and the model do not belong together",
                        tok_path, (long long)tok->vocab, (long long)w->cfg.vocab);
    if (st == LTX2_OK && !(gen = malloc((size_t)gp.max_new_tokens * sizeof *gen)))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: %lld tokens", (long long)gp.max_new_tokens);
    if (st == LTX2_OK) {
        LTX2_LOGI(ctx, "enhance: Gemma-3 on %s, a %lld-token chat prompt, %s, at most %lld new tokens", be->name,
                  (long long)n_ids, ep->greedy ? "greedy" : "sampling (temperature 0.7)", (long long)gp.max_new_tokens);
        if (!ep->greedy)
            LTX2_LOGI(ctx, "enhance: top_k %lld, top_p %g, seed %llu (our Philox draws: the text differs from "
                      "ltx-pipelines', whose draws are torch's)", (long long)gp.sampling.top_k,
                      (double)gp.sampling.top_p, (unsigned long long)ep->seed);
        st = ltx2_gemma_generate(ctx, w, ids, n_ids, &gp, gen, &n_gen);
    }
    if (st == LTX2_OK) st = ltx2_gemma_detokenize(ctx, tok, gen, n_gen, true, &text);
    if (st == LTX2_OK) {
        ltx2_enhance_clean(text);
        LTX2_LOGI(ctx, "enhance: %lld tokens in %.2f s; enhanced prompt: \"%s\"", (long long)n_gen,
                  ltx2_timer_now() - t0, text);
        *out = text;
        text = NULL;
    } else {
        ltx2_error_prefix(ctx, "--enhance-prompt");
    }
    ltx2_gemma_tokenizer_free(tok);
    free(system), free(tok_path), free(text), free(ids), free(gen), free(features);
    return st;
}
