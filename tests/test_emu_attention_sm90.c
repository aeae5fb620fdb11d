/* Runs the Hopper attention kernel (kernels/attention_sm90.cu: TMA loads into an mbarrier-guarded
 * K/V ring, one producer and two consumer warpgroups, wgmma for S = QK^T and O += PV) in the CPU
 * emulator (tests/emu/emu_sm90.c) through ltx2_k_attention with the wgmma implementation forced,
 * and compares it with the CPU backend's fp32 attention under the op harness's CUDA attention
 * tolerance. Shapes reach every path of the kernel: head dim 64 and 128; two query blocks with
 * a partial second one (Sq 130) and Sq 1; Skv 1, 100 (one partial key tile), 300 (three
 * tiles: the two-stage ring wraps and the barrier parities flip) and 520 (five: slots released
 * inside the main loop get refilled); a key mask with masked keys, an
 * all-masked batch and dead leading key tiles; split and interleaved RoPE with the QK RMSNorm
 * pre-pass. Also: the emulated device reports the wgmma path available, AUTO still takes the
 * mma.sync kernel (ATT_AUTO_PICKS_WGMMA is off), and the comparison can fail. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "emu_check.h"
#include "backend/backend.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* The op harness's CUDA attention tolerance (tests/test_ops.c, as tests/test_emu_attention.c):
 * absolute for the bf16 rounding of normalised/rotated q, k and of P, plus one bf16 ulp relative. */
#define ATTN_BF16_ATOL 4e-3
/* QK RMSNorm epsilon of the LTX-2 attention. */
#define QK_NORM_EPS 1e-6f
/* Norm weights 1 + this * N(0,1); RoPE angles this * N(0,1) radians (as the op harness). */
#define NORM_W_SPREAD 0.2f
#define ROPE_ANGLE_SCALE 2.0f
/* Philox seed of this test's inputs. */
#define SM90_SEED 0x5a90a77eULL
/* Sensitivity check: one output element moved by this must be flagged. */
#define SENSITIVITY_DELTA 0.05f

enum { MASK_NONE = 0, MASK_PAD, MASK_TAIL };

typedef struct sm90_case {
    const char *name;
    int64_t B, Sq, Skv, H, d;
    int rope; /* LTX2_KROPE_* */
    bool qknorm;
    int mask; /* MASK_*: see make_inputs */
} sm90_case;

typedef struct inputs {
    int64_t D, nq, nkv, ntq, ntk;
    float *q, *k, *v, *wq, *wk, *qc, *qs, *kc, *ks;
    uint8_t *mask;
} inputs;

/* 128 query rows per CTA (two consumer warpgroups), 128 keys per tile, a 2-stage ring. */
static const sm90_case k_cases[] = {
    {"d64 130x300 pad-mask (batch 1 all masked)", 2, 130, 300, 2, 64, LTX2_KROPE_NONE, false, MASK_PAD},
    {"d128 130x100 split+qknorm", 2, 130, 100, 2, 128, LTX2_KROPE_SPLIT, true, MASK_NONE},
    {"d128 1x300 interleaved+qknorm+tail-mask", 2, 1, 300, 2, 128, LTX2_KROPE_INTERLEAVED, true, MASK_TAIL},
    {"d64 1x1 interleaved+qknorm+pad-mask", 2, 1, 1, 2, 64, LTX2_KROPE_INTERLEAVED, true, MASK_PAD},
    {"d64 130x100 split", 2, 130, 100, 2, 64, LTX2_KROPE_SPLIT, false, MASK_NONE},
    {"d128 1x1 none", 2, 1, 1, 2, 128, LTX2_KROPE_NONE, false, MASK_NONE},
    /* 5 tiles: the slots are refilled after releases inside the main loop, not only the first */
    {"d64 1x520 split+pad-mask", 2, 1, 520, 2, 64, LTX2_KROPE_SPLIT, false, MASK_PAD},
};
/* The case the AUTO check reuses (small). */
#define AUTO_CASE 3

static float *angles_to_table(const float *ang, int64_t n, bool il, bool want_sin) {
    float *t = emu_xmalloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const float a = ang[il ? i & ~(int64_t)1 : i]; /* interleaved: a pair shares its angle */
        t[i] = want_sin ? sinf(a) : cosf(a);
    }
    return t;
}

static void make_inputs(const sm90_case *c, uint64_t stream0, inputs *a) {
    memset(a, 0, sizeof(*a));
    const int64_t B = c->B, D = c->H * c->d;
    a->D = D;
    a->nq = B * c->Sq * D;
    a->nkv = B * c->Skv * D;
    a->q = emu_normal_seeded(SM90_SEED, stream0 + 0, a->nq, 1.0f, 0.0f, true);
    a->k = emu_normal_seeded(SM90_SEED, stream0 + 1, a->nkv, 1.0f, 0.0f, true);
    a->v = emu_normal_seeded(SM90_SEED, stream0 + 2, a->nkv, 1.0f, 0.0f, true);
    if (c->qknorm) {
        a->wq = emu_normal_seeded(SM90_SEED, stream0 + 3, D, NORM_W_SPREAD, 1.0f, true);
        a->wk = emu_normal_seeded(SM90_SEED, stream0 + 4, D, NORM_W_SPREAD, 1.0f, true);
    }
    if (c->rope != LTX2_KROPE_NONE) {
        const bool il = c->rope == LTX2_KROPE_INTERLEAVED; /* split [B, H, S, d/2], interleaved [B, S, D] */
        a->ntq = il ? a->nq : a->nq / 2;
        a->ntk = il ? a->nkv : a->nkv / 2;
        float *aq = emu_normal_seeded(SM90_SEED, stream0 + 5, a->ntq, ROPE_ANGLE_SCALE, 0.0f, false);
        float *ak = emu_normal_seeded(SM90_SEED, stream0 + 6, a->ntk, ROPE_ANGLE_SCALE, 0.0f, false);
        a->qc = angles_to_table(aq, a->ntq, il, false), a->qs = angles_to_table(aq, a->ntq, il, true);
        a->kc = angles_to_table(ak, a->ntk, il, false), a->ks = angles_to_table(ak, a->ntk, il, true);
        free(aq), free(ak);
    }
    if (c->mask != MASK_NONE) {
        /* PAD: batch 0 a padding pattern, batch 1 every key masked (uniform average).
         * TAIL: batch 0 attends only the last quarter (leading key tiles dead), batch 1 padding. */
        a->mask = emu_xmalloc((size_t)(B * c->Skv));
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < c->Skv; j++) {
                const bool pad = j < (2 * c->Skv) / 3 || j % 5 == 0;
                const bool m = c->mask == MASK_PAD ? (b == 0 && pad) : (b == 0 ? j >= c->Skv - c->Skv / 4 : pad);
                a->mask[b * c->Skv + j] = m ? (uint8_t)(1 + j % 3) : 0; /* any nonzero attends */
            }
    }
}

static void free_inputs(inputs *a) {
    free(a->q), free(a->k), free(a->v), free(a->wq), free(a->wk);
    free(a->qc), free(a->qs), free(a->kc), free(a->ks), free(a->mask);
}

/* The CPU backend's fp32 attention on the same (bf16-valued) inputs. */
static bool reference(ltx2_context *ctx, const sm90_case *c, const inputs *a, float *out) {
    const int64_t B = c->B, D = a->D, hd = c->d / 2;
    const int64_t sq[3] = {B, c->Sq, D}, skv[3] = {B, c->Skv, D}, sm[2] = {B, c->Skv}, sw[1] = {D};
    ltx2_tensor tq = ltx2_tensor_make(a->q, LTX2_F32, 3, sq), tk = ltx2_tensor_make(a->k, LTX2_F32, 3, skv);
    ltx2_tensor tv = ltx2_tensor_make(a->v, LTX2_F32, 3, skv), to = ltx2_tensor_make(out, LTX2_F32, 3, sq);
    ltx2_tensor tm = ltx2_tensor_make(a->mask, LTX2_U8, 2, sm);
    ltx2_tensor twq = ltx2_tensor_make(a->wq, LTX2_F32, 1, sw), twk = ltx2_tensor_make(a->wk, LTX2_F32, 1, sw);
    const bool il = c->rope == LTX2_KROPE_INTERLEAVED, has_rope = c->rope != LTX2_KROPE_NONE;
    const int64_t stq[4] = {B, c->H, c->Sq, hd}, stk[4] = {B, c->H, c->Skv, hd};
    ltx2_tensor tqc = il ? ltx2_tensor_make(a->qc, LTX2_F32, 3, sq) : ltx2_tensor_make(a->qc, LTX2_F32, 4, stq);
    ltx2_tensor tqs = il ? ltx2_tensor_make(a->qs, LTX2_F32, 3, sq) : ltx2_tensor_make(a->qs, LTX2_F32, 4, stq);
    ltx2_tensor tkc = il ? ltx2_tensor_make(a->kc, LTX2_F32, 3, skv) : ltx2_tensor_make(a->kc, LTX2_F32, 4, stk);
    ltx2_tensor tks = il ? ltx2_tensor_make(a->ks, LTX2_F32, 3, skv) : ltx2_tensor_make(a->ks, LTX2_F32, 4, stk);
    ltx2_attn_args args = {
        .heads = c->H, .scale = 1.0f / sqrtf((float)c->d), .key_mask = a->mask ? &tm : NULL,
        .q_norm = a->wq ? &twq : NULL, .k_norm = a->wk ? &twk : NULL, .norm_eps = QK_NORM_EPS,
        .rope_type = il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
        .q_cos = has_rope ? &tqc : NULL, .q_sin = has_rope ? &tqs : NULL,
        .k_cos = has_rope ? &tkc : NULL, .k_sin = has_rope ? &tks : NULL,
    };
    const ltx2_status st = ltx2_backend_attention(ltx2_backend_cpu(), ctx, &tq, &tk, &tv, &args, &to);
    CHECK(st == LTX2_OK, "cpu attention %s: %s", c->name, ltx2_last_error(ctx));
    return st == LTX2_OK;
}

/* Uploads, launches with `impl` (args filled as src/backend/backend_cuda.c does), checks the
 * return code, the emulator's fault report and the guard bytes, downloads the output. */
static bool run_kernel(const sm90_case *c, const inputs *a, int impl, float *out, double *ms) {
    uint16_t *q = emu_alloc_stored(a->q, a->nq, true), *k = emu_alloc_stored(a->k, a->nkv, true);
    uint16_t *v = emu_alloc_stored(a->v, a->nkv, true), *o = emu_alloc((size_t)a->nq * 2);
    uint16_t *wq = a->wq ? emu_alloc_stored(a->wq, a->D, true) : NULL, *wk = a->wk ? emu_alloc_stored(a->wk, a->D, true) : NULL;
    float *qc = NULL, *qs = NULL, *kc = NULL, *ks = NULL;
    if (a->qc) {
        qc = emu_alloc_copy(a->qc, (size_t)a->ntq * 4), qs = emu_alloc_copy(a->qs, (size_t)a->ntq * 4);
        kc = emu_alloc_copy(a->kc, (size_t)a->ntk * 4), ks = emu_alloc_copy(a->ks, (size_t)a->ntk * 4);
    }
    uint8_t *mask = a->mask ? emu_alloc_copy(a->mask, (size_t)(c->B * c->Skv)) : NULL;
    ltx2_k_attn_args ka = {
        .q = q, .k = k, .v = v, .out = o, .B = c->B, .Sq = c->Sq, .Skv = c->Skv, .heads = c->H,
        .head_dim = c->d, .scale = 1.0f / sqrtf((float)c->d), .key_mask = mask, .q_norm = wq, .k_norm = wk,
        .norm_eps = QK_NORM_EPS, .rope = c->rope, .q_cos = qc, .q_sin = qs, .k_cos = kc, .k_sin = ks, .impl = impl,
    };
    ka.workspace_bytes = ltx2_k_attention_workspace(&ka);
    if (ka.workspace_bytes) ka.workspace = emu_alloc(ka.workspace_bytes);
    ltx2_emu_reset_fault();
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_attention(NULL, &ka);
    *ms = emu_now_ms() - t0;
    const bool ok = rc == 0 && ltx2_emu_last_fault() == NULL;
    EMU_CHECK_LAUNCH(rc, c->name);
    CHECK(emu_guard_damage(o, (size_t)a->nq * 2) == 0, "%s: write past the output", c->name);
    if (ka.workspace)
        CHECK(emu_guard_damage(ka.workspace, ka.workspace_bytes) == 0, "%s: write past the workspace", c->name);
    emu_load(out, o, a->nq, true);
    free(q), free(k), free(v), free(o), free(wq), free(wk), free(qc), free(qs), free(kc), free(ks), free(mask);
    free(ka.workspace);
    return ok;
}

static void test_cases(ltx2_context *ctx) {
    const int n = (int)(sizeof(k_cases) / sizeof(k_cases[0]));
    printf("attention (wgmma/TMA sm_90a kernel, emulated) vs the CPU backend (atol %g, rtol %g):\n", ATTN_BF16_ATOL,
           EPS_BF16);
    for (int ci = 0; ci < n; ci++) {
        const sm90_case *c = &k_cases[ci];
        inputs a;
        make_inputs(c, 16 * (uint64_t)ci, &a);
        float *ref = emu_xmalloc((size_t)a.nq * sizeof(float)), *out = emu_xmalloc((size_t)a.nq * sizeof(float));
        double ms = 0;
        if (reference(ctx, c, &a, ref) && run_kernel(c, &a, LTX2_KATTN_WGMMA, out, &ms)) {
            emu_report(c->name, emu_compare(out, ref, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, c->name, false), ms);
            if (ci == 0) /* the comparison can fail */
                emu_check_sensitive(c->name, out, ref, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, a.nq / 2, SENSITIVITY_DELTA);
            if (ci == AUTO_CASE) {
                /* AUTO takes the mma.sync kernel until a GPU run verifies this one: the same bits */
                float *o1 = emu_xmalloc((size_t)a.nq * sizeof(float)), *o2 = emu_xmalloc((size_t)a.nq * sizeof(float));
                double m1 = 0, m2 = 0;
                if (run_kernel(c, &a, LTX2_KATTN_MMA_SYNC, o1, &m1) && run_kernel(c, &a, LTX2_KATTN_AUTO, o2, &m2))
                    CHECK(memcmp(o1, o2, (size_t)a.nq * sizeof(float)) == 0, "AUTO output differs from MMA_SYNC");
                free(o1), free(o2);
            }
        }
        free(ref), free(out);
        free_inputs(&a);
    }
}

int main(void) {
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    ltx2_context *ctx = ltx2_context_create(&cp);
    if (!ctx) return test_skip("no context");
    const double t0 = emu_now_ms();
    CHECK(ltx2_k_attention_wgmma_available() == 1, "the emulated sm_90 device reports no wgmma path");
    test_cases(ctx);
    printf("total %.2f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
