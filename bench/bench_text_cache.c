/* A prompt's Gemma hidden states to and from a file at the 12B's size (49 states of 1024 x 3840 a
 * prompt): the interchange form (f32, layer-last: what --save-prompt-embeds writes and the text
 * cache wrote before) against the text cache's form (layer-major, in the states' dtype), written
 * from host f32 states (the CPU encoder) and from bf16 states kept on a device, read back to the
 * host and, where a CUDA device exists, onto it; then a typical prompt, whose padding the cache
 * leaves out. A row's GB/s counts the file's bytes; the files go
 * to $TMPDIR (else /tmp) and are read back while still in the page cache, so a row is the host's
 * work and copies, not the disk's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "bench.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "gemma12b.h"
#include "pipeline/pipeline.h"

#define TOKENS 1024
#define TOKENS_QUICK 256
/* the typical-prompt rows: a user's prompt of this many tokens, left-padded */
#define TYPICAL_TOKENS 250
#define STR_(x) #x
#define STR(x) STR_(x)
/* the cache file's states and mask against the header: the bytes a row counts */
#define MASK_BYTES(S) ((double)(S) * 8.0)

typedef struct file_job {
    ltx2_context *ctx;
    const ltx2_pipe_text *t; /* what a save writes */
    const char *path;
    const ltx2_backend *to; /* a load onto this device, NULL: the host */
    int64_t text_dim;
    bool cache_form;
    ltx2_status st;
} file_job;

static void run_save(void *u) {
    file_job *j = u;
    if (j->st != LTX2_OK) return;
    j->st = j->cache_form ? ltx2_pipe_text_save_cache(j->ctx, j->t, j->path)
                          : ltx2_pipe_text_save(j->ctx, j->t, j->path);
}

static void run_load(void *u) {
    file_job *j = u;
    if (j->st != LTX2_OK) return;
    ltx2_pipe_text back;
    j->st = ltx2_pipe_text_load_on(j->ctx, j->path, j->text_dim, j->to, &back);
    if (j->st == LTX2_OK && j->to) j->st = j->to->sync(j->to, j->ctx);
    ltx2_pipe_text_free(&back);
}

/* One row: a save (to NULL) or a load of the file at path. */
static bool measure(const bench_opts *o, bench_report *r, file_job *j, bool save, const char *name,
                    const char *device, double bytes) {
    bench_row row = {.bench = "text_cache", .name = name, .device = device, .bytes = bytes};
    row.st = bench_measure(o, save ? run_save : run_load, j, 1);
    if (j->st != LTX2_OK) {
        fprintf(stderr, "bench_text_cache: %s: %s\n", name, ltx2_last_error(j->ctx));
        return false;
    }
    bench_report_row(r, &row);
    return true;
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o,
                              "A prompt's 12B-sized Gemma states saved and loaded: the interchange file (f32,\n"
                              "layer-last) against the text cache's (layer-major, the states' dtype)\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    const int64_t S = o.quick ? TOKENS_QUICK : TOKENS, D = G12_HIDDEN, L = G12_LAYERS + 1, n = L * S * D;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char last_path[4096], cache_path[4096], bf16_path[4096];
    snprintf(last_path, sizeof last_path, "%s/bench_text_cache_%d_last.safetensors", tmp, (int)getpid());
    snprintf(cache_path, sizeof cache_path, "%s/bench_text_cache_%d_f32.safetensors", tmp, (int)getpid());
    snprintf(bf16_path, sizeof bf16_path, "%s/bench_text_cache_%d_bf16.safetensors", tmp, (int)getpid());
    /* host f32 states (the CPU encoder's), and the same values as bf16 states on a "device": the
     * CPU backend's buffer stands for it (the save path downloads whatever backend holds them) */
    ltx2_pipe_text host = {.S = S, .D = D, .L = L}, kept = {.S = S, .D = D, .L = L};
    host.hidden = malloc((size_t)n * sizeof(float));
    host.mask = malloc((size_t)S);
    kept.mask = host.mask;
    uint16_t *bf = malloc((size_t)n * sizeof *bf);
    rc = 1;
    if (!host.hidden || !host.mask || !bf) {
        fprintf(stderr, "bench_text_cache: out of memory\n");
        goto done;
    }
    ltx2_rng_normal(5, 1, 0, (size_t)n, host.hidden);
    for (int64_t i = 0; i < n; i++) bf[i] = ltx2_f32_to_bf16(host.hidden[i]);
    /* every position a token: the forms compared at the same size (the cache leaves a prompt's
     * padding out; the typical-prompt rows below show that) */
    for (int64_t s = 0; s < S; s++) host.mask[s] = 1;
    const int64_t ks[4] = {1, L, S, D};
    kept.dev = ltx2_tensor_make(bf, LTX2_BF16, 4, ks);
    kept.dev_be = ltx2_backend_cpu();
    bench_report_note(&r, "one prompt's states: %lld x %lld x %lld (the 12B's %d layers + the embedding); files in %s",
                      (long long)L, (long long)S, (long long)D, G12_LAYERS, tmp);
    const double f32_bytes = (double)n * 4.0 + MASK_BYTES(S), bf16_bytes = (double)n * 2.0 + MASK_BYTES(S);
    file_job j = {ctx, &host, last_path, NULL, D * L, false, LTX2_OK};
    bool ok = measure(&o, &r, &j, true, "save interchange f32 layer-last, from host f32", "cpu", f32_bytes);
    j.path = cache_path, j.cache_form = true;
    ok = ok && measure(&o, &r, &j, true, "save cache f32 layer-major, from host f32", "cpu", f32_bytes);
    j.t = &kept, j.path = bf16_path;
    ok = ok && measure(&o, &r, &j, true, "save cache bf16 layer-major, from kept bf16", "cpu", bf16_bytes);
    j.t = &kept, j.path = last_path, j.cache_form = false;
    ok = ok && measure(&o, &r, &j, true, "save interchange f32 layer-last, from kept bf16", "cpu", f32_bytes);
    j.path = last_path;
    ok = ok && measure(&o, &r, &j, false, "load interchange f32 layer-last, to host f32", "cpu", f32_bytes);
    j.path = cache_path;
    ok = ok && measure(&o, &r, &j, false, "load cache f32 layer-major, to host f32", "cpu", f32_bytes);
    j.path = bf16_path;
    ok = ok && measure(&o, &r, &j, false, "load cache bf16 layer-major, to host f32", "cpu", bf16_bytes);
    /* a prompt of TYPICAL_TOKENS: the cache stores its tokens' rows only, the interchange file all */
    uint8_t *typ = malloc((size_t)S);
    ok = ok && typ;
    for (int64_t s = 0; ok && s < S; s++) typ[s] = s >= S - TYPICAL_TOKENS;
    ltx2_pipe_text kept_typ = kept;
    kept_typ.mask = typ;
    const double typ_bytes = (double)(L * TYPICAL_TOKENS * D) * 2.0 + MASK_BYTES(S);
    j.t = &kept_typ, j.path = bf16_path, j.cache_form = true;
    ok = ok && measure(&o, &r, &j, true, "save cache bf16, from kept bf16, " STR(TYPICAL_TOKENS) "-token prompt", "cpu",
                       typ_bytes);
    ok = ok && measure(&o, &r, &j, false, "load cache bf16, to host f32, " STR(TYPICAL_TOKENS) "-token prompt", "cpu",
                       typ_bytes);
    free(typ);
    j.path = bf16_path; /* the device row loads the typical prompt's file */
    if (ok) {
        ltx2_backend *cuda = NULL;
        if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
            bench_report_note(&r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        } else {
            j.to = cuda;
            ok = measure(&o, &r, &j, false, "load cache bf16, onto the device, " STR(TYPICAL_TOKENS) "-token prompt",
                         "cuda", typ_bytes);
            ltx2_backend_free(cuda);
        }
    }
    rc = ok ? 0 : 1;
done:
    unlink(last_path), unlink(cache_path), unlink(bf16_path);
    free(host.hidden), free(host.mask), free(bf);
    bench_report_close(&r);
    ltx2_context_free(ctx);
    return rc;
}
