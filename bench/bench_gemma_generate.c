/* Gemma-3 generation (--enhance-prompt) on the CPU at the 12B's layer shapes with random weights:
 * the prompt's pass into the K/V cache, the prompt plus DECODE_TOKENS cached decoding steps, and
 * for contrast one step as a loop without a cache would take it (the whole sequence again). The
 * per-token decoding cost is the difference of the first two rows over DECODE_TOKENS; the 12B's 48
 * layers scale from the per-layer times. The LM head (262k x 3840 on the CPU) is not included. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gemma12b.h"
#include "model/gemma.h"
#include "model/gemma_generate.h"

#define LAYERS 2 /* one local, one global */
/* A chat prompt of about the size Lightricks' system prompt makes (--quick: 128), and the steps */
#define PROMPT_TOKENS 1024
#define PROMPT_TOKENS_QUICK 128
#define DECODE_TOKENS 16

typedef struct gen_job {
    ltx2_context *ctx;
    const ltx2_gemma_weights *w;
    const int32_t *ids;
    const uint8_t *mask;
    const int64_t *pos;
    int64_t prompt, decode; /* decode: cached steps after the prompt; -1: one uncached step */
    float *h;
    ltx2_status st;
} gen_job;

static void run(void *user) {
    gen_job *j = user;
    if (j->st != LTX2_OK) return;
    ltx2_gemma_last_row lr = {j->w->be, j->w->cfg.layers, j->prompt, j->w->cfg.hidden, j->h};
    if (j->decode < 0) { /* the sequence again, one token longer */
        lr.S = j->prompt + 1;
        j->st = ltx2_gemma_forward_pos(j->ctx, j->w, j->ids, j->mask, j->pos, 1, j->prompt + 1, ltx2_gemma_keep_last,
                                       &lr);
        return;
    }
    ltx2_gemma_kv *kv = NULL;
    j->st = ltx2_gemma_kv_create(j->ctx, j->w, j->prompt + j->decode, &kv);
    if (j->st == LTX2_OK)
        j->st = ltx2_gemma_forward_kv(j->ctx, j->w, kv, j->ids, j->mask, j->pos, j->prompt, ltx2_gemma_keep_last, &lr);
    lr.S = 1;
    for (int64_t t = 0; j->st == LTX2_OK && t < j->decode; t++) {
        const int64_t at = j->prompt + t;
        j->st = ltx2_gemma_forward_kv(j->ctx, j->w, kv, j->ids + at, j->mask + at, j->pos + at, 1,
                                      ltx2_gemma_keep_last, &lr);
    }
    ltx2_gemma_kv_free(kv);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "Gemma-3 12B-shaped generation: prompt pass, cached decoding\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    const int64_t P = o.quick ? PROMPT_TOKENS_QUICK : PROMPT_TOKENS, n = P + DECODE_TOKENS;
    const ltx2_gemma_config c = gemma12b_config(LAYERS);
    ltx2_gemma_weights *w = NULL;
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    uint8_t *mask = malloc((size_t)n);
    int64_t *pos = malloc((size_t)n * sizeof *pos);
    float *h = malloc((size_t)G12_HIDDEN * sizeof *h);
    rc = 1;
    if (!ids || !mask || !pos || !h || ltx2_gemma_weights_random(ctx, &c, 5, WEIGHT_SCALE, &w) != LTX2_OK) {
        fprintf(stderr, "bench_gemma_generate: setup: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    for (int64_t i = 0; i < n; i++) ids[i] = (int32_t)((i * 104729) % BENCH_VOCAB), mask[i] = 1, pos[i] = i;
    bench_report_note(&r, "Gemma-3 12B layer shapes, %d layers, CPU f32; prompt %lld tokens, %d decoding steps",
                      LAYERS, (long long)P, DECODE_TOKENS);
    const char *what[3] = {"prompt pass (K/V cache filled)", "prompt + cached decoding", "one uncached step"};
    const int64_t dec[3] = {0, DECODE_TOKENS, -1};
    double t[3] = {0};
    for (int k = 0; k < 3; k++) {
        gen_job j = {ctx, w, ids, mask, pos, P, dec[k], h, LTX2_OK};
        char name[128];
        snprintf(name, sizeof name, "gemma-3 12B shape %d layers: %s, %lld tokens", LAYERS, what[k],
                 (long long)(P + (dec[k] > 0 ? dec[k] : 0)));
        bench_row row = {.bench = "gemma_generate", .name = name, .device = "cpu"};
        row.st = bench_measure(&o, run, &j, 1);
        if (j.st != LTX2_OK) {
            fprintf(stderr, "bench_gemma_generate: %s: %s\n", what[k], ltx2_last_error(ctx));
            goto done;
        }
        bench_report_row(&r, &row);
        t[k] = row.st.median_s;
    }
    const double per_token = (t[1] - t[0]) / DECODE_TOKENS;
    bench_report_note(&r, "cached decoding: %.1f ms per token for %d layers (%.2f s per token for the 12B's %d); a step "
                      "without the cache: %.0f ms (%.0fx); the 12B's prompt pass: ~%.0f s",
                      per_token * 1e3, LAYERS, per_token / LAYERS * G12_LAYERS, G12_LAYERS, t[2] * 1e3,
                      t[2] / per_token, t[0] / LAYERS * G12_LAYERS);
    rc = 0;
done:
    free(ids), free(mask), free(pos), free(h);
    ltx2_gemma_weights_free(w);
    bench_report_close(&r);
    ltx2_context_free(ctx);
    return rc;
}
