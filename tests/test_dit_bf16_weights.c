/* The CPU runs a checkpoint's bf16 Linear weights straight from the file (no host copy of the DiT's
 * matrices): the weights a single-process forward runs on (ltx2_dit_weights_load_file / _load_on)
 * view the file's mapping for every matrix, kept alive after the loader closed the file, and hold
 * only the vectors (norms, biases, tables) in f32; the all-f32 load (the parallel path's source)
 * copies everything; the forward on either is bitwise the same (the GEMM widens bf16 exactly while
 * packing). The tiny checkpoints are stored in bf16, like the real ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "test_util.h"

/* Linear weights are most of the DiT's bytes: without them the store is at most this fraction of the
 * all-f32 one (tiny 2.0 / 2.3 measure 0.029x / 0.031x: norms, biases and tables; real sizes far less). */
#define MAPPED_STORE_MAX_FRACTION 0.1

static ltx2_context *g_ctx;

static void check_version(const char *version) {
    char ck[1024], gp[1024];
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *bf = NULL, *f32 = NULL;
    ltx2_st_file *f = NULL, *g = NULL;
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, ck, &bf);
    if (st == LTX2_OK) st = ltx2_st_open(g_ctx, ck, &f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load(g_ctx, f, NULL, &cfg, &f32);
    if (st == LTX2_OK) st = ltx2_st_open(g_ctx, gp, &g);
    CHECK(st == LTX2_OK, "%s: %s", version, ltx2_last_error(g_ctx));
    dit_inputs in;
    if (st != LTX2_OK || !dit_inputs_load(g_ctx, g, DIT_INPUTS_UNMASKED, &in)) goto out;

    CHECK(bf->store.matrix_dtype == LTX2_BF16 && bf->store.dtype == LTX2_F32, "%s: matrices %s, vectors %s", version,
          ltx2_dtype_name(bf->store.matrix_dtype), ltx2_dtype_name(bf->store.dtype));
    CHECK(bf->blocks[0].attn1.q.w.dtype == LTX2_BF16 && bf->blocks[0].attn1.q.b.dtype == LTX2_F32 &&
              bf->sst.dtype == LTX2_F32,
          "%s: to_q weight %s, bias %s, scale_shift_table %s", version, ltx2_dtype_name(bf->blocks[0].attn1.q.w.dtype),
          ltx2_dtype_name(bf->blocks[0].attn1.q.b.dtype), ltx2_dtype_name(bf->sst.dtype));
    CHECK(f32->store.matrix_dtype == LTX2_F32 && f32->blocks[0].attn1.q.w.dtype == LTX2_F32,
          "%s: the all-f32 load keeps f32", version);
    const double frac = (double)bf->store.n_bytes / (double)f32->store.n_bytes;
    printf("%s: DiT store %zu bytes + %zu bytes of bf16 matrices viewed in the file, %zu all f32 (%.3fx), %zu "
           "elements both\n", version, bf->store.n_bytes, bf->store.n_mapped_bytes, f32->store.n_bytes, frac,
           bf->store.n_elems);
    CHECK(bf->store.mapping && !f32->store.mapping, "%s: matrices are views of the file only in the bf16 load",
          version);
    CHECK(frac <= MAPPED_STORE_MAX_FRACTION && bf->store.n_elems == f32->store.n_elems, "%s: store fraction %.3f",
          version, frac);
    /* every matrix byte is viewed: f32 bytes = 4 x elements, split into the vectors (in both stores) and
     * the matrices (2 bytes each in the file) */
    const ltx2_st_tensor *q = ltx2_st_find(f, "model.diffusion_model.transformer_blocks.0.attn1.to_q.weight");
    CHECK(q && bf->store.n_mapped_bytes >= (size_t)(q->shape[0] * q->shape[1] * 2) &&
              bf->store.n_mapped_bytes % 2 == 0 && bf->store.n_mapped_bytes < f->file_size,
          "%s: %zu mapped bytes", version, bf->store.n_mapped_bytes);

    const int64_t B = in.B;
    const size_t nv = (size_t)(B * in.video.T * bf->cfg.out_channels),
                 na = (size_t)(B * in.audio.T * bf->cfg.audio_out_channels);
    float *v1 = malloc(nv * sizeof(float)), *a1 = malloc(na * sizeof(float));
    float *v2 = malloc(nv * sizeof(float)), *a2 = malloc(na * sizeof(float));
    ltx2_dit_forward_params p = in.p;
    st = ltx2_dit_forward(g_ctx, bf, &p, v1, a1);
    CHECK(st == LTX2_OK, "%s: forward on bf16 matrices: %s", version, ltx2_last_error(g_ctx));
    p = in.p;
    if (st == LTX2_OK) st = ltx2_dit_forward(g_ctx, f32, &p, v2, a2);
    CHECK(st == LTX2_OK, "%s: forward on f32: %s", version, ltx2_last_error(g_ctx));
    if (st == LTX2_OK)
        CHECK(memcmp(v1, v2, nv * sizeof(float)) == 0 && memcmp(a1, a2, na * sizeof(float)) == 0,
              "%s: the forward on bf16 matrices is not bitwise the f32 one", version);
    free(v1), free(a1), free(v2), free(a2);
    dit_inputs_free(&in);
out:
    ltx2_st_close(g);
    ltx2_st_close(f);
    ltx2_dit_weights_free(bf);
    ltx2_dit_weights_free(f32);
}

int main(void) { return dit_test_both_versions(&g_ctx, check_version); }
