/* Block 0 of the tiny LTX-2.0 and LTX-2.3 DiTs on the CUDA backend (bf16 storage, fp32
 * accumulation, src/model/dit_cuda.c) against the fp32 CPU block (dit_block_forward) on the same
 * inputs: the golden batch of dit_blocks_<v>.safetensors taken through the forward up to block 0
 * (embeddings, AdaLN, RoPE tables), once plain and once with STG / isolation perturbations.
 * Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/dit_cuda.h"
#include "model/dit_internal.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "test_util.h"

/* bf16 storage of the residual stream and every activation (2^-9 relative rounding per step, a
 * few dozen steps per block) keeps the block output's direction to ~1e-5; a wrong modulation row,
 * gate or RoPE table drops the cosine to ~0.99 or below. */
#define DIT_DEVICE_MIN_COSINE 0.9999

static ltx2_context *g_ctx;

typedef struct hook_state {
    const ltx2_backend *be;
    double cos_v, cos_a;
    bool ran;
    ltx2_status dev_st;
} hook_state;

static double cosine(const float *a, const float *b, int64_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

/* Block hook: block 0 runs on the CPU and on the device from the same input; the forward goes on
 * with the CPU result. */
static ltx2_status hook(dit_run *r, int64_t i, dit_stream *v, dit_stream *a, void *user) {
    hook_state *h = user;
    if (i != 0) return dit_block_forward(r, i, v, a);
    const int64_t nv = v->B * v->T * v->D, na = a->B * a->T * a->D;
    float *x0v = malloc((size_t)nv * sizeof(float)), *x0a = malloc((size_t)na * sizeof(float));
    float *rv = malloc((size_t)nv * sizeof(float)), *ra = malloc((size_t)na * sizeof(float));
    if (!x0v || !x0a || !rv || !ra) {
        free(x0v), free(x0a), free(rv), free(ra);
        return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "test hook buffers");
    }
    memcpy(x0v, v->x, (size_t)nv * sizeof(float));
    memcpy(x0a, a->x, (size_t)na * sizeof(float));
    ltx2_status st = dit_block_forward(r, i, v, a);
    if (st == LTX2_OK) {
        memcpy(rv, v->x, (size_t)nv * sizeof(float));
        memcpy(ra, a->x, (size_t)na * sizeof(float));
        memcpy(v->x, x0v, (size_t)nv * sizeof(float));
        memcpy(a->x, x0a, (size_t)na * sizeof(float));
        h->dev_st = ltx2_dit_block_device(r->ctx, h->be, r->w, i, r->perturb, v, a);
        if (h->dev_st == LTX2_OK) {
            h->cos_v = cosine(rv, v->x, nv);
            h->cos_a = cosine(ra, a->x, na);
            h->ran = true;
        } else {
            printf("  device block: %s\n", ltx2_last_error(r->ctx));
        }
        memcpy(v->x, rv, (size_t)nv * sizeof(float));
        memcpy(a->x, ra, (size_t)na * sizeof(float));
    }
    free(x0v), free(x0a), free(rv), free(ra);
    return st;
}

static void run_version(const ltx2_backend *be, const char *version) {
    char wpath[1024], gpath[1024];
    snprintf(wpath, sizeof wpath, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *w = NULL;
    ltx2_st_file *f = NULL;
    if (ltx2_dit_weights_load_file(g_ctx, wpath, &w) != LTX2_OK || ltx2_st_open(g_ctx, gpath, &f) != LTX2_OK) {
        CHECK(0, "%s: %s", version, ltx2_last_error(g_ctx));
        ltx2_dit_weights_free(w);
        return;
    }
    dit_inputs in;
    const bool ok = dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &in);
    CHECK(ok, "%s: golden inputs missing", gpath);
    if (ok) {
        const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T;
        const int64_t L = w->cfg.num_layers;
        uint32_t *perturb = calloc((size_t)(B * L), sizeof(uint32_t));
        float *ov = malloc((size_t)(B * Tv * w->cfg.out_channels) * sizeof(float));
        float *oa = malloc((size_t)(B * Ta * w->cfg.audio_out_channels) * sizeof(float));
        int64_t blk0 = 0;
        /* sample 1 skips video self-attention and a2v in block 0 (STG + isolation paths) */
        CHECK(ltx2_dit_perturb_set(g_ctx, perturb, L, 1, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_A2V_CROSS_ATTN,
                                   &blk0, 1) == LTX2_OK, "perturb");
        for (int pass = 0; pass < 2; pass++) {
            ltx2_dit_forward_params p = in.p;
            p.perturb = pass ? perturb : NULL;
            hook_state h = {.be = be};
            ltx2_status st = dit_forward_blocks(g_ctx, w, &p, hook, &h, ov, oa);
            CHECK(st == LTX2_OK, "%s forward: %s", version, ltx2_last_error(g_ctx));
            CHECK(h.ran, "%s%s: device block 0 did not run", version, pass ? " (perturbed)" : "");
            if (h.ran) {
                printf("%s%s block 0: cosine video %.7f audio %.7f (min %.4f)\n", version, pass ? " perturbed" : "",
                       h.cos_v, h.cos_a, DIT_DEVICE_MIN_COSINE);
                CHECK(h.cos_v >= DIT_DEVICE_MIN_COSINE && h.cos_a >= DIT_DEVICE_MIN_COSINE,
                      "%s block 0 cosine video %.7f audio %.7f < %.4f", version, h.cos_v, h.cos_a,
                      DIT_DEVICE_MIN_COSINE);
            }
        }
        free(perturb), free(ov), free(oa);
    }
    dit_inputs_free(&in);
    ltx2_st_close(f);
    ltx2_dit_weights_free(w);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    ltx2_backend *be = NULL;
    if (ltx2_backend_cuda_create(g_ctx, 0, &be) != LTX2_OK) {
        printf("skip: no CUDA backend (%s)\n", ltx2_last_error(g_ctx));
        ltx2_context_free(g_ctx);
        return 77;
    }
    run_version(be, "2.0");
    run_version(be, "2.3");
    ltx2_backend_free(be);
    ltx2_context_free(g_ctx);
    return test_finish();
}
