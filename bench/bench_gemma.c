/* The Gemma-3 text encoder at LTX's input, 2 prompts x 1024 tokens, on the CPU: layers of the 12B's
 * shapes (hidden 3840, 16 query / 8 key-value heads of 256, MLP 15360; alternating local and global
 * RoPE as configured) with random weights, timed through ltx2_gemma_forward_split (the pipeline's call), in GFLOP/s of its
 * matmuls and as a ratio to ltx2_cpu_gemm's rate on the encoder's largest linear (M 2048, N 15360,
 * K 3840, bf16 weights as a checkpoint stores them) measured in the same run. The whole 12B (48
 * layers) scales from the per-layer time: the table is the embedding gather, off the clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"
#include "cpu_peak.h"
#include "gemma12b.h"
#include "model/gemma.h"
#include "profile_backend.h"

/* LTX's encoder input: a CFG pair of prompts padded to the tokenizer's 1024. --quick: 256. */
#define BATCH 2
#define TOKENS 1024
#define TOKENS_QUICK 256
#define DEFAULT_LAYERS 2
/* The "typical prompts" row: a user's prompt and the default negative prompt (about 1,000
 * characters: ~200 Gemma tokens), left-padded to the 1024 tokens */
#define TYPICAL_TOKENS 250
#define TYPICAL_NEGATIVE_TOKENS 200
#define STR_(x) #x
#define STR(x) STR_(x)
#define PEAK_SECONDS 0.3

static double layer_matmul_flops(const ltx2_gemma_config *c, int64_t rows, int64_t S) {
    const double D = (double)c->hidden, Q = (double)(c->heads * c->head_dim), KV = (double)(c->kv_heads * c->head_dim);
    const double linears = 2.0 * (double)rows * (D * Q + 2.0 * D * KV + Q * D + 3.0 * D * (double)c->ffn);
    /* QK^T and PV over every key (the CPU reference skips masked keys, so this counts the causal
     * half twice: the rate below is of the work asked, not done) */
    const double attn = 4.0 * (double)rows * (double)S * Q;
    return linears + attn;
}

typedef struct gemma_job {
    ltx2_context *ctx;
    const ltx2_gemma_weights *w;
    const int32_t *ids;
    const uint8_t *mask;
    int64_t S;
    float *hidden;
    ltx2_status st;
    ltx2_tensor kept[BATCH]; /* run_gemma_kept's device states, allocated by its first call */
    int64_t skip;            /* leading positions every prompt pads: not computed (the pipeline's rule) */
} gemma_job;

/* As the pipeline runs it: each sample's states to the host, layer-major, in its own buffer. */
static void run_gemma(void *u) {
    gemma_job *j = u;
    float *out[BATCH];
    for (int b = 0; b < BATCH; b++) out[b] = j->hidden + b * j->S * j->w->cfg.hidden * (j->w->cfg.layers + 1);
    if (j->st == LTX2_OK) j->st = ltx2_gemma_forward_split(j->ctx, j->w, j->ids, j->mask, BATCH, j->S, j->skip, out, NULL,
                                                                 NULL);
}

/* As the pipeline runs LTX-2.3's: every state copied into each sample's [L + 1, S, D] device
 * tensor, where the connectors take them (ltx2_gemma_forward_keep); the call waits for the device. */
static void run_gemma_kept(void *u) {
    gemma_job *j = u;
    const ltx2_backend *be = j->w->be;
    const int64_t L1 = j->w->cfg.layers + 1, D = j->w->cfg.hidden, ks[3] = {L1, j->S, D};
    ltx2_tensor *out[BATCH];
    for (int b = 0; b < BATCH && j->st == LTX2_OK; b++) {
        if (!j->kept[b].data) {
            void *buf = NULL;
            j->st = be->alloc(be, j->ctx, (size_t)(L1 * j->S * D) * ltx2_dtype_size(j->w->dtype), &buf);
            j->kept[b] = ltx2_tensor_make(buf, j->w->dtype, 3, ks);
            j->kept[b].device = be->device;
        }
        out[b] = &j->kept[b];
    }
    if (j->st == LTX2_OK) j->st = ltx2_gemma_forward_keep(j->ctx, j->w, j->ids, j->mask, BATCH, j->S, j->skip, out, NULL,
                                                                NULL);
    if (j->st == LTX2_OK) j->st = be->sync(be, j->ctx);
}

static void job_free(gemma_job *j) {
    for (int b = 0; b < BATCH; b++)
        if (j->kept[b].data) j->w->be->free(j->w->be, j->kept[b].data);
}

/* The layers alone: hidden states stay where they are made; the last one waits for the device. */
static ltx2_status sink_keep(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t layer) {
    (void)h;
    const gemma_job *j = user;
    return layer == j->w->cfg.layers ? j->w->be->sync(j->w->be, ctx) : LTX2_OK;
}

static void run_gemma_layers(void *u) {
    gemma_job *j = u;
    if (j->st == LTX2_OK) j->st = ltx2_gemma_forward_to(j->ctx, j->w, j->ids, j->mask, BATCH, j->S, sink_keep, j);
}

typedef struct gemm_job {
    ltx2_context *ctx; /* the forward's: its GEMM packing buffers reused, as in the forward */
    int64_t M, N, K;
    float *A, *C;
    uint16_t *Bbf;
} gemm_job;

static void run_gemm(void *u) {
    gemm_job *j = u;
    ltx2_cpu_gemm_wdt(j->ctx, j->M, j->N, j->K, 1.0f, j->A, j->K, j->Bbf, LTX2_BF16, j->K, LTX2_B_NK, 0.0f, j->C, j->N,
                      NULL);
}

/* One more forward of j's weights through the profiling backend (a warm one first): where the
 * 12B's call spends its time, and how much of its wall time lies between the ops. */
static void profile_forward(bench_report *r, ltx2_context *ctx, const ltx2_gemma_weights *w, void (*fn)(void *),
                            const gemma_job *j, const char *suffix) {
    ltx2_backend *pb = NULL;
    if (prof_backend_create(ctx, w->be, &pb) != LTX2_OK) {
        bench_report_note(r, "gemma cuda, %s: not profiled (%s)", suffix, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        return;
    }
    ltx2_gemma_weights pw = *w;
    pw.be = pb;
    gemma_job pj = *j;
    pj.w = &pw;
    pj.st = LTX2_OK;
    fn(&pj);
    prof_backend_reset(pb);
    const double t0 = bench_now();
    fn(&pj);
    const double wall = bench_now() - t0;
    char what[128];
    snprintf(what, sizeof what, "profiled Gemma forward, %lld layers, %s", (long long)w->cfg.layers, suffix);
    if (pj.st == LTX2_OK) {
        const prof_account acc = prof_backend_account(pb);
        prof_report(r, &acc, wall, what);
    } else {
        bench_report_note(r, "%s: %s", what, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    ltx2_backend_free(pb);
}

/* The same layers on the CUDA backend in bf16 (when built and a device exists): the layers alone
 * (the host gather and upload, the forward, hidden states left on the device), then end to end as
 * the pipeline runs them, every hidden state back to the host (layer-major, model/text_states.h).
 * Goal (#13): the 12B's 48 layers in <= 80 ms on one H100. */
static int bench_cuda(const bench_opts *o, bench_report *r, ltx2_context *ctx, const ltx2_gemma_weights *w,
                      const int32_t *ids, const uint8_t *mask, const uint8_t *typ, int64_t S, float *hidden,
                      double flops) {
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        bench_report_note(r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        return 0;
    }
    ltx2_gemma_weights *wd = NULL;
    int rc = 0;
    if (ltx2_gemma_weights_to(ctx, w, cuda, LTX2_BF16, &wd) != LTX2_OK) {
        fprintf(stderr, "bench_gemma: weights to cuda: %s\n", ltx2_last_error(ctx));
        rc = 1;
    } else {
        static const struct {
            const char *suffix, *what;
            void (*fn)(void *);
            bool typical;
        } runs[] = {{"layers", "hidden states left where they are made", run_gemma_layers, false},
                    {"kept", "hidden states copied into the device tensors the connectors take (LTX-2.3)",
                     run_gemma_kept, false},
                    {"to host", "every hidden state to the host, layer-major", run_gemma, false},
                    {"kept, typical prompts", "prompts of " STR(TYPICAL_TOKENS) " and " STR(TYPICAL_NEGATIVE_TOKENS)
                     " tokens, kept, the padding both share not computed (the pipeline's text stage)",
                     run_gemma_kept, true}};
        for (size_t k = 0; k < sizeof runs / sizeof runs[0] && rc == 0; k++) {
            const bool to_host = runs[k].fn == run_gemma;
            const uint8_t *m = runs[k].typical ? typ : mask;
            const int64_t skip = ltx2_gemma_pipeline_skip(wd->be, m, BATCH, S), n = S - skip;
            /* the matmuls of the rows computed */
            const double part = layer_matmul_flops(&w->cfg, BATCH * n, n) / layer_matmul_flops(&w->cfg, BATCH * S, S);
            gemma_job j = {ctx, wd, ids, m, S, hidden, LTX2_OK, {{0}}, skip};
            char name[128];
            snprintf(name, sizeof name, "gemma-3 12B shape %lld layers B%d S%lld bf16 %s", (long long)w->cfg.layers,
                     BATCH, (long long)S, runs[k].suffix);
            bench_row row = {.bench = "gemma", .name = name, .device = "cuda", .flops = flops * part};
            row.st = bench_measure(o, runs[k].fn, &j, 1);
            job_free(&j);
            if (j.st != LTX2_OK) {
                fprintf(stderr, "bench_gemma: cuda forward (%s): %s\n", runs[k].suffix, ltx2_last_error(ctx));
                rc = 1;
                break;
            }
            bench_report_row(r, &row);
            bench_report_note(r, "gemma cuda, %s: %.1f ms for %lld layers", runs[k].what, row.st.median_s * 1e3,
                              (long long)w->cfg.layers);
            /* The 12B's depth measured, not scaled: 48 layers cycling through these layers'
             * weights (each layer's 0.45 GB of weights still streams from HBM: the L2 is 50 MB),
             * local/global as the 12B's config (every 6th global). */
            ltx2_gemma_weights w48 = *wd;
            ltx2_gemma_layer_w *cyc = malloc(G12_LAYERS * sizeof *cyc);
            if (!cyc) break;
            w48.cfg.layers = G12_LAYERS;
            w48.layers = cyc;
            for (int l = 0; l < G12_LAYERS; l++) {
                cyc[l] = wd->layers[l % wd->cfg.layers];
                w48.cfg.sliding[l] = (l + 1) % G12_SLIDING_PATTERN != 0;
            }
            float *hidden48 = !to_host ? NULL : malloc((size_t)(BATCH * S * G12_HIDDEN * (G12_LAYERS + 1)) * sizeof(float));
            gemma_job j48 = {ctx, &w48, ids, m, S, hidden48, LTX2_OK, {{0}}, skip};
            char name48[128];
            snprintf(name48, sizeof name48, "gemma-3 12B %d layers (weights cycled) B%d S%lld bf16 %s", G12_LAYERS, BATCH,
                     (long long)S, runs[k].suffix);
            bench_row row48 = {.bench = "gemma", .name = name48, .device = "cuda",
                               .flops = flops * part / (double)w->cfg.layers * G12_LAYERS};
            if (!to_host || hidden48) row48.st = bench_measure(o, runs[k].fn, &j48, 1);
            if ((!to_host || hidden48) && j48.st == LTX2_OK) {
                bench_report_row(r, &row48);
                bench_report_note(r, "gemma cuda, %s: %.1f ms for the 12B's %d layers (goal <= 80 ms)", runs[k].what,
                                  row48.st.median_s * 1e3, G12_LAYERS);
                profile_forward(r, ctx, &w48, runs[k].fn, &j48, runs[k].suffix);
            } else {
                bench_report_note(r, "gemma cuda, %d layers, %s: not run (%s)", G12_LAYERS, runs[k].what,
                                  hidden48 || !to_host ? ltx2_last_error(ctx) : "no host memory for the hidden states");
                ltx2_clear_error(ctx);
            }
            job_free(&j48);
            free(hidden48);
            free(cyc);
        }
    }
    ltx2_gemma_weights_free(wd);
    ltx2_backend_free(cuda);
    return rc;
}

int main(int argc, char **argv) {
    int64_t layers = DEFAULT_LAYERS;
    bool cuda_only = false;
    char **rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (!rest) return 1;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--layers") && i + 1 < argc)
            layers = strtoll(argv[++i], NULL, 10);
        else if (i > 0 && !strcmp(argv[i], "--cuda-only"))
            cuda_only = true;
        else
            rest[n++] = argv[i];
    }
    rest[n] = NULL;
    bench_opts o;
    int rc = bench_parse_args(n, rest, &o,
                              "  --layers N  layers of the 12B's shape to run (default 2: one local, one global)\n"
                              "  --cuda-only the CUDA row alone (the CPU rows take minutes on a big machine too)\n"
                              "Gemma-3 12B-shaped layers at 2 x 1024 tokens on the CPU vs ltx2_cpu_gemm\n");
    free(rest);
    if (rc >= 0) return rc;
    if (layers < 1 || layers > G12_LAYERS) {
        fprintf(stderr, "bench_gemma: --layers must be in [1, %d]\n", G12_LAYERS);
        return 2;
    }
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    const int64_t S = o.quick ? TOKENS_QUICK : TOKENS, rows = BATCH * S;
    const ltx2_gemma_config c = gemma12b_config(layers);
    ltx2_gemma_weights *w = NULL;
    gemm_job g = {ctx, rows, G12_FFN, G12_HIDDEN, NULL, NULL, NULL};
    int32_t *ids = malloc((size_t)rows * sizeof *ids);
    uint8_t *mask = malloc((size_t)rows), *typ = malloc((size_t)rows);
    float *hidden = malloc((size_t)(rows * G12_HIDDEN * (layers + 1)) * sizeof(float));
    g.A = malloc((size_t)(g.M * g.K) * sizeof(float));
    g.C = malloc((size_t)(g.M * g.N) * sizeof(float));
    g.Bbf = malloc((size_t)(g.N * g.K) * sizeof(uint16_t));
    rc = 1;
    if (!ids || !mask || !typ || !hidden || !g.A || !g.C || !g.Bbf) {
        fprintf(stderr, "bench_gemma: out of memory\n");
        goto done;
    }
    if (ltx2_gemma_weights_random(ctx, &c, 3, WEIGHT_SCALE, &w) != LTX2_OK) {
        fprintf(stderr, "bench_gemma: random weights: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    /* two prompts: one of 200 tokens left-padded, one filling the row */
    for (int64_t b = 0; b < BATCH; b++)
        for (int64_t s = 0; s < S; s++) {
            const bool real = b == 1 || s >= S - 200;
            ids[b * S + s] = real ? (int32_t)((b * 7919 + s * 104729) % BENCH_VOCAB) : 0;
            mask[b * S + s] = real;
            /* typical prompts: a user's and the default negative one, padded to S */
            typ[b * S + s] = s >= S - (b == 0 ? TYPICAL_TOKENS : TYPICAL_NEGATIVE_TOKENS);
        }
    ltx2_rng_normal(9, 1, 0, (size_t)(g.M * g.K), g.A);
    {
        float *tmp = malloc((size_t)(g.N * g.K) * sizeof(float));
        if (!tmp) goto done;
        ltx2_rng_normal(9, 2, 0, (size_t)(g.N * g.K), tmp);
        for (int64_t i = 0; i < g.N * g.K; i++) g.Bbf[i] = ltx2_f32_to_bf16(tmp[i]);
        free(tmp);
    }
    bench_report_note(&r, "Gemma-3 12B shapes: hidden %d, %d/%d heads x %d, MLP %d; %lld layers (local, global, ...); "
                      "batch %d x %lld tokens; CPU f32 compute",
                      G12_HIDDEN, G12_HEADS, G12_KV_HEADS, G12_HEAD_DIM, G12_FFN, (long long)layers, BATCH,
                      (long long)S);
    const double flops = (double)layers * layer_matmul_flops(&c, rows, S);
    if (cuda_only) {
        rc = bench_cuda(&o, &r, ctx, w, ids, mask, typ, S, hidden, flops);
        goto done;
    }
    const double gflop = 2.0 * (double)g.M * (double)g.N * (double)g.K;
    char gname[96];
    snprintf(gname, sizeof gname, "gemm bf16-w M%lld N%d K%d", (long long)g.M, G12_FFN, G12_HIDDEN);
    bench_row grow = {.bench = "gemma", .name = gname, .device = "cpu", .flops = gflop, .roof = "fma_peak"};
    const double pk0 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    grow.st = bench_measure(&o, run_gemm, &g, 1);
    const double pk1 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    grow.roof_rate = 0.5 * (pk0 + pk1);
    bench_report_row(&r, &grow);

    gemma_job j = {ctx, w, ids, mask, S, hidden, LTX2_OK, {{0}}, ltx2_gemma_pipeline_skip(w->be, mask, BATCH, S)};
    char name[96];
    snprintf(name, sizeof name, "gemma-3 12B shape %lld layers B%d S%lld", (long long)layers, BATCH, (long long)S);
    bench_row row = {.bench = "gemma", .name = name, .device = "cpu", .flops = flops, .baseline = "gemm",
                     .baseline_s = grow.st.median_s * flops / gflop, .roof = "fma_peak"};
    row.st = bench_measure(&o, run_gemma, &j, 1);
    const double pk2 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    row.roof_rate = 0.5 * (pk1 + pk2);
    if (j.st != LTX2_OK) {
        fprintf(stderr, "bench_gemma: forward: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    bench_report_row(&r, &row);
    bench_report_note(&r, "gemma: %.1f GFLOP/s over %.0f GFLOP per forward = %.2f of the GEMM's %.1f GFLOP/s; the 12B "
                      "(%d layers) would take ~%.0f s at this rate",
                      flops / row.st.median_s * 1e-9, flops * 1e-9,
                      (flops / row.st.median_s) / (gflop / grow.st.median_s), gflop / grow.st.median_s * 1e-9,
                      G12_LAYERS, row.st.median_s / (double)layers * G12_LAYERS);
    /* the pipeline's text stage on typical prompts: the padding both share not computed */
    gemma_job jt = {ctx, w, ids, typ, S, hidden, LTX2_OK, {{0}}, ltx2_gemma_pipeline_skip(w->be, typ, BATCH, S)};
    const int64_t nt = S - jt.skip;
    char tname[128];
    snprintf(tname, sizeof tname, "gemma-3 12B shape %lld layers B%d S%lld, prompts of %d and %d tokens",
             (long long)layers, BATCH, (long long)S, TYPICAL_TOKENS, TYPICAL_NEGATIVE_TOKENS);
    bench_row trow = {.bench = "gemma", .name = tname, .device = "cpu",
                      .flops = (double)layers * layer_matmul_flops(&c, BATCH * nt, nt), .baseline = "gemm",
                      .roof = "fma_peak", .roof_rate = row.roof_rate};
    trow.baseline_s = grow.st.median_s * trow.flops / gflop;
    trow.st = bench_measure(&o, run_gemma, &jt, 1);
    if (jt.st != LTX2_OK) {
        fprintf(stderr, "bench_gemma: forward, typical prompts: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    bench_report_row(&r, &trow);
    bench_report_note(&r, "gemma, typical prompts: %lld of %lld positions computed (the first %lld pad both prompts), "
                      "%.2f x the time of the whole forward", (long long)nt, (long long)S, (long long)jt.skip,
                      trow.st.median_s / row.st.median_s);
    rc = bench_cuda(&o, &r, ctx, w, ids, mask, typ, S, hidden, flops);
done:
    free(ids), free(mask), free(typ), free(hidden), free(g.A), free(g.C), free(g.Bbf);
    ltx2_gemma_weights_free(w);
    bench_report_close(&r);
    ltx2_context_free(ctx);
    return rc;
}
