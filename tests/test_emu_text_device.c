/* Where Gemma runs by default (ltx2_gen_text_from_prompts with no --text-encoder-device): on the
 * generation's GPU when Gemma fits its free memory, else on the CPU with a warning. The GPU is the
 * CPU emulator of the CUDA kernels given free memory to report: with ample, the prompt pair is
 * encoded there (bf16 kernels: near the CPU's states, not equal to them); with 1 MiB, on the CPU
 * (bitwise its states) and the run says so; a named device wins over the default. With
 * --enhance-prompt on a GPU the encoder fits and the enhancement does not, both go to the CPU. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_emu.h"
#include "core/context.h"
#include "core/dtype.h"
#include "io/tensor_set.h"
#include "device_mem_stub.h"
#include "model/gemma.h"
#include "pipeline/denoise.h"
#include "pipeline/generate_text.h"
#include "text/gemma_tokenizer.h"
#include "test_util.h"

/* bf16 Gemma states against the f32 CPU's on the tiny model (gemma_device_check.h holds the
 * forward itself to its bounds); here only: the emulated GPU ran it (measured 2.7e-3). */
#define TEXT_DEVICE_MAX_REL_L2 1e-2
#define TEXT_DEVICE_MIN_REL_L2 1e-5
/* LTX-2.0's contexts from kept states against those through the host: the same bf16 states, the
 * per-layer means from fp32 row sums on the device instead of double sums on the host (an ulp at
 * most; measured 0: the means round alike here), through the bf16 connectors; a wrong row, layer
 * or mask is O(1). */
#define KEPT_V1_MAX_REL_L2 1e-4
/* New tokens of the greedy enhancement (the tiny Gemma's answer is noise; a few tokens show the path). */
#define ENHANCE_TOKENS 6

static atomic_int g_fallback_warnings;
static atomic_int g_taken_on_device; /* prompts whose kept states the connectors took on the device */
static atomic_int g_gemma_runs;      /* encodes that ran Gemma (not every prompt from the cache) */

static void count_log(ltx2_log_level level, const char *msg, void *user) {
    (void)user;
    if (level == LTX2_LOG_WARN && strstr(msg, "runs on the CPU instead")) atomic_fetch_add(&g_fallback_warnings, 1);
    if (strstr(msg, "hidden states taken on")) atomic_fetch_add(&g_taken_on_device, 1);
    if (strstr(msg, "text encoder: Gemma-3")) atomic_fetch_add(&g_gemma_runs, 1);
}

/* mem_info queries so far: the first (the default placement's, pricing the encoder's batch) sees
 * ample memory, every later one (the enhancement's own check) 1 MiB: a GPU the encoder fits and the
 * enhancement's K/V cache and LM head do not. */
static atomic_int g_mem_queries;

static ltx2_status mem_stub_encoder_only(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    return atomic_fetch_add(&g_mem_queries, 1) == 0 ? mem_stub_ample(be, ctx, free_b, total_b)
                                                     : mem_stub_scarce(be, ctx, free_b, total_b);
}

/* The pair's states (positive then negative) encoded with run_be as the generation's device; the
 * enhanced prompt, if any, into *enh (NULL: freed). */
static bool encode_enh(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *run_be,
                       ltx2_pipe_text t[2], char **enh) {
    char *e = NULL;
    memset(t, 0, 2 * sizeof *t);
    const ltx2_status st = ltx2_gen_text_from_prompts(ctx, p, true, run_be, &t[0], &t[1], &e);
    CHECK(st == LTX2_OK, "encoding on %s: %s", run_be ? run_be->name : "(none)", ltx2_last_error(ctx));
    if (enh)
        *enh = e;
    else
        free(e);
    return st == LTX2_OK;
}

static bool encode(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *run_be, ltx2_pipe_text t[2]) {
    return encode_enh(ctx, p, run_be, t, NULL);
}

/* States kept on a device (the default placement on the generation's GPU, LTX-2.3) come to the
 * host first. */
static double states_rel_l2(ltx2_context *ctx, ltx2_pipe_text a[2], ltx2_pipe_text b[2]) {
    double worst = 0;
    for (int k = 0; k < 2; k++) {
        if (ltx2_pipe_text_to_host(ctx, &a[k]) != LTX2_OK || ltx2_pipe_text_to_host(ctx, &b[k]) != LTX2_OK) return 1e30;
        const double e = a[k].S == b[k].S ? test_rel_l2(a[k].hidden, b[k].hidden, a[k].S * a[k].D * a[k].L) : 1e30;
        worst = e > worst ? e : worst;
    }
    return worst;
}

/* --enhance-prompt with the default placement on a GPU Gemma fits but the enhancement does not:
 * the enhancement and the encoding fall back to the CPU with a warning, bitwise the CPU's run (the
 * enhancement's own check refused the run before). */
static void check_enhance_fallback(ltx2_context *ctx, ltx2_backend *emu, ltx2_generate_params p) {
    p.enhance_prompt = 1;
    p.enhance_system_prompt = LTX2_SOURCE_DIR "/tests/data/enhance_system_prompt.txt";
    p.enhance_greedy = 1;
    p.enhance_max_tokens = ENHANCE_TOKENS;
    ltx2_pipe_text cpu[2], fall[2];
    char *cpu_text = NULL, *fall_text = NULL;
    if (!encode_enh(ctx, &p, NULL, cpu, &cpu_text)) return;
    emu->mem_info = mem_stub_encoder_only;
    atomic_store(&g_mem_queries, 0);
    const int before = atomic_load(&g_fallback_warnings);
    if (encode_enh(ctx, &p, emu, fall, &fall_text)) {
        const double e = states_rel_l2(ctx, fall, cpu);
        printf("--enhance-prompt by default on a GPU the enhancement does not fit: rel-L2 %.3g from the CPU's "
               "states, %d memory queries\n", e, atomic_load(&g_mem_queries));
        /* the tiny Gemma answers with whitespace, so both runs encode the prompt as given (NULL text);
         * what shows the fallback is that the run passes the enhancement's check at all */
        CHECK((!cpu_text && !fall_text) || (cpu_text && fall_text && !strcmp(cpu_text, fall_text)),
              "the enhanced prompt \"%s\" differs from the CPU's \"%s\"", fall_text ? fall_text : "(none)",
              cpu_text ? cpu_text : "(none)");
        CHECK(e == 0 && atomic_load(&g_fallback_warnings) == before + 1 && atomic_load(&g_mem_queries) >= 2,
              "an enhancement that does not fit the default GPU must fall back to the CPU and say so: rel-L2 %.3g, "
              "%d warnings, %d memory queries", e, atomic_load(&g_fallback_warnings) - before,
              atomic_load(&g_mem_queries));
        for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&fall[k]);
    }
    for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&cpu[k]);
    free(cpu_text), free(fall_text);
}


/* The connectors on the emulated GPU take the states Gemma left there (no host round trip): the
 * contexts equal those of the same states brought to the host and sent up again (bf16 -> f32 ->
 * bf16 is exact): LTX-2.3 bit for bit, LTX-2.0 within max_rel (its statistics come from the
 * device's fp32 row sums instead of the host's double ones); the run says it took them there. */
static void check_kept_states(ltx2_context *ctx, ltx2_backend *emu, const ltx2_generate_params *p, double max_rel) {
    ltx2_pipe_models m;
    if (ltx2_pipe_models_load(ctx, p->checkpoint, emu, &m) != LTX2_OK) {
        CHECK(false, "models on the emulated GPU: %s", ltx2_last_error(ctx));
        return;
    }
    ltx2_pipe_text kept[2], host[2];
    ltx2_pipe_context pos[2], neg[2];
    memset(pos, 0, sizeof pos), memset(neg, 0, sizeof neg);
    const int before = atomic_load(&g_taken_on_device);
    bool ok = encode(ctx, p, emu, kept);
    if (ok) ok = ltx2_gen_text_contexts(ctx, p, &m, false, true, &kept[0], &kept[1], &pos[0], &neg[0]) == LTX2_OK;
    CHECK(ok && atomic_load(&g_taken_on_device) == before + 2, "connectors on the kept states: %s, %d taken",
          ok ? "ok" : ltx2_last_error(ctx), atomic_load(&g_taken_on_device) - before);
    bool ok2 = ok && encode(ctx, p, emu, host) && ltx2_pipe_text_to_host(ctx, &host[0]) == LTX2_OK &&
               ltx2_pipe_text_to_host(ctx, &host[1]) == LTX2_OK;
    if (ok2) ok2 = ltx2_gen_text_contexts(ctx, p, &m, false, true, &host[0], &host[1], &pos[1], &neg[1]) == LTX2_OK;
    CHECK(!ok || ok2, "connectors on the states through the host: %s", ltx2_last_error(ctx));
    if (ok && ok2) {
        const int64_t dv = m.conn->cfg.video.inner_dim, da = m.conn->cfg.audio.inner_dim, S = pos[0].S;
        double e = pos[1].S == S && neg[0].S == S && neg[1].S == S ? 0.0 : 1e30;
        const double es[4] = {test_rel_l2(pos[0].video, pos[1].video, S * dv),
                              test_rel_l2(pos[0].audio, pos[1].audio, S * da),
                              test_rel_l2(neg[0].video, neg[1].video, S * dv),
                              test_rel_l2(neg[0].audio, neg[1].audio, S * da)};
        for (int k = 0; k < 4 && e < 1e30; k++) e = es[k] > e ? es[k] : e;
        CHECK(e <= max_rel, "%s: contexts from the states kept on the device are rel-L2 %.3g from those through "
              "the host (max %.1g)", p->checkpoint, e, max_rel);
        printf("%s: contexts from the states kept on the emulated GPU: rel-L2 %.3g from those through the host\n",
               m.is_2_3 ? "LTX-2.3" : "LTX-2.0", e);
    }
    for (int k = 0; k < 2; k++) free(pos[k].video), free(pos[k].audio), free(neg[k].video), free(neg[k].audio);
    ltx2_pipe_models_free(&m);
}

/* The raw bytes of kept states (their device dtype), for bitwise comparisons. */
static void *kept_bytes(ltx2_context *ctx, const ltx2_pipe_text *t, size_t *n) {
    *n = (size_t)ltx2_tensor_numel(&t->dev) * ltx2_dtype_size(t->dev.dtype);
    void *b = malloc(*n);
    if (b && t->dev_be->download(t->dev_be, ctx, b, t->dev.data, *n) != LTX2_OK) {
        free(b);
        b = NULL;
    }
    return b;
}

/* The positions before a prompt's first token (what the cache leaves out). */
static int64_t lead_of(const ltx2_pipe_text *t) {
    int64_t k = 0;
    while (k < t->S && !t->mask[k]) k++;
    return k;
}

/* Whether states b (element size es, layer-major [L, S, D]) equal a from the first token on in
 * every layer and are zero before it (a's padding rows are the forward's, the cache's zero). */
static bool same_tokens(const ltx2_pipe_text *t, const void *a, const void *b, size_t es) {
    const int64_t lead = lead_of(t);
    const size_t layer = (size_t)(t->S * t->D) * es, head = (size_t)(lead * t->D) * es;
    for (int64_t l = 0; l < t->L; l++) {
        const char *x = (const char *)a + (size_t)l * layer, *y = (const char *)b + (size_t)l * layer;
        if (memcmp(x + head, y + head, layer - head)) return false;
        for (size_t i = 0; i < head; i++)
            if (y[i]) return false;
    }
    return true;
}

/* A value of the negative prompt's kept states made NaN (layer 1, its last token, channel 2),
 * cached and read back: refused on the way to the device and to the host, the place named. */
static void check_cached_nan(ltx2_context *ctx, ltx2_backend *emu, ltx2_pipe_text *t, int64_t text_dim,
                             const char *dir) {
    const uint16_t nan_bf16 = 0x7fc0;
    const int64_t tok = t->S - 1, at = (1 * t->S + tok) * t->D + 2;
    char where_dev[64], where_host[64];
    snprintf(where_dev, sizeof where_dev, "layer 1, token %lld, channel 2", (long long)tok);
    snprintf(where_host, sizeof where_host, "[1, %lld, 2]", (long long)tok);
    char path[LTX2_TEXT_CACHE_PATH_CAP + 32];
    snprintf(path, sizeof path, "%s/nan.safetensors", dir);
    ltx2_pipe_text back = {0};
    bool ok = t->dev.dtype == LTX2_BF16 &&
              emu->upload(emu, ctx, (uint16_t *)t->dev.data + at, &nan_bf16, sizeof nan_bf16) == LTX2_OK &&
              ltx2_pipe_text_save_cache(ctx, t, path) == LTX2_OK;
    CHECK(ok, "writing a cached prompt with a NaN: %s", ltx2_last_error(ctx));
    if (!ok) return;
    const ltx2_status dst = ltx2_pipe_text_load_on(ctx, path, text_dim, emu, &back);
    CHECK(dst == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), where_dev) && !back.dev.data,
          "a NaN on its way to the device: %d, \"%s\"", (int)dst, ltx2_last_error(ctx));
    const ltx2_status hst = ltx2_pipe_text_load(ctx, path, text_dim, &back);
    CHECK(hst == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), where_host) && !back.hidden,
          "a NaN on its way to the host: %d, \"%s\"", (int)hst, ltx2_last_error(ctx));
    unlink(path);
}

/* With a text cache (the CLI's default) the states still stay on the device for the connectors,
 * and the cache gets their bytes as they are there: bf16, layer-major (half an f32 file, nothing
 * transposed), from the prompt's first token on. The host reads the file back as the kept states
 * widened, bit for bit from the first token on and zero before it; a second run takes the prompt
 * from the cache onto the device, the same way, without Gemma. */
static void check_kept_cached(ltx2_context *ctx, ltx2_backend *emu, ltx2_generate_params p) {
    char dir[] = "/tmp/ltx2_kept_cache.XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp");
        return;
    }
    p.text_cache = dir;
    ltx2_pipe_text kept[2], again[2];
    const int runs = atomic_load(&g_gemma_runs);
    if (encode(ctx, &p, emu, kept)) {
        CHECK(kept[0].dev.data && kept[1].dev.data, "with a text cache the states must still stay on the device");
        ltx2_gemma_config gc;
        ltx2_text_cache c;
        char path[LTX2_TEXT_CACHE_PATH_CAP + 80];
        ltx2_pipe_text back = {0};
        bool ok = ltx2_gemma_config_load(ctx, p.text_encoder, &gc) == LTX2_OK &&
                  ltx2_text_cache_open(ctx, dir, p.text_encoder, NULL, &c) == LTX2_OK;
        const int64_t text_dim = gc.hidden * (gc.layers + 1);
        if (ok) ltx2_text_cache_path(&c, p.prompt, LTX2_GEMMA_MAX_TOKENS, path, sizeof path);
        size_t nb = 0;
        void *kb = ok ? kept_bytes(ctx, &kept[0], &nb) : NULL;
        ltx2_tensor_set *set = NULL;
        ok = kb && ltx2_tensor_set_open(ctx, path, &set) == LTX2_OK;
        CHECK(ok, "the cached prompt: %s", ltx2_last_error(ctx));
        const int64_t lead = lead_of(&kept[0]), stored = kept[0].S - lead, D = kept[0].D;
        if (ok) {
            const ltx2_named_tensor *h = ltx2_tensor_set_find(set, "hidden_states_layer_major");
            const int64_t want[4] = {1, kept[0].L, stored, D};
            bool same = h && !ltx2_tensor_set_find(set, "hidden_states") && h->t.dtype == LTX2_BF16 &&
                        h->t.ndim == 4 && !memcmp(h->t.shape, want, sizeof want);
            for (int64_t l = 0; same && l < kept[0].L; l++)
                same = !memcmp((const char *)h->t.data + (size_t)(l * stored * D) * 2,
                               (const char *)kb + (size_t)((l * kept[0].S + lead) * D) * 2, (size_t)(stored * D) * 2);
            CHECK(lead > 0 && same, "the cache file must hold the kept states' bf16 bytes, layer-major, from the "
                  "first token on (%lld padded positions left out)", (long long)lead);
        }
        ltx2_tensor_set_free(set);
        ok = ok && ltx2_pipe_text_load(ctx, path, text_dim, &back) == LTX2_OK;
        /* the second run: both prompts from the cache, onto the device */
        ok = ok && encode(ctx, &p, emu, again) && atomic_load(&g_gemma_runs) == runs + 1;
        CHECK(ok, "the cached prompt read back, Gemma run once in two encodes (%d): %s",
              atomic_load(&g_gemma_runs) - runs, ltx2_last_error(ctx));
        if (ok) {
            size_t na = 0;
            void *ab = again[0].dev.data && again[0].dev_be == emu ? kept_bytes(ctx, &again[0], &na) : NULL;
            CHECK(ab && na == nb && again[0].dev.dtype == LTX2_BF16 && same_tokens(&kept[0], kb, ab, 2) &&
                      again[1].dev.data,
                  "a cached prompt must come back onto the device as the kept states (from the first token on, "
                  "bit for bit; zero before)");
            free(ab);
            ok = ltx2_pipe_text_to_host(ctx, &kept[0]) == LTX2_OK;
            CHECK(ok && back.S == kept[0].S && same_tokens(&kept[0], kept[0].hidden, back.hidden, sizeof(float)),
                  "the cache file read on the host must give the kept states widened (from the first token on; "
                  "zero before)");
            printf("text cache beside kept states: the file holds their bf16 bytes from the first token on (%lld of "
                   "%lld positions), read back bit for bit on the device and the host\n", (long long)stored,
                   (long long)kept[0].S);
            for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&again[k]);
            check_cached_nan(ctx, emu, &kept[1], text_dim, dir);
        }
        free(kb);
        if (ok) { /* the prompt's file and the default negative prompt's */
            unlink(path);
            ltx2_text_cache_path(&c, LTX2_PIPE_DEFAULT_NEGATIVE_PROMPT, LTX2_GEMMA_MAX_TOKENS, path, sizeof path);
            unlink(path);
        }
        ltx2_pipe_text_free(&back);
        for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&kept[k]);
    }
    CHECK(rmdir(dir) == 0, "the cache directory %s holds more than the two prompts' files", dir);
}

int main(void) {
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    cp.log_fn = count_log;
    ltx2_context *ctx = ltx2_context_create(&cp);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    p.checkpoint = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.3.safetensors";
    p.text_encoder = LTX2_SOURCE_DIR "/weights/tiny/gemma";
    p.prompt = "a lighthouse keeper climbs the stairs in a storm";
    ltx2_pipe_text cpu[2], dev[2], fall[2], named[2];
    if (emu && encode(ctx, &p, NULL, cpu)) {
        emu->mem_info = mem_stub_ample;
        if (encode(ctx, &p, emu, dev)) {
            /* kept where they were made: LTX-2.3's connectors take them there */
            CHECK(dev[0].dev.data && !dev[0].hidden && dev[1].dev.data && dev[0].dev_be == emu,
                  "the default placement must keep the states on the generation's GPU");
            const double e = states_rel_l2(ctx, dev, cpu);
            printf("default with a GPU it fits: rel-L2 %.3g from the CPU's states\n", e);
            CHECK(e > TEXT_DEVICE_MIN_REL_L2 && e <= TEXT_DEVICE_MAX_REL_L2,
                  "the default must encode on the generation's GPU: rel-L2 %.3g from the CPU's (want (%g, %g])", e,
                  TEXT_DEVICE_MIN_REL_L2, TEXT_DEVICE_MAX_REL_L2);
            for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&dev[k]);
        }
        p.text_encoder_device = "cpu";
        if (encode(ctx, &p, emu, named)) {
            CHECK(states_rel_l2(ctx, named, cpu) == 0, "--text-encoder-device cpu must win over the default");
            for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&named[k]);
        }
        p.text_encoder_device = NULL;
        emu->mem_info = mem_stub_scarce;
        const int before = atomic_load(&g_fallback_warnings);
        if (encode(ctx, &p, emu, fall)) {
            const double e = states_rel_l2(ctx, fall, cpu);
            printf("default with a GPU of 1 MiB free: rel-L2 %.3g from the CPU's states\n", e);
            CHECK(e == 0 && atomic_load(&g_fallback_warnings) == before + 1,
                  "a GPU Gemma does not fit must fall back to the CPU and say so: rel-L2 %.3g, %d warnings", e,
                  atomic_load(&g_fallback_warnings) - before);
            for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&fall[k]);
        }
        for (int k = 0; k < 2; k++) ltx2_pipe_text_free(&cpu[k]);
        check_enhance_fallback(ctx, emu, p);
        emu->mem_info = mem_stub_ample;
        check_kept_states(ctx, emu, &p, 0.0);
        ltx2_generate_params p20 = p;
        p20.checkpoint = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.0.safetensors";
        check_kept_states(ctx, emu, &p20, KEPT_V1_MAX_REL_L2);
        check_kept_cached(ctx, emu, p);
    }
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
