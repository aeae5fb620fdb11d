/* The text connectors at real size for one prompt: the feature extractor and its projection of
 * the Gemma-3 12B's 49 states (188,160 features a token into the DiT's widths: 1.5-2.4 TFLOP at
 * 1024 tokens, the largest matmul of the text stage), then both connectors. Rows: every one of the
 * 1024 tokens real, and a prompt of TYPICAL_TOKENS left-padded to 1024, whose padding is not
 * projected (the registers take its place). CPU f32 from the states on the host; on a CUDA device
 * (when one exists) bf16 from states kept there, as the pipeline hands them over. Weights are the
 * loader's layout at real size, zero: a matmul's time does not depend on its values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "backend/backend_pool.h"
#include "io/json.h"
#include "core/rng.h"
#include "io/file.h"
#include "model/connectors.h"

#define TOKENS 1024
#define TOKENS_QUICK 256
#define TYPICAL_TOKENS 250
#define TYPICAL_TOKENS_QUICK 60
/* Gemma-3 12B: hidden 3840, 48 layers + the embedding */
#define GEMMA_WIDTH 3840
#define GEMMA_STATES 49
/* the projections alone are minutes of CPU at 1024 tokens: one timed run after the warm-up */
#define CPU_REPS 1

typedef struct conn_job {
    ltx2_context *ctx;
    const ltx2_connectors_weights *w;
    ltx2_text_hidden in;
    float *video, *audio;
    uint8_t *mask_out;
    ltx2_status st;
} conn_job;

static void run_conn(void *u) {
    conn_job *j = u;
    if (j->st == LTX2_OK)
        j->st = ltx2_connectors_forward(j->ctx, j->w, &j->in, NULL, NULL, j->video, j->audio, j->mask_out);
}

/* The matmul FLOPs of one prompt: the projections over the rows made (real ones, or all), then the
 * connectors' blocks over every position (attention 4 D^2 + 2 S D a token, MLP 8 D^2). */
static double flops_of(const ltx2_connectors_config *c, int64_t text_dim, int64_t S, int64_t rows) {
    const ltx2_connector_config *cc[2] = {&c->video, &c->audio};
    const bool one_projection = c->fe == LTX2_TEXT_FE_V1;
    double f = 0;
    for (int k = 0; k < (one_projection ? 1 : 2); k++)
        f += 2.0 * (double)rows * (double)text_dim * (double)cc[k]->inner_dim;
    for (int k = 0; k < 2; k++) {
        const double D = (double)cc[k]->inner_dim;
        f += (double)cc[k]->num_layers * 2.0 * (double)S * (12.0 * D * D + 2.0 * (double)S * D);
    }
    return f;
}

static bool config_of(ltx2_context *ctx, const char *v, ltx2_connectors_config *out) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/config_full_%s.json", LTX2_SOURCE_DIR, v);
    char *text = NULL;
    size_t n = 0;
    ltx2_json_doc *doc = NULL;
    bool ok = ltx2_file_read_all(ctx, path, &text, &n) == LTX2_OK &&
              ltx2_json_parse(ctx, text, n, path, &doc) == LTX2_OK;
    const ltx2_json *tr = ok ? ltx2_json_get(ltx2_json_root(doc), "transformer") : NULL;
    ok = ok && tr && ltx2_connectors_config_parse(ctx, tr, path, out) == LTX2_OK;
    if (!ok) fprintf(stderr, "bench_connectors: %s: %s\n", path, ltx2_last_error(ctx));
    free(text);
    ltx2_json_free(doc);
    return ok;
}

/* The two rows (all real, typical) of one backend. */
static bool rows_on(const bench_opts *o, bench_report *r, conn_job *j, const char *ver, const char *dev,
                    const uint8_t *all, const uint8_t *typ, int64_t typical) {
    const int64_t S = j->in.S;
    for (int k = 0; k < 2; k++) {
        j->in.mask = k ? typ : all;
        const int64_t real = k ? typical : S;
        char name[128];
        snprintf(name, sizeof name, "connectors %s, a prompt of %lld of %lld tokens", ver, (long long)real,
                 (long long)S);
        bench_row row = {.bench = "connectors", .name = name, .device = dev,
                         .flops = flops_of(&j->w->cfg, j->w->text_dim, S, real)};
        row.st = bench_measure(o, run_conn, j, 1);
        if (j->st != LTX2_OK) {
            fprintf(stderr, "bench_connectors: %s on %s: %s\n", name, dev, ltx2_last_error(j->ctx));
            return false;
        }
        bench_report_row(r, &row);
    }
    return true;
}

int main(int argc, char **argv) {
    const char *ver = "2.3";
    bool cuda_only = false;
    char **rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (!rest) return 1;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--version") && i + 1 < argc) ver = argv[++i];
        else if (i > 0 && !strcmp(argv[i], "--cuda-only")) cuda_only = true;
        else rest[n++] = argv[i];
    }
    rest[n] = NULL;
    bench_opts o;
    int rc = bench_parse_args(n, rest, &o,
                              "  --version V  2.3 (default: video and audio projections) | 2.0 (one aggregate_embed)\n"
                              "  --cuda-only  the device rows alone (the CPU's take minutes)\n"
                              "The text connectors at real size, one prompt of the 12B's states: every token real,\n"
                              "then a typical prompt whose padding is not projected\n");
    free(rest);
    if (rc >= 0) return rc;
    if (strcmp(ver, "2.3") && strcmp(ver, "2.0")) {
        fprintf(stderr, "bench_connectors: --version must be 2.0 or 2.3\n");
        return 2;
    }
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    const int64_t S = o.quick ? TOKENS_QUICK : TOKENS, typical = o.quick ? TYPICAL_TOKENS_QUICK : TYPICAL_TOKENS;
    const int64_t D = GEMMA_WIDTH, L = GEMMA_STATES, per = L * S * D;
    ltx2_connectors_config cfg;
    ltx2_connectors_weights *w = NULL;
    float *states = malloc((size_t)per * sizeof(float));
    uint8_t *all = malloc((size_t)S), *typ = malloc((size_t)S), *mask_out = malloc((size_t)S);
    float *video = NULL, *audio = NULL;
    rc = 1;
    if (!states || !all || !typ || !mask_out || !config_of(ctx, ver, &cfg)) goto done;
    if (ltx2_connectors_weights_layout_on(ctx, ltx2_backend_cpu(), LTX2_F32, &cfg, D * L, &w) != LTX2_OK) {
        fprintf(stderr, "bench_connectors: weights: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    video = malloc((size_t)(S * cfg.video.inner_dim) * sizeof(float));
    audio = malloc((size_t)(S * cfg.audio.inner_dim) * sizeof(float));
    if (!video || !audio) goto done;
    ltx2_rng_normal(3, 1, 0, (size_t)per, states);
    for (int64_t s = 0; s < S; s++) all[s] = 1, typ[s] = s >= S - typical;
    bench_report_note(&r, "LTX-%s connectors: projection %lld -> %lld%s; %lld + %lld connector blocks; 1 prompt x %lld "
                      "tokens", ver, (long long)(D * L), (long long)cfg.video.inner_dim,
                      cfg.fe == LTX2_TEXT_FE_V1 ? "" : " and audio's", (long long)cfg.video.num_layers,
                      (long long)cfg.audio.num_layers, (long long)S);
    conn_job j = {ctx, w, {.hidden = states, .B = 1, .S = S, .D = D, .L = L, .layer_major = true}, video, audio,
                  mask_out, LTX2_OK};
    bench_opts oc = o;
    oc.min_reps = oc.max_reps = CPU_REPS;
    if (!cuda_only && !rows_on(&oc, &r, &j, ver, "cpu", all, typ, typical)) goto done;
    ltx2_backend *cuda = NULL;
    rc = 0;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        bench_report_note(&r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        goto done;
    }
    /* on the device: bf16 weights, the states kept there in bf16 (the pipeline's default) */
    ltx2_connectors_weights *wd = NULL;
    void *buf = NULL;
    const int64_t ds[4] = {1, L, S, D};
    ltx2_tensor dev = ltx2_tensor_make(NULL, LTX2_BF16, 4, ds);
    bool ok = ltx2_connectors_weights_to(ctx, w, cuda, LTX2_BF16, &wd) == LTX2_OK &&
              cuda->alloc(cuda, ctx, (size_t)per * 2, &buf) == LTX2_OK;
    if (ok) {
        dev.data = buf, dev.device = cuda->device;
        ok = ltx2_backend_from_host_f32(ctx, cuda, states, &dev) == LTX2_OK;
    }
    conn_job jd = {ctx, wd, {.B = 1, .S = S, .D = D, .L = L, .dev = &dev}, video, audio, mask_out, LTX2_OK};
    ok = ok && rows_on(&o, &r, &jd, ver, "cuda", all, typ, typical);
    if (!ok) fprintf(stderr, "bench_connectors: cuda: %s\n", ltx2_last_error(ctx));
    rc = ok ? 0 : 1;
    if (buf) cuda->free(cuda, buf);
    ltx2_connectors_weights_free(wd);
    ltx2_backend_free(cuda);
done:
    free(states), free(all), free(typ), free(mask_out), free(video), free(audio);
    ltx2_connectors_weights_free(w);
    bench_report_close(&r);
    ltx2_context_free(ctx);
    return rc;
}
