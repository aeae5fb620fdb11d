/* The real sizes without real weights: synthetic LTX-2 19B and LTX-2.3 22B single files (full_ckpt.h:
 * ltx-core's own key tables at the full configs, zeros as holes) are written, classified as
 * `inspect` does (version, layout, the DiT's parameter count against the engine's own weight table
 * as the memory plan counts it); `generate` on a 24 GB device is refused for the 22B by the memory
 * plan before anything is loaded, with the advice. With LTX2_TEST_FULL_LOAD=1 the 19B is also loaded for CPU generation
 * as `generate --device cpu` loads it (DiT, connectors, VAEs, vocoder), measuring the host memory it
 * holds: the Linear weights are views of the file (ltx2_wstore_layout_for), so the anonymous memory
 * is the f32 norms, biases, tables and the decoders, not the 40 GiB of the file. That load reads
 * every page of the file once (the finite check of every weight): about 3 minutes on 2 cores and up
 * to ~22 GB of page cache, too much for CI's parallel and sanitizer runs, so it is asked for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/timer.h"
#include "full_ckpt.h"
#include "io/json.h"
#include "ltx2/ltx2.h"
#include "model/detect.h"
#include "pipeline/pipeline.h"
#include "test_util.h"

#define GIB ((double)((uint64_t)1 << 30))
/* The DiTs' parameter counts as the engine's weight tables give them (test_memory_plan prints them
 * from the same configs): ltx-core's key tables must hold exactly these many DiT elements. */
#define DIT_PARAMS_19B 18876174592ull
#define DIT_PARAMS_22B 18988838144ull
/* A 24 GB card's free memory (test_memory_plan's CARD24_FREE). */
#define CARD24_FREE ((size_t)23 << 30)
/* Host memory a CPU load of the 19B may hold beyond what the process held before, as a fraction of
 * the file: the f32 vectors of the DiT and connectors (~0.1 GiB), the video and audio VAE
 * decoders and the vocoder in f32 (~2.5 GiB) and the loader's staging of the largest tensor in f32
 * (1 GiB) are ~9% of its 40 GiB; a copy of the matrices would be >= 100%. */
#define LOAD_MAX_ANON_FRACTION 0.15

static ltx2_context *g_ctx;

/* A field of /proc/self/status in KiB (-1 when absent: not Linux). */
static long status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    const size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static void classify(const char *v, const char *path, ltx2_model_version want, uint64_t dit_params) {
    ltx2_st_file *f = NULL;
    ltx2_json_doc *cfg = NULL;
    bool ok = ltx2_st_open(g_ctx, path, &f) == LTX2_OK &&
              ltx2_st_meta_json(g_ctx, f, "config", "the model config", &cfg) == LTX2_OK;
    CHECK(ok, "%s: %s", v, ltx2_last_error(g_ctx));
    if (ok) {
        const char **names = malloc(f->n_tensors * sizeof *names);
        int64_t *numels = malloc(f->n_tensors * sizeof *numels);
        for (size_t i = 0; names && numels && i < f->n_tensors; i++) {
            names[i] = f->tensors[i].name;
            numels[i] = 1;
            for (int d = 0; d < f->tensors[i].ndim; d++) numels[i] *= f->tensors[i].shape[d];
        }
        ltx2_ckpt_info info;
        ltx2_ckpt_classify(names, numels, f->n_tensors, ltx2_json_root(cfg), &info);
        printf("%s: %s, %s (%s); DiT %llu parameters in %zu tensors\n", v, path, ltx2_model_version_name(info.version),
               info.version_evidence, (unsigned long long)info.n_params[LTX2_COMP_TRANSFORMER],
               info.n_tensors[LTX2_COMP_TRANSFORMER]);
        CHECK(info.layout == LTX2_LAYOUT_SINGLE_FILE && info.version == want, "%s: classified as layout %d version %s",
              v, (int)info.layout, ltx2_model_version_name(info.version));
        CHECK(info.n_params[LTX2_COMP_TRANSFORMER] == dit_params, "%s: DiT %llu parameters in the key table, the "
              "engine's weight table %llu", v, (unsigned long long)info.n_params[LTX2_COMP_TRANSFORMER],
              (unsigned long long)dit_params);
        free(names);
        free(numels);
    }
    ltx2_json_free(cfg);
    ltx2_st_close(f);
}

/* Loads every model of the file on the CPU, as generate does, and reports the memory it holds. */
static void cpu_load(const char *v, const char *path, uint64_t file_bytes) {
    const long anon0 = status_kib("RssAnon");
    const double t0 = ltx2_timer_now();
    ltx2_pipe_models m;
    const ltx2_status st = ltx2_pipe_models_load(g_ctx, path, ltx2_backend_cpu(), &m);
    const double secs = ltx2_timer_now() - t0;
    CHECK(st == LTX2_OK, "%s: CPU load: %s", v, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const long anon = status_kib("RssAnon"), hwm = status_kib("VmHWM");
    const double held = (double)(anon - anon0) * 1024.0;
    printf("%s CPU load: %.1f s; anonymous memory +%.2f GiB (%.1f%% of the %.2f GiB file; peak RSS %.2f GiB, "
           "file pages included); DiT store %.3f GiB + %.2f GiB of matrices viewed in the file, connectors %.3f + "
           "%.2f GiB\n",
           v, secs, held / GIB, 100.0 * held / (double)file_bytes, (double)file_bytes / GIB, (double)hwm * 1024.0 / GIB,
           (double)m.dit->store.n_bytes / GIB, (double)m.dit->store.n_mapped_bytes / GIB,
           (double)m.conn->store.n_bytes / GIB, (double)m.conn->store.n_mapped_bytes / GIB);
    CHECK(m.dit->store.mapping && m.conn->store.mapping, "%s: the DiT's and connectors' matrices are not views", v);
    if (anon0 >= 0)
        CHECK(held <= LOAD_MAX_ANON_FRACTION * (double)file_bytes, "%s: the load holds %.2f GiB, over %.0f%% of the "
              "file", v, held / GIB, 100.0 * LOAD_MAX_ANON_FRACTION);
    ltx2_pipe_models_free(&m);
}

static ltx2_status card24(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = CARD24_FREE, *total_b = CARD24_FREE + ((size_t)1 << 30);
    return LTX2_OK;
}

/* generate at 768x512x121 on a device reporting a 24 GB card's free memory: refused by the plan made
 * from the file's own configs, before any model is read (the file's weights are zeros: a load would
 * take minutes, the refusal a few seconds). */
static void refused_on_24gb(const char *v, const char *path) {
    ltx2_backend dev = *ltx2_backend_cpu();
    dev.mem_info = card24;
    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    p.checkpoint = path;
    p.prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p.negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p.width = 768, p.height = 512, p.frames = 121;
    ltx2_generate_result r;
    const double t0 = ltx2_timer_now();
    const ltx2_status st = ltx2_generate_on(g_ctx, &p, &dev, &r);
    const char *msg = ltx2_last_error(g_ctx);
    printf("%s on a 24 GB card (%.1f s): %s\n", v, ltx2_timer_now() - t0, msg);
    CHECK(st == LTX2_ERR_OOM && strstr(msg, "not enough device memory") && strstr(msg, "Options:") && !r.video,
          "%s on 24 GB: %s %s", v, ltx2_status_name(st), msg);
}

static void one(const char *v, ltx2_model_version want, uint64_t dit_params, bool load) {
    char path[1024];
    snprintf(path, sizeof path, "%s/full_%s.safetensors", LTX2_BINARY_DIR, v);
    uint64_t params = 0;
    const double t0 = ltx2_timer_now();
    const bool ok = full_ckpt_write(g_ctx, v, path, &params);
    CHECK(ok, "%s: writing %s: %s", v, path, ltx2_last_error(g_ctx));
    if (!ok) return;
    printf("%s: wrote %s, %llu parameters (%.2f GiB in bf16) in %.1f s\n", v, path, (unsigned long long)params,
           2.0 * (double)params / GIB, ltx2_timer_now() - t0);
    classify(v, path, want, dit_params);
    if (want == LTX2_MODEL_2_3) refused_on_24gb(v, path);
    if (load) cpu_load(v, path, 2 * params);
    unlink(path);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    const char *env = getenv("LTX2_TEST_FULL_LOAD");
    const bool load = env && strcmp(env, "1") == 0;
    if (!load) printf("the 19B CPU load is not run (LTX2_TEST_FULL_LOAD=1 runs it: ~3 min, ~22 GB of page cache)\n");
    one("2.0", LTX2_MODEL_2_0, DIT_PARAMS_19B, load);
    one("2.3", LTX2_MODEL_2_3, DIT_PARAMS_22B, false);
    ltx2_context_free(g_ctx);
    return test_finish();
}
