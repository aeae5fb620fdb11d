/* Prompt enhancement (--enhance-prompt, #13 item 9) on the embedded tiny Gemma against ltx-core's
 * _enhance as tests/golden/gen_gemma_enhance.py runs it:
 * - the chat text of (system prompt, prompt) byte-equal to Gemma-3's template's, and its ids equal
 *   to Gemma3Processor's (two BOS);
 * - the K/V-cached decoding: each step's final hidden state within GEN_CACHE_TOL of the whole
 *   forward over the same tokens, past the sliding window;
 * - ltx2_pipe_enhance_prompt, greedy, equal to transformers' generate + decode + clean_response;
 * - the sampling distribution (temperature, top-k, top-p) equal to transformers' warpers: the same
 *   tokens kept, probabilities within GEN_PROB_TOL; the seeded draw reproducible, top-k 1 equal
 *   to greedy, and its frequencies within GEN_FREQ_SIGMAS of the probabilities;
 * - clean_response on crafted answers; a missing or empty system prompt refused with a message;
 * - with an image (enhance_i2v): the pixels the processor makes of it within one 8-bit level, the
 *   chat text around the image and its ids equal, and the greedy enhancement's text equal. */
#define _DEFAULT_SOURCE /* mkstemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "device_mem_stub.h"
#include "io/safetensors.h"
#include "model/gemma_generate.h"
#include "pipeline/pipeline.h"
#include "test_util.h"
#include "text/gemma_tokenizer.h"
#include "text/prompt_text.h"

#define GEMMA_DIR LTX2_SOURCE_DIR "/weights/tiny/gemma"
#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/gemma_enhance.safetensors"
#define SYSTEM_FILE LTX2_SOURCE_DIR "/tests/data/enhance_system_prompt.txt"
#define IMAGE_FILE LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png"
#define IMAGE_BIG_FILE LTX2_SOURCE_DIR "/tests/golden/data/enhance_image_big.png"
/* the 8-bit images equal (both resizes are the libraries' fixed-point ones); the normalisation's
 * float rounding alone (one 8-bit level is 2 / 255) */
#define GEN_PIXEL_TOL 1e-6
/* the golden's max_new_tokens */
#define GEN_MAX_NEW 16
/* fp32 cached against fp32 whole: only the summation order of attention over the rows differs */
#define GEN_CACHE_TOL 1e-5
/* our softmax sums in double, torch's in float: ~1 float ulp of the largest probability */
#define GEN_PROB_TOL 1e-6
/* draws of the frequency check, and how far (in binomial standard deviations, plus a count) a
 * token's frequency may sit from its probability; Philox is deterministic, so this cannot flake */
#define GEN_DRAWS 20000
#define GEN_FREQ_SIGMAS 5.0

static ltx2_context *g_ctx;

/* The golden's UTF-8 tensor `name` as a C string (malloc'd). */
static char *text_of(const ltx2_st_file *f, const char *name) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    CHECK(t && t->ndim == 1 && t->dtype == LTX2_U8, "golden %s: a U8 vector", name);
    if (!t) return NULL;
    char *s = malloc((size_t)t->shape[0] + 1);
    if (s) memcpy(s, t->data, (size_t)t->shape[0]), s[t->shape[0]] = '\0';
    return s;
}

static int64_t i64_at(const ltx2_st_tensor *t, int64_t i) {
    int64_t a;
    memcpy(&a, (const char *)t->data + 8 * i, 8);
    return a;
}

/* Prefill n0 tokens of ids[n] into a cache, then one token a call: each step's final hidden state
 * against the whole forward over the same prefix. */
static void check_cache(const ltx2_gemma_weights *w, const int32_t *ids, int64_t n, int64_t n0) {
    const int64_t D = w->cfg.hidden;
    float *a = malloc((size_t)D * sizeof *a), *b = malloc((size_t)D * sizeof *b);
    uint8_t *ones = malloc((size_t)n);
    int64_t *pos = malloc((size_t)n * sizeof *pos);
    ltx2_gemma_kv *kv = NULL;
    CHECK(a && b && ones && pos && ltx2_gemma_kv_create(g_ctx, w, n, &kv) == LTX2_OK, "cache: %s", ltx2_last_error(g_ctx));
    for (int64_t i = 0; ones && pos && i < n; i++) ones[i] = 1, pos[i] = i;
    double worst = 0.0;
    for (int64_t t = n0; kv && t <= n; t++) {
        ltx2_gemma_last_row ka = {w->be, w->cfg.layers, t == n0 ? n0 : 1, D, a}, kb = {w->be, w->cfg.layers, t, D, b};
        const int64_t at = t == n0 ? 0 : t - 1, len = t == n0 ? n0 : 1;
        const bool ok = ltx2_gemma_forward_kv(g_ctx, w, kv, ids + at, ones, pos + at, len, ltx2_gemma_keep_last, &ka) == LTX2_OK &&
                        ltx2_gemma_forward_pos(g_ctx, w, ids, ones, pos, 1, t, ltx2_gemma_keep_last, &kb) == LTX2_OK;
        CHECK(ok, "cache step %lld: %s", (long long)t, ltx2_last_error(g_ctx));
        if (!ok) break;
        const double e = test_rel_l2(a, b, D);
        worst = e > worst ? e : worst;
    }
    printf("K/V cache: %lld prompt + %lld cached steps (window %lld): final hidden rel-L2 <= %.3g of the whole "
           "forward\n", (long long)n0, (long long)(n - n0), (long long)w->cfg.sliding_window, worst);
    CHECK(worst <= GEN_CACHE_TOL, "cached decoding rel-L2 %.3g", worst);
    int32_t one = ids[0];
    CHECK(kv && ltx2_gemma_forward_kv(g_ctx, w, kv, &one, ones, pos, 1, ltx2_gemma_keep_last, &(ltx2_gemma_last_row){w->be, 0, 1, D, a}) != LTX2_OK,
          "a full cache refuses another token");
    ltx2_gemma_kv_free(kv);
    free(a), free(b), free(ones), free(pos);
}

static int cmp_float(const void *x, const void *y) {
    const float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* Every warp case of the golden: the kept tokens and their probabilities. */
static void check_warps(const ltx2_st_file *f) {
    int n_cases = 0;
    for (int i = 0;; i++, n_cases++) {
        /* the file packs tensors without alignment: the F32 vectors are read out as copies */
        char name[64], pname[64];
        snprintf(name, sizeof name, "warp.%d.logits", i);
        const ltx2_st_tensor *lt = ltx2_st_find(f, name);
        if (!lt) break;
        float *lg = ltx2_st_read_f32(g_ctx, f, name, NULL);
        snprintf(pname, sizeof pname, "warp.%d.probs", i);
        const ltx2_st_tensor *pt = ltx2_st_find(f, pname);
        float *want = ltx2_st_read_f32(g_ctx, f, pname, NULL);
        snprintf(name, sizeof name, "warp.%d.params", i);
        const ltx2_st_tensor *qt = ltx2_st_find(f, name);
        double q[3] = {1.0, 0.0, 1.0};
        if (qt) memcpy(q, qt->data, sizeof q);
        const int64_t V = lt->shape[0];
        const ltx2_gemma_sampling s = {true, (float)q[0], (int64_t)q[1], (float)q[2], 0};
        float *p = malloc((size_t)V * sizeof *p);
        const bool ok = pt && qt && p && lg && want && ltx2_gemma_warp(g_ctx, &s, lg, V, p) == LTX2_OK;
        CHECK(ok, "warp %d: %s", i, ltx2_last_error(g_ctx));
        /* torch.sort is not stable on long rows: among tokens tied at the top-p cut, which ones it
         * keeps follows its sort's internals. Such tokens are equally likely, so the test asks for
         * the same count, membership differences only among tokens scoring exactly the cut, and the
         * same probabilities as a sorted list. */
        float cut = INFINITY;
        for (int64_t v = 0; v < V; v++)
            if (want[v] > 0.0f && lg[v] < cut) cut = lg[v];
        int64_t kept = 0, kept_ref = 0, swapped = 0, off_cut = 0;
        for (int64_t v = 0; ok && v < V; v++) {
            kept += p[v] > 0.0f, kept_ref += want[v] > 0.0f;
            if ((want[v] > 0.0f) != (p[v] > 0.0f)) *(lg[v] == cut ? &swapped : &off_cut) += 1;
        }
        float *a = malloc((size_t)V * sizeof *a), *b = malloc((size_t)V * sizeof *b);
        double err = INFINITY;
        if (ok && a && b) {
            memcpy(a, p, (size_t)V * sizeof *a), memcpy(b, want, (size_t)V * sizeof *b);
            qsort(a, (size_t)V, sizeof *a, cmp_float), qsort(b, (size_t)V, sizeof *b, cmp_float);
            err = 0.0;
            for (int64_t v = 0; v < V; v++) err = fmax(err, fabs((double)a[v] - b[v]));
        }
        CHECK(ok && kept == kept_ref && !off_cut && err <= GEN_PROB_TOL,
              "warp %d (T %g, top_k %g, top_p %g): %lld kept (transformers %lld), %lld differ off the cut, max |dp| %.3g",
              i, q[0], q[1], q[2], (long long)kept, (long long)kept_ref, (long long)off_cut, err);
        if (i % 5 == 0 || swapped)
            printf("warp %d (T %g, top_k %g, top_p %g): %lld tokens kept as transformers keeps them (%lld swapped among "
                   "ties at the cut), max |dp| %.2g\n", i, q[0], q[1], q[2], (long long)kept, (long long)swapped, err);
        free(p), free(a), free(b), free(lg), free(want);
    }
    CHECK(n_cases >= 15, "golden warp cases: %d", n_cases);
}

/* The seeded draw: reproducible, top-k 1 is the argmax (on logits without ties: with them top-k
 * keeps every tied maximum), frequencies follow the probabilities (on logits with ties). */
static void check_draws(const ltx2_st_file *f) {
    const ltx2_st_tensor *lt = ltx2_st_find(f, "warp.13.logits"), *untied = ltx2_st_find(f, "warp.5.logits");
    CHECK(lt && untied, "golden warp.13 and warp.5");
    if (!lt || !untied) return;
    const int64_t V = lt->shape[0];
    const ltx2_gemma_sampling s = {true, 1.0f, 5, 1.0f, 1234}, k1 = {true, 0.7f, 1, 1.0f, 99};
    const ltx2_gemma_sampling greedy = {false, 1.0f, 0, 1.0f, 0};
    float *p = malloc((size_t)V * sizeof *p), *want = malloc((size_t)V * sizeof *want);
    int64_t *count = calloc((size_t)V, sizeof *count);
    float *lg = ltx2_st_read_f32(g_ctx, f, "warp.13.logits", NULL);
    float *lg_untied = ltx2_st_read_f32(g_ctx, f, "warp.5.logits", NULL);
    bool ok = p && want && count && lg && lg_untied && ltx2_gemma_warp(g_ctx, &s, lg, V, want) == LTX2_OK;
    int32_t t0 = -1, t1 = -2, best = -3, top = -4;
    for (int64_t d = 0; ok && d < GEN_DRAWS; d++) {
        int32_t t;
        ok = ltx2_gemma_next_token(g_ctx, &s, lg, V, d, p, &t) == LTX2_OK && t >= 0 && t < V && want[t] > 0.0f;
        if (ok) count[t]++;
        if (d == 7) t0 = t;
    }
    ok = ok && ltx2_gemma_next_token(g_ctx, &s, lg, V, 7, p, &t1) == LTX2_OK;
    ok = ok && ltx2_gemma_next_token(g_ctx, &greedy, lg_untied, V, 0, p, &best) == LTX2_OK;
    ok = ok && ltx2_gemma_next_token(g_ctx, &k1, lg_untied, V, 3, p, &top) == LTX2_OK;
    CHECK(ok, "draws: %s", ltx2_last_error(g_ctx));
    CHECK(t0 == t1, "the same seed and step draw the same token (%d, %d)", t0, t1);
    CHECK(best == top, "top-k 1 sampling %d equals greedy %d", top, best);
    double worst = 0.0;
    for (int64_t v = 0; ok && v < V; v++) {
        const double pv = want[v], fr = (double)count[v] / GEN_DRAWS, sd = sqrt(pv * (1.0 - pv) / GEN_DRAWS);
        const double z = fabs(fr - pv) / (sd + 1.0 / GEN_DRAWS);
        worst = z > worst ? z : worst;
    }
    printf("sampling: %d draws, every frequency within %.2f sigma of its probability\n", GEN_DRAWS, worst);
    CHECK(worst <= GEN_FREQ_SIGMAS, "a frequency %.2f sigma off its probability", worst);
    free(p), free(want), free(count), free(lg), free(lg_untied);
}

static void check_clean(const ltx2_st_file *f) {
    for (int k = 0;; k++) {
        char in_name[32], out_name[32];
        snprintf(in_name, sizeof in_name, "clean.%d.in", k);
        snprintf(out_name, sizeof out_name, "clean.%d.out", k);
        if (!ltx2_st_find(f, in_name)) {
            CHECK(k >= 6, "golden clean cases: %d", k);
            break;
        }
        char *in = text_of(f, in_name), *want = text_of(f, out_name);
        if (in && want) {
            ltx2_enhance_clean(in);
            CHECK(!strcmp(in, want), "clean %d: '%s', want '%s'", k, in, want);
        }
        free(in), free(want);
    }
}

/* The pixels ltx2_enhance_image_pixels makes of image against the golden's name. */
static void check_pixels(const ltx2_st_file *f, const char *name, const char *image) {
    int64_t n = 0;
    float *want = ltx2_st_read_f32(g_ctx, f, name, &n);
    const int64_t side = (int64_t)llround(sqrt((double)(n / 3)));
    float *px = malloc((size_t)(n ? n : 1) * sizeof *px);
    CHECK(want && px && ltx2_enhance_image_pixels(g_ctx, image, side, px) == LTX2_OK, "%s: %s", image,
          ltx2_last_error(g_ctx));
    if (want && px) {
        double worst = 0.0;
        int64_t off = 0;
        for (int64_t i = 0; i < n; i++) {
            const double d = fabs((double)px[i] - want[i]);
            worst = fmax(worst, d), off += d > 1e-6;
        }
        printf("%s: %lld of %lld differ from the processor's, by at most %.3g (one level: %.3g)\n",
               image, (long long)off, (long long)n, worst, 2.0 / 255.0);
        CHECK(worst <= GEN_PIXEL_TOL, "pixels off by %.3g", worst);
    }
    free(want), free(px);
}

/* enhance_i2v against the golden (see the top of the file). */
static void check_i2v(const ltx2_st_file *f, const ltx2_gemma_tokenizer *tok, const char *system, const char *prompt) {
    check_pixels(f, "i2v.pixels", IMAGE_FILE);
    check_pixels(f, "i2v.pixels_big", IMAGE_BIG_FILE);
    char *before = NULL, *after = NULL, *wb = text_of(f, "i2v.before"), *wa = text_of(f, "i2v.after");
    CHECK(ltx2_gemma3_enhance_chat_image(g_ctx, system, prompt, &before, &after) == LTX2_OK && wb && wa &&
              !strcmp(before, wb) && !strcmp(after, wa),
          "the image chat's halves differ from the template's and the processor's");
    /* the ids as prompt_enhance.c assembles them: the halves around the image tokens */
    const ltx2_st_tensor *ti = ltx2_st_find(f, "i2v.ids");
    int32_t *a = NULL, *b = NULL;
    int64_t na = 0, nb = 0;
    const int32_t boi = 1085, img = 1087, eoi = 1086, n_img = 4; /* the tiny config's */
    bool same = ti && before && after && ltx2_gemma_encode(g_ctx, tok, before, &a, &na) == LTX2_OK &&
                ltx2_gemma_encode(g_ctx, tok, after, &b, &nb) == LTX2_OK && na + 2 + n_img + nb - 1 == ti->shape[0];
    for (int64_t i = 0; same && i < ti->shape[0]; i++) {
        const int32_t got = i < na ? a[i] : i == na ? boi : i <= na + n_img ? img : i == na + n_img + 1 ? eoi
                          : b[i - (na + n_img + 2) + 1];
        same = got == (int32_t)i64_at(ti, i);
    }
    CHECK(same, "the image chat's ids differ");
    if (same) printf("i2v chat: %lld ids equal (the image sequence between the halves)\n", (long long)ti->shape[0]);
    free(a), free(b), free(before), free(after), free(wb), free(wa);
    /* the whole request with the image, greedy */
    const ltx2_enhance_params ep = {.system_prompt = SYSTEM_FILE, .image = IMAGE_FILE, .seed = 42,
                                    .max_new_tokens = GEN_MAX_NEW, .greedy = true};
    ltx2_gemma_weights *gw = NULL;
    char *out = NULL, *wt = text_of(f, "i2v.gen.text");
    const ltx2_status st = ltx2_pipe_enhance_prompt(g_ctx, GEMMA_DIR, ltx2_backend_cpu(), false, prompt, &ep, &gw, &out);
    CHECK(st == LTX2_OK && out && wt && !strcmp(out, wt), "greedy enhancement with the image: %s",
          ltx2_last_error(g_ctx));
    if (st == LTX2_OK && out && wt && !strcmp(out, wt))
        printf("greedy enhancement with the image: %zu bytes equal to transformers'\n", strlen(out));
    free(out), free(wt);
    ltx2_gemma_weights_free(gw);
    /* a device without room for the vision tower: refused before it loads, saying so */
    ltx2_backend small = *ltx2_backend_cpu();
    small.mem_info = mem_stub_scarce;
    gw = NULL;
    const ltx2_status so = ltx2_pipe_enhance_prompt(g_ctx, GEMMA_DIR, &small, false, prompt, &ep, &gw, &out);
    const char *msg = ltx2_last_error(g_ctx);
    CHECK(so == LTX2_ERR_OOM && !out && !gw && strstr(msg, "vision tower") && strstr(msg, "GiB are free"),
          "1 MiB free for the vision tower: %s %s", ltx2_status_name(so), msg);
    ltx2_clear_error(g_ctx);
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
    check_warps(f);
    check_draws(f);
    check_clean(f);
    /* the chat text (no tokenizer needed) */
    char *system = text_of(f, "system"), *prompt = text_of(f, "prompt"), *want_chat = text_of(f, "chat.text");
    char *chat = NULL;
    CHECK(system && prompt && want_chat && ltx2_gemma3_enhance_chat(g_ctx, system, prompt, &chat) == LTX2_OK,
          "chat: %s", ltx2_last_error(g_ctx));
    CHECK(chat && want_chat && !strcmp(chat, want_chat), "the chat text differs from the template's");
    if (chat && want_chat && !strcmp(chat, want_chat)) printf("chat text: %zu bytes equal to the template's\n", strlen(chat));
    /* the tokenizer needs SentencePiece (deps.sh); without it the rest is skipped, said */
    ltx2_gemma_tokenizer *tok = NULL;
    if (ltx2_gemma_tokenizer_load(g_ctx, GEMMA_DIR "/tokenizer.model", &tok) != LTX2_OK) {
        printf("SKIP the token checks: %s\n", ltx2_last_error(g_ctx));
    } else {
        const ltx2_st_tensor *ct = ltx2_st_find(f, "chat.ids");
        int32_t *ids = NULL;
        int64_t n = 0;
        CHECK(ct && chat && ltx2_gemma_encode(g_ctx, tok, chat, &ids, &n) == LTX2_OK, "encode: %s", ltx2_last_error(g_ctx));
        bool same = ct && ids && n == ct->shape[0];
        for (int64_t i = 0; same && i < n; i++) same = ids[i] == i64_at(ct, i);
        CHECK(same, "chat ids: %lld, want %lld (Gemma3Processor's)", (long long)n, ct ? (long long)ct->shape[0] : -1LL);
        if (same) printf("chat ids: %lld equal to Gemma3Processor's (BOS %d twice)\n", (long long)n, ids[0]);
        if (ids && n > 40) check_cache(w, ids, 40, 24);
        free(ids);
        /* the whole request, greedy, as the CLI runs it: the model loaded by the call and left to the
         * caller, then a second call on it (the encoder's turn in a run) */
        const ltx2_enhance_params ep = {.system_prompt = SYSTEM_FILE, .seed = 42, .max_new_tokens = GEN_MAX_NEW, .greedy = true};
        char *want = text_of(f, "gen.text");
        ltx2_gemma_weights *gw = NULL;
        for (int call = 0; call < 2; call++) {
            char *out = NULL;
            const ltx2_status st =
                ltx2_pipe_enhance_prompt(g_ctx, GEMMA_DIR, ltx2_backend_cpu(), false, prompt, &ep, &gw, &out);
            CHECK(st == LTX2_OK && gw && out && want && !strcmp(out, want), "greedy enhancement %d '%s', want '%s': %s",
                  call, out ? out : "(none)", want ? want : "", ltx2_last_error(g_ctx));
            if (out && want && !strcmp(out, want))
                printf("greedy enhancement (%s): %zu bytes equal to ltx-core's flow with transformers (the tiny "
                       "model answers with newlines)\n", call ? "shared weights" : "loaded", strlen(out));
            free(out);
        }
        ltx2_gemma_weights_free(gw);
        free(want);
        char *out = NULL;
        gw = NULL;
        /* refusals: the system prompt missing (with where to get it) or empty */
        const ltx2_enhance_params none = {.seed = 42, .max_new_tokens = 4, .greedy = true};
        CHECK(ltx2_pipe_enhance_prompt(g_ctx, GEMMA_DIR, ltx2_backend_cpu(), false, prompt, &none, &gw, &out) ==
                      LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), "--enhance-system-prompt") && !out && !gw,
              "no system prompt (refused before the load): %s", ltx2_last_error(g_ctx));
        char empty_path[] = "/tmp/ltx2_enhance_empty_XXXXXX";
        const int fd = mkstemp(empty_path);
        CHECK(fd >= 0, "mkstemp");
        if (fd >= 0) {
            close(fd);
            const ltx2_enhance_params empty = {.system_prompt = empty_path, .seed = 42, .max_new_tokens = 4, .greedy = true};
            CHECK(ltx2_pipe_enhance_prompt(g_ctx, GEMMA_DIR, ltx2_backend_cpu(), false, prompt, &empty, &gw, &out) !=
                          LTX2_OK && strstr(ltx2_last_error(g_ctx), "empty") && !out && !gw,
                  "an empty system prompt: %s", ltx2_last_error(g_ctx));
            unlink(empty_path);
        }
        check_i2v(f, tok, system, prompt);
        ltx2_gemma_tokenizer_free(tok);
    }
    free(chat);
    CHECK(ltx2_gemma3_enhance_chat(g_ctx, "ok", "caf\xc3(", &chat) == LTX2_ERR_INVALID_ARG && !chat,
          "a prompt that is not UTF-8 is refused");
    free(system), free(prompt), free(want_chat), free(chat);
    ltx2_gemma_weights_free(w);
    ltx2_st_close(f);
    ltx2_context_free(g_ctx);
    return test_finish();
}
