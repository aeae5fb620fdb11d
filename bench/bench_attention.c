/* Attention forward on the GPU at LTX-2 shapes (768x512x121: video self-attention B2 H32 S6144
 * d128; video->text cross-attention with a padding mask; audio self-attention H32 d64), bf16.
 * In-binary baseline: the unfused pipeline of our own kernels (standalone RoPE kernel, and the
 * RMSNorm op for QK-norm, on q and k, then our attention without RoPE/norm), so `x baseline`
 * measures what the fusion saves. The cuDNN SDPA baseline the issue names is timed by
 * bench/sdpa_cudnn_torch.py (PyTorch's cuDNN attention backend; cuDNN's fused attention has no C
 * API short of its backend graph, which we do not wrap), which pairs its times with this
 * binary's "<shape> [prep]" rows (the RoPE/RMSNorm kernels alone) by case name.
 * Roofline: a measured bf16 cuBLASLt GEMM rate (8192^3) as the tensor-core ceiling; attention
 * FLOPs = 4 * B * H * Sq * Skv * d (QK^T and PV). CPU-only builds print a skip note.
 * Every shape gets one row per attention kernel the device runs, named "<shape> [mma_sync]"
 * (portable sm_80 kernel) and "<shape> [wgmma]" (sm_90a wgmma/TMA kernel, compute capability
 * 9.x only), each from a backend created with LTX2_ATTN_IMPL set accordingly; when the caller
 * set LTX2_ATTN_IMPL, only that choice is measured. Head-dim-128 shapes without a causal mask also
 * get "<shape> [wgmma_fp8]": e4m3 attention (ltx2_attn_args.fp8), its quantising pre-pass
 * included, against the [wgmma] row. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "device_util.h"

/* GPU: launches per timed sample (amortises launch gaps and the closing sync). */
#define GPU_INNER 10
/* Philox seed of the inputs. */
#define ATT_SEED 7
/* The attention kernels compared: a row name, the LTX2_ATTN_IMPL and LTX2_ATTN_PREP values of its
 * backend (src/backend/backend_kernels.h). "wgmma_in_kernel" is the wgmma kernel with Q's norm /
 * RoPE and the key mask done inside it, the layout before the pre-pass took them (timed beside it
 * until a GPU run has compared the two). */
#define ATTN_IMPL_ENV "LTX2_ATTN_IMPL"
#define ATTN_PREP_ENV "LTX2_ATTN_PREP"
#define N_ATTN_IMPLS 3
typedef struct attn_impl {
    const char *name, *impl, *prep;
} attn_impl;
static const attn_impl attn_impls[N_ATTN_IMPLS] = {
    {"mma_sync", "mma_sync", "auto"}, {"wgmma", "wgmma", "auto"}, {"wgmma_in_kernel", "wgmma", "in_kernel"}};

typedef struct att_shape {
    const char *name;
    int64_t B, Sq, Skv, H, d;
    bool rope, qknorm, mask;
    bool quick;
    int64_t Hkv; /* grouped K/V heads (0: H) */
    bool causal;
} att_shape;

static const att_shape shapes[] = {
    {"video self B2 H32 S6144 d128", 2, 6144, 6144, 32, 128, false, false, false, true, 0, false},
    {"video self B2 H32 S6144 d128 +rope", 2, 6144, 6144, 32, 128, true, false, false, true, 0, false},
    {"video self B2 H32 S6144 d128 +qknorm+rope", 2, 6144, 6144, 32, 128, true, true, false, false, 0, false},
    {"video->text B2 H32 Sq6144 Skv1024 d128 +qknorm+mask", 2, 6144, 1024, 32, 128, false, true, true, false, 0, false},
    {"audio self B2 H32 S126 d64 +qknorm+rope", 2, 126, 126, 32, 64, true, true, false, false, 0, false},
    /* the audio-video cross-attentions (each 48 of a 2.0 call's 288 attention calls): video queries on
     * the 126 audio keys, and audio queries on the 6144 video keys, both in the audio's heads */
    {"a2v video q B2 H32 Sq6144 Skv126 d64 +qknorm+rope", 2, 6144, 126, 32, 64, true, true, false, false, 0, false},
    {"v2a audio q B2 H32 Sq126 Skv6144 d64 +qknorm+rope", 2, 126, 6144, 32, 64, true, true, false, false, 0, false},
    /* Gemma-3 12B text encoder, a layer at 2 x 1024 tokens (its sliding window, 1024, cuts nothing
     * there): the wgmma kernel's head dim 256 (64-key tiles) and causal / grouped-head masks, which
     * AUTO gives it only once a GPU run has passed (kernels/attention.cu, ATT_AUTO_PICKS_WGMMA_GEMMA) */
    {"gemma-3 12B self B2 H16/kv8 S1024 d256 +causal", 2, 1024, 1024, 16, 256, false, false, false, true, 8, true},
};

typedef struct att_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    bool unfused;
    bool prep_only; /* unfused steps without the attention: the "[prep]" row */
    ltx2_tensor q, k, v, out, q2, k2, qn, kn, qc, qs, kc, ks, mask;
    ltx2_attn_args a;
    ltx2_status st;
} att_job;

static void run_att(void *u) {
    att_job *j = u;
    for (int i = 0; i < GPU_INNER && j->st == LTX2_OK; i++) {
        if (!j->unfused) {
            j->st = ltx2_backend_attention(j->be, j->ctx, &j->q, &j->k, &j->v, &j->a, &j->out);
            continue;
        }
        /* unfused: [RMSNorm] -> RoPE kernel on q and k, then attention with neither */
        const ltx2_tensor *qs = &j->q, *ks = &j->k;
        if (j->a.q_norm) {
            j->st = ltx2_backend_rms_norm(j->be, j->ctx, &j->q, j->a.q_norm, j->a.norm_eps, &j->q2);
            if (j->st == LTX2_OK) j->st = ltx2_backend_rms_norm(j->be, j->ctx, &j->k, j->a.k_norm, j->a.norm_eps, &j->k2);
            qs = &j->q2;
            ks = &j->k2;
        }
        if (j->st == LTX2_OK && j->a.q_cos) {
            j->st = ltx2_backend_rope(j->be, j->ctx, qs, j->a.rope_type, j->a.heads, j->a.q_cos, j->a.q_sin, &j->q2);
            if (j->st == LTX2_OK)
                j->st = ltx2_backend_rope(j->be, j->ctx, ks, j->a.rope_type, j->a.heads, j->a.k_cos, j->a.k_sin, &j->k2);
            qs = &j->q2;
            ks = &j->k2;
        }
        ltx2_attn_args plain = {.heads = j->a.heads, .scale = j->a.scale, .key_mask = j->a.key_mask};
        if (j->st == LTX2_OK && !j->prep_only) j->st = ltx2_backend_attention(j->be, j->ctx, qs, ks, &j->v, &plain, &j->out);
    }
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

/* Inputs are allocated on `be`; each of the n_impl backends in impl_be (same device) runs them. */
static void bench_shape(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                        const att_shape *s, double ceil_rate, ltx2_backend *const *impl_be,
                        const char *const *impl_names, int n_impl) {
    const int64_t D = s->H * s->d, Dkv = (s->Hkv ? s->Hkv : s->H) * s->d, nq = s->B * s->Sq * D,
                  nk = s->B * s->Skv * Dkv;
    const int64_t qsh[3] = {s->B, s->Sq, D}, ksh[3] = {s->B, s->Skv, Dkv}, msh[2] = {s->B, s->Skv};
    const int64_t tq[4] = {s->B, s->H, s->Sq, s->d / 2}, tk[4] = {s->B, s->H, s->Skv, s->d / 2};
    att_job j = {.be = be, .ctx = ctx, .st = LTX2_OK};
    void *bufs[12] = {0};
    bufs[0] = bench_dev_randn(be, ctx, LTX2_BF16, nq, ATT_SEED, 10, 1.0f);
    bufs[1] = bench_dev_randn(be, ctx, LTX2_BF16, nk, ATT_SEED, 11, 1.0f);
    bufs[2] = bench_dev_randn(be, ctx, LTX2_BF16, nk, ATT_SEED, 12, 1.0f);
    bufs[3] = bench_dev_randn(be, ctx, LTX2_BF16, nq, ATT_SEED, 13, 1.0f); /* out */
    bufs[4] = bench_dev_randn(be, ctx, LTX2_BF16, nq, ATT_SEED, 14, 1.0f); /* unfused q scratch */
    bufs[5] = bench_dev_randn(be, ctx, LTX2_BF16, nk, ATT_SEED, 15, 1.0f); /* unfused k scratch */
    bool ok = bufs[0] && bufs[1] && bufs[2] && bufs[3] && bufs[4] && bufs[5];
    j.q = bench_dev_view(bufs[0], LTX2_BF16, 3, qsh);
    j.k = bench_dev_view(bufs[1], LTX2_BF16, 3, ksh);
    j.v = bench_dev_view(bufs[2], LTX2_BF16, 3, ksh);
    j.out = bench_dev_view(bufs[3], LTX2_BF16, 3, qsh);
    j.q2 = bench_dev_view(bufs[4], LTX2_BF16, 3, qsh);
    j.k2 = bench_dev_view(bufs[5], LTX2_BF16, 3, ksh);
    j.a = (ltx2_attn_args){.heads = s->H, .scale = (float)(1.0 / sqrt((double)s->d)), .norm_eps = 1e-6f,
                           .rope_type = LTX2_ROPE_SPLIT, .kv_heads = s->Hkv, .causal = s->causal,
                           .empty_zero = s->causal};
    if (s->qknorm) {
        bufs[6] = bench_dev_randn(be, ctx, LTX2_BF16, D, ATT_SEED, 16, 0.1f);
        bufs[7] = bench_dev_randn(be, ctx, LTX2_BF16, D, ATT_SEED, 17, 0.1f);
        ok = ok && bufs[6] && bufs[7];
        j.qn = bench_dev_view(bufs[6], LTX2_BF16, 1, &D);
        j.kn = bench_dev_view(bufs[7], LTX2_BF16, 1, &D);
        j.a.q_norm = &j.qn;
        j.a.k_norm = &j.kn;
    }
    if (s->rope) {
        /* tables are values in [-1, 1]; random normals scaled down are as good for timing */
        bufs[8] = bench_dev_randn(be, ctx, LTX2_F32, s->B * s->Sq * D / 2, ATT_SEED, 18, 0.5f);
        bufs[9] = bench_dev_randn(be, ctx, LTX2_F32, s->B * s->Sq * D / 2, ATT_SEED, 19, 0.5f);
        bufs[10] = bench_dev_randn(be, ctx, LTX2_F32, s->B * s->Skv * D / 2, ATT_SEED, 20, 0.5f);
        bufs[11] = bench_dev_randn(be, ctx, LTX2_F32, s->B * s->Skv * D / 2, ATT_SEED, 21, 0.5f);
        ok = ok && bufs[8] && bufs[9] && bufs[10] && bufs[11];
        j.qc = bench_dev_view(bufs[8], LTX2_F32, 4, tq);
        j.qs = bench_dev_view(bufs[9], LTX2_F32, 4, tq);
        j.kc = bench_dev_view(bufs[10], LTX2_F32, 4, tk);
        j.ks = bench_dev_view(bufs[11], LTX2_F32, 4, tk);
        j.a.q_cos = &j.qc;
        j.a.q_sin = &j.qs;
        j.a.k_cos = &j.kc;
        j.a.k_sin = &j.ks;
    }
    void *mask = NULL;
    if (s->mask) {
        /* text padding: the first 3/4 of the keys are real tokens */
        uint8_t *hm = malloc((size_t)(s->B * s->Skv));
        for (int64_t i = 0; hm && i < s->B * s->Skv; i++) hm[i] = (i % s->Skv) < (3 * s->Skv) / 4;
        ok = ok && hm && be->alloc(be, ctx, (size_t)(s->B * s->Skv), &mask) == LTX2_OK &&
             be->upload(be, ctx, mask, hm, (size_t)(s->B * s->Skv)) == LTX2_OK;
        free(hm);
        j.mask = bench_dev_view(mask, LTX2_U8, 2, msh);
        j.a.key_mask = &j.mask;
    }
    if (!ok) {
        bench_report_note(r, "%s: allocation failed: %s", s->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        goto done;
    }
    /* causal: the score pairs a query sees, Sq (Sq + 1) / 2 (bench/sdpa_cudnn_torch.py counts alike) */
    const double pairs = s->causal ? (double)s->Sq * (double)(s->Sq + 1) / 2.0 : (double)s->Sq * (double)s->Skv;
    double flops = 4.0 * (double)s->B * (double)s->H * pairs * (double)s->d;
    bench_row row = {.bench = "attention", .name = s->name, .device = "cuda", .flops = flops,
                     .bytes = 2.0 * (double)(2 * nq + 2 * nk), .roof_rate = ceil_rate, .roof = "cublaslt_bf16_gemm"};
    bool fused_extras = s->rope || s->qknorm;
    if (fused_extras) {
        /* The standalone [RMSNorm +] RoPE kernels alone: bench/sdpa_cudnn_torch.py adds this to
         * cuDNN SDPA's time to form the (RoPE kernel + cuDNN SDPA) baseline. */
        char name[160];
        snprintf(name, sizeof(name), "%s [prep]", s->name);
        const int passes = (s->rope ? 1 : 0) + (s->qknorm ? 1 : 0); /* each reads and writes q and k, bf16 */
        bench_row prow = {.bench = "attention", .name = name, .device = "cuda",
                          .bytes = 2.0 * 2.0 * (double)(nq + nk) * passes};
        j.be = impl_be[0];
        j.st = LTX2_OK;
        j.unfused = j.prep_only = true;
        prow.st = bench_measure(o, run_att, &j, GPU_INNER);
        j.prep_only = false;
        if (j.st == LTX2_OK) {
            bench_report_row(r, &prow);
        } else {
            bench_report_note(r, "%s: %s", name, ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
        }
    }
    double wgmma_s = 0.0;
    const ltx2_backend *wgmma_be = NULL;
    for (int v = 0; v < n_impl; v++) {
        if (!strcmp(impl_names[v], "wgmma_in_kernel") && !(s->rope || s->qknorm || s->mask)) continue; /* same kernel */
        /* the unfused baseline runs the same kernel, so the ratio isolates the fusion */
        char name[160];
        snprintf(name, sizeof(name), "%s [%s]", s->name, impl_names[v]);
        row.name = name;
        row.baseline = NULL;
        row.baseline_s = 0.0;
        j.be = impl_be[v];
        j.st = LTX2_OK;
        if (fused_extras) {
            j.unfused = true;
            bench_stats bs = bench_measure(o, run_att, &j, GPU_INNER);
            if (j.st == LTX2_OK) {
                row.baseline = s->qknorm ? "rmsnorm+rope_kernel+ours_plain" : "rope_kernel+ours_plain";
                row.baseline_s = bs.median_s;
            } else {
                bench_report_note(r, "%s (unfused baseline): %s", name, ltx2_last_error(ctx));
                ltx2_clear_error(ctx);
                j.st = LTX2_OK;
            }
        }
        j.unfused = false;
        row.st = bench_measure(o, run_att, &j, GPU_INNER);
        if (j.st != LTX2_OK) {
            bench_report_note(r, "%s: %s", name, ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
        } else {
            bench_report_row(r, &row);
            if (!strcmp(impl_names[v], "wgmma")) wgmma_s = row.st.median_s, wgmma_be = impl_be[v];
        }
    }
    if (wgmma_be && s->d == 128 && !s->causal) {
        /* e4m3 attention (ltx2_attn_args.fp8) on the same kernel, its quantising pre-pass included;
         * the baseline is the bf16 [wgmma] row above */
        char name[160];
        snprintf(name, sizeof(name), "%s [wgmma_fp8]", s->name);
        row.name = name;
        row.baseline = "wgmma_bf16";
        row.baseline_s = wgmma_s;
        j.be = wgmma_be;
        j.st = LTX2_OK;
        j.a.fp8 = true;
        row.st = bench_measure(o, run_att, &j, GPU_INNER);
        j.a.fp8 = false;
        if (j.st != LTX2_OK) {
            bench_report_note(r, "%s: %s", name, ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
        } else {
            bench_report_row(r, &row);
        }
    }
done:
    for (int i = 0; i < 12; i++) be->free(be, bufs[i]);
    be->free(be, mask);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "attention (fused RoPE / QK-norm) TFLOP/s vs the unfused pipeline\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        bench_report_note(&r, "attention: skipped (%s); the CPU reference is not benchmarked", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        bench_report_close(&r);
        return 0;
    }
    double ceil_rate = bench_gemm_ceiling(&o, cuda, ctx, GPU_INNER);
    bench_report_note(&r, "cuda: bf16 cuBLASLt GEMM %d^3 runs at %.1f TFLOP/s (the roofline here)", BENCH_CEIL_GEMM_DIM,
                      ceil_rate * 1e-12);
    bench_report_note(&r, "baseline here is our own unfused pipeline (RoPE kernel [+ RMSNorm] + plain attention); "
                          "the cuDNN SDPA comparison is bench/sdpa_cudnn_torch.py over these rows");
    /* one backend per attention kernel; a caller's LTX2_ATTN_IMPL choice replaces the list */
    ltx2_backend *impl_be[N_ATTN_IMPLS] = {0};
    const char *impl_names[N_ATTN_IMPLS] = {0};
    int n_impl = 0;
    const char *chosen = getenv(ATTN_IMPL_ENV);
    if (chosen) {
        impl_be[0] = cuda;
        impl_names[0] = chosen;
        n_impl = 1;
    } else {
        for (int i = 0; i < N_ATTN_IMPLS; i++) {
            setenv(ATTN_IMPL_ENV, attn_impls[i].impl, 1);
            setenv(ATTN_PREP_ENV, attn_impls[i].prep, 1);
            if (ltx2_backend_cuda_create(ctx, 0, &impl_be[n_impl]) == LTX2_OK) {
                impl_names[n_impl++] = attn_impls[i].name;
            } else {
                bench_report_note(&r, "attention [%s]: not measured (%s)", attn_impls[i].name, ltx2_last_error(ctx));
                ltx2_clear_error(ctx);
            }
        }
        unsetenv(ATTN_IMPL_ENV);
        unsetenv(ATTN_PREP_ENV);
    }
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (!o.quick || shapes[i].quick)
            bench_shape(&o, &r, cuda, ctx, &shapes[i], ceil_rate, impl_be, impl_names, n_impl);
    if (!chosen)
        for (int i = 0; i < n_impl; i++) ltx2_backend_free(impl_be[i]);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
