/* Gemma-3 generation (ltx2_gemma_generate, the core of --enhance-prompt, #13 item 9) on the
 * embedded tiny Gemma against transformers' greedy generate (tests/golden/gen_gemma_generate.py):
 * - the logits after a prompt (the LM head: final-norm hidden state x the tied embedding table)
 *   within GEN_LOGITS_TOL of the reference's;
 * - every generated id equal, the prompts left-padded to a multiple of 8 as ltx-core pads them before
 *   generate (so the mask and transformers' mask-aware positions are exercised), stopping where the
 *   reference stops (an EOS id or the token budget), for plain prompts and one in the Gemma-3 chat
 *   template; a stop id ends the run with it;
 * - the generated ids, and ids with specials, CJK, emoji and byte-fallback runs, decoded to the
 *   reference tokenizer's text (skip_special_tokens true and false);
 * - bad arguments refused. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "io/safetensors.h"
#include "model/gemma_generate.h"
#include "test_util.h"
#include "text/gemma_tokenizer.h"

#define GEMMA_DIR LTX2_SOURCE_DIR "/weights/tiny/gemma"
#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/gemma_generate.safetensors"
/* fp32 against fp32: the forward's summation order and the LM head's double accumulation against
 * torch's fp32 matmul, ~1e-7 per op over two layers. */
#define GEN_LOGITS_TOL 1e-5
/* The reference's max_new_tokens and EOS ids (the metadata of the golden). */
#define GEN_MAX_NEW 24
#define GEN_N_PROMPTS 3
/* ltx-core's _pad_inputs_for_attention_alignment: left padding with the pad id to a multiple of 8 */
#define GEN_ALIGN 8
#define GEN_PAD_ID 0

static ltx2_context *g_ctx;

/* ids decoded by tok equal the golden's UTF-8 bytes `name`. */
static void check_text(const ltx2_gemma_tokenizer *tok, const ltx2_st_file *f, const int32_t *ids, int64_t n,
                       bool skip, const char *name) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    char *text = NULL;
    const ltx2_status st = ltx2_gemma_detokenize(g_ctx, tok, ids, n, skip, &text);
    CHECK(t && st == LTX2_OK, "%s: %s", name, ltx2_last_error(g_ctx));
    if (t && text) {
        const size_t len = (size_t)t->shape[0];
        CHECK(strlen(text) == len && !memcmp(text, t->data, len), "%s: decoded '%s' (%zu bytes), want %zu bytes", name,
              text, strlen(text), len);
    }
    free(text);
}

/* An I64 golden vector as int32 (malloc'd); *n its length. */
static int32_t *ids_of(const ltx2_st_file *f, const char *name, int64_t *n) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    CHECK(t && t->ndim == 1 && t->dtype == LTX2_I64, "golden %s: an I64 vector", name);
    if (!t || t->ndim != 1 || t->dtype != LTX2_I64) return NULL;
    *n = t->shape[0];
    int32_t *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < *n; i++) {
        int64_t a;
        memcpy(&a, (const char *)t->data + 8 * i, 8);
        v[i] = (int32_t)a;
    }
    return v;
}

int main(void) {
    g_ctx = test_context_quiet();
    if (!g_ctx) return 1;
    ltx2_st_file *f = NULL;
    ltx2_gemma_weights *w = NULL;
    if (ltx2_st_open(g_ctx, GOLDEN, &f) != LTX2_OK ||
        ltx2_gemma_weights_load_on(g_ctx, ltx2_backend_cpu(), LTX2_F32, GEMMA_DIR, &w) != LTX2_OK) {
        CHECK(0, "load: %s", ltx2_last_error(g_ctx));
        ltx2_st_close(f);
        ltx2_context_free(g_ctx);
        return test_finish();
    }
    /* the tokenizer needs SentencePiece (deps.sh); without it the decoding checks are skipped, said */
    ltx2_gemma_tokenizer *tok = NULL;
    if (ltx2_gemma_tokenizer_load(g_ctx, GEMMA_DIR "/tokenizer.model", &tok) != LTX2_OK)
        printf("decoding not checked: %s\n", ltx2_last_error(g_ctx));
    const int32_t stop[2] = {1, 106};
    const ltx2_gemma_gen_params gp = {.max_new_tokens = GEN_MAX_NEW, .stop_ids = stop, .n_stop = 2,
                                      .align = GEN_ALIGN, .pad_id = GEN_PAD_ID};
    for (int i = 0; i < GEN_N_PROMPTS; i++) {
        char name[32];
        int64_t np = 0, ng = 0, n_out = 0;
        snprintf(name, sizeof name, "prompt.%d", i);
        int32_t *prompt = ids_of(f, name, &np);
        snprintf(name, sizeof name, "generated.%d", i);
        int32_t *want = ids_of(f, name, &ng);
        int32_t *got = malloc(GEN_MAX_NEW * sizeof *got);
        if (prompt && want && got) {
            if (i == 0) {
                float *lg = malloc((size_t)w->cfg.vocab * sizeof *lg);
                const ltx2_st_tensor *rl = ltx2_st_find(f, "logits.0");
                const bool ok = lg && rl && ltx2_gemma_logits_last(g_ctx, w, prompt, NULL, NULL, np, lg) == LTX2_OK;
                CHECK(ok, "logits: %s", ltx2_last_error(g_ctx));
                if (ok) {
                    const double e = test_rel_l2(lg, rl->data, w->cfg.vocab);
                    printf("prompt 0: first-step logits rel-L2 %.3g to transformers'\n", e);
                    CHECK(e <= GEN_LOGITS_TOL, "logits rel-L2 %.3g", e);
                }
                free(lg);
            }
            /* the padded prefill: the padding masked, positions counted over real tokens (RoPE is
             * relative, so a constant shift moves only roundings; the mask is what matters) */
            if (i == 1) {
                const int64_t pad = (GEN_ALIGN - np % GEN_ALIGN) % GEN_ALIGN, n = pad + np;
                int32_t *pi = malloc((size_t)n * sizeof *pi);
                uint8_t *pm = malloc((size_t)n);
                int64_t *pp = malloc((size_t)n * sizeof *pp);
                float *lg = malloc((size_t)w->cfg.vocab * sizeof *lg);
                const ltx2_st_tensor *rl = ltx2_st_find(f, "logits_padded.1");
                for (int64_t k = 0; pi && pm && pp && k < n; k++) {
                    pi[k] = k < pad ? GEN_PAD_ID : prompt[k - pad];
                    pm[k] = k >= pad;
                    pp[k] = k < pad ? 1 : k - pad;
                }
                const bool ok = pi && pm && pp && lg && rl && pad > 0 &&
                                ltx2_gemma_logits_last(g_ctx, w, pi, pm, pp, n, lg) == LTX2_OK;
                CHECK(ok, "padded logits: %s", ltx2_last_error(g_ctx));
                if (ok) {
                    const double e = test_rel_l2(lg, rl->data, w->cfg.vocab);
                    printf("prompt 1 left-padded by %lld: logits rel-L2 %.3g to transformers'\n", (long long)pad, e);
                    CHECK(e <= GEN_LOGITS_TOL, "padded logits rel-L2 %.3g", e);
                }
                free(pi);
                free(pm);
                free(pp);
                free(lg);
            }
            const ltx2_status st = ltx2_gemma_generate(g_ctx, w, prompt, np, &gp, got, &n_out);
            CHECK(st == LTX2_OK, "prompt %d: generate: %s", i, ltx2_last_error(g_ctx));
            bool same = st == LTX2_OK && n_out == ng;
            for (int64_t t = 0; same && t < ng; t++) same = got[t] == want[t];
            CHECK(same, "prompt %d: %lld ids generated, %lld expected (first: %d vs %d)", i, (long long)n_out,
                  (long long)ng, n_out ? got[0] : -1, ng ? want[0] : -1);
            if (same) printf("prompt %d (%lld ids): %lld new ids equal transformers' greedy generate\n", i,
                             (long long)np, (long long)ng);
            /* the tiny random model repeats itself and never says EOS: a stop id equal to its first
             * token ends the run there, that token included */
            const ltx2_gemma_gen_params gs = {.max_new_tokens = GEN_MAX_NEW, .stop_ids = want, .n_stop = 1,
                                              .align = GEN_ALIGN, .pad_id = GEN_PAD_ID};
            CHECK(ng > 0 && ltx2_gemma_generate(g_ctx, w, prompt, np, &gs, got, &n_out) == LTX2_OK && n_out == 1 &&
                      got[0] == want[0],
                  "prompt %d: stop id %d: %lld ids", i, ng ? want[0] : -1, (long long)n_out);
        }
        if (tok && want) {
            snprintf(name, sizeof name, "text.%d", i);
            check_text(tok, f, want, ng, true, name);
        }
        free(prompt);
        free(want);
        free(got);
    }
    if (tok) {
        int64_t nd = 0;
        int32_t *d = ids_of(f, "decode.ids", &nd);
        if (d) {
            check_text(tok, f, d, nd, true, "decode.skip");
            check_text(tok, f, d, nd, false, "decode.keep");
        }
        free(d);
        int32_t out_of_range = (int32_t)tok->vocab;
        char *text = NULL;
        CHECK(ltx2_gemma_detokenize(g_ctx, tok, &out_of_range, 1, true, &text) == LTX2_ERR_INVALID_ARG && !text,
              "an id past the vocabulary is refused");
    }
    int32_t one = 2, out[1];
    int64_t n_out = 0;
    const ltx2_gemma_gen_params bad = {.max_new_tokens = -1};
    CHECK(ltx2_gemma_generate(g_ctx, w, &one, 1, &bad, out, &n_out) == LTX2_ERR_INVALID_ARG,
          "a negative token budget is refused");
    const int32_t big = (int32_t)w->cfg.vocab;
    const ltx2_gemma_gen_params gp1 = {.max_new_tokens = 1};
    CHECK(ltx2_gemma_generate(g_ctx, w, &big, 1, &gp1, out, &n_out) != LTX2_OK &&
              strstr(ltx2_last_error(g_ctx), "outside the"),
          "an id past the vocabulary is refused: %s", ltx2_last_error(g_ctx));
    ltx2_gemma_tokenizer_free(tok);
    ltx2_gemma_weights_free(w);
    ltx2_st_close(f);
    ltx2_context_free(g_ctx);
    return test_finish();
}
