/* Runs the portable mma.sync flash-attention kernel (kernels/attention.cu: the Q/K pre-pass for
 * the across-heads QK RMSNorm and RoPE, then att_fwd_kernel), the standalone RoPE kernel
 * (kernels/rope.cu) and the softmax kernel (kernels/softmax.cu) in the CPU CUDA emulator
 * (tests/emu/), and compares them with the CPU backend's fp32 reference ops under the op
 * harness's CUDA tolerances (tests/test_ops.c). Shapes are small but reach every path: head dim
 * 64 and 128, lengths that are not multiples of the 64-query / 64-key tiles, Sq = 1 and Skv = 1,
 * cross-attention lengths, padding masks with a fully masked batch and with dead key tiles, RoPE
 * none / split / interleaved, with and without QK RMSNorm. Also the launchers' refusals (an error,
 * nothing written, no fault) and two negative controls that show the comparison can fail.
 * The RoPE and softmax parts live in test_emu_attention.d/rope_softmax.c. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "emu_check.h"
#include "ltx2/tensor.h"
#include "test_emu_attention.d/emu_att.h"

/* Tolerances of the op harness for the CUDA attention (tests/test_ops.c, tol_for with input scale
 * 1): ATTN_BF16_ATOL absolute for the bf16 rounding of normalised/rotated q, k and of P, plus one
 * bf16 ulp (EPS_BF16) relative for the output rounding. */
#define ATTN_BF16_ATOL 4e-3
/* QK RMSNorm epsilon of the LTX-2 attention (as tests/test_ops.d/ops_case.h). */
#define QK_NORM_EPS 1e-6f
/* Norm weights are 1 + this * N(0,1), RoPE angles this * N(0,1) radians (as the op harness). */
#define NORM_W_SPREAD 0.2f
#define ROPE_ANGLE_SCALE 2.0f
/* Negative control: added to one value element on the kernel's side only. With <= 9 keys its
 * softmax weight is >= ~1/20, so the output moves by ~0.4, 100x the tolerance. */
#define PERTURB_V 8.0f

enum { MASK_NONE = 0, MASK_PAD, MASK_TAIL };

typedef struct attn_case {
    const char *name;
    int64_t B, Sq, Skv, H, d;
    int rope; /* LTX2_KROPE_* */
    bool qknorm;
    int mask; /* MASK_*: see attn_make */
} attn_case;

/* Host inputs, f32 holding bf16 values (so the CPU reference sees exactly what the kernel sees). */
typedef struct attn_data {
    int64_t D, nq, nkv, ntq, ntk;
    float *q, *k, *v, *wq, *wk, *qc, *qs, *kc, *ks;
    uint8_t *mask;
} attn_data;

static float *rope_angles_to_tables(const float *ang, int64_t n, bool il, bool want_sin) {
    float *t = emu_xmalloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        float a = ang[il ? i & ~(int64_t)1 : i]; /* interleaved: the pair shares its angle */
        t[i] = want_sin ? sinf(a) : cosf(a);
    }
    return t;
}

static void attn_make(const attn_case *c, uint64_t stream0, attn_data *a) {
    memset(a, 0, sizeof(*a));
    const int64_t B = c->B, D = c->H * c->d;
    a->D = D;
    a->nq = B * c->Sq * D;
    a->nkv = B * c->Skv * D;
    a->q = emu_normal_seeded(EMU_ATT_SEED, stream0 + 0, a->nq, 1.0f, 0.0f, true);
    a->k = emu_normal_seeded(EMU_ATT_SEED, stream0 + 1, a->nkv, 1.0f, 0.0f, true);
    a->v = emu_normal_seeded(EMU_ATT_SEED, stream0 + 2, a->nkv, 1.0f, 0.0f, true);
    if (c->qknorm) {
        a->wq = emu_normal_seeded(EMU_ATT_SEED, stream0 + 3, D, NORM_W_SPREAD, 1.0f, true);
        a->wk = emu_normal_seeded(EMU_ATT_SEED, stream0 + 4, D, NORM_W_SPREAD, 1.0f, true);
    }
    if (c->rope != LTX2_KROPE_NONE) {
        /* split [B, H, S, d/2], interleaved [B, S, D] */
        const bool il = c->rope == LTX2_KROPE_INTERLEAVED;
        a->ntq = il ? a->nq : a->nq / 2;
        a->ntk = il ? a->nkv : a->nkv / 2;
        float *aq = emu_normal_seeded(EMU_ATT_SEED, stream0 + 5, a->ntq, ROPE_ANGLE_SCALE, 0.0f, false);
        float *ak = emu_normal_seeded(EMU_ATT_SEED, stream0 + 6, a->ntk, ROPE_ANGLE_SCALE, 0.0f, false);
        a->qc = rope_angles_to_tables(aq, a->ntq, il, false);
        a->qs = rope_angles_to_tables(aq, a->ntq, il, true);
        a->kc = rope_angles_to_tables(ak, a->ntk, il, false);
        a->ks = rope_angles_to_tables(ak, a->ntk, il, true);
        free(aq);
        free(ak);
    }
    if (c->mask != MASK_NONE) {
        /* PAD: batch 0 a text padding pattern, batch 1 every key masked (uniform average).
         * TAIL: batch 0 attends only the last quarter (whole leading key tiles are dead),
         * batch 1 the padding pattern. */
        a->mask = emu_xmalloc((size_t)(B * c->Skv));
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < c->Skv; j++) {
                const bool pad = j < (2 * c->Skv) / 3 || j % 5 == 0;
                uint8_t m = c->mask == MASK_PAD ? (b == 0 ? pad : 0) : (b == 0 ? j >= c->Skv - c->Skv / 4 : pad);
                a->mask[b * c->Skv + j] = m ? (uint8_t)(1 + j % 3) : 0; /* any nonzero attends */
            }
    }
}

static void attn_free(attn_data *a) {
    free(a->q), free(a->k), free(a->v), free(a->wq), free(a->wk);
    free(a->qc), free(a->qs), free(a->kc), free(a->ks), free(a->mask);
}

/* The CPU backend's attention (fp32) on the same values, with RoPE mode `rope` and the given
 * tables (the negative control passes a flipped mode). */
static bool attn_reference(ltx2_context *ctx, const attn_case *c, const attn_data *a, int rope, float *qc,
                           float *qs, float *kc, float *ks, float *out) {
    const int64_t B = c->B, D = a->D, hd = c->d / 2;
    const int64_t sq[3] = {B, c->Sq, D}, skv[3] = {B, c->Skv, D}, sm[2] = {B, c->Skv}, sw[1] = {D};
    ltx2_tensor tq = ltx2_tensor_make(a->q, LTX2_F32, 3, sq), tk = ltx2_tensor_make(a->k, LTX2_F32, 3, skv);
    ltx2_tensor tv = ltx2_tensor_make(a->v, LTX2_F32, 3, skv), to = ltx2_tensor_make(out, LTX2_F32, 3, sq);
    ltx2_tensor tm = ltx2_tensor_make(a->mask, LTX2_U8, 2, sm);
    ltx2_tensor twq = ltx2_tensor_make(a->wq, LTX2_F32, 1, sw), twk = ltx2_tensor_make(a->wk, LTX2_F32, 1, sw);
    const bool il = rope == LTX2_KROPE_INTERLEAVED;
    const int64_t stq[4] = {B, c->H, c->Sq, hd}, stk[4] = {B, c->H, c->Skv, hd};
    ltx2_tensor tqc = il ? ltx2_tensor_make(qc, LTX2_F32, 3, sq) : ltx2_tensor_make(qc, LTX2_F32, 4, stq);
    ltx2_tensor tqs = il ? ltx2_tensor_make(qs, LTX2_F32, 3, sq) : ltx2_tensor_make(qs, LTX2_F32, 4, stq);
    ltx2_tensor tkc = il ? ltx2_tensor_make(kc, LTX2_F32, 3, skv) : ltx2_tensor_make(kc, LTX2_F32, 4, stk);
    ltx2_tensor tks = il ? ltx2_tensor_make(ks, LTX2_F32, 3, skv) : ltx2_tensor_make(ks, LTX2_F32, 4, stk);
    const bool has_rope = rope != LTX2_KROPE_NONE;
    ltx2_attn_args args = {
        .heads = c->H, .scale = 1.0f / sqrtf((float)c->d), .key_mask = a->mask ? &tm : NULL,
        .q_norm = a->wq ? &twq : NULL, .k_norm = a->wk ? &twk : NULL, .norm_eps = QK_NORM_EPS,
        .rope_type = il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
        .q_cos = has_rope ? &tqc : NULL, .q_sin = has_rope ? &tqs : NULL,
        .k_cos = has_rope ? &tkc : NULL, .k_sin = has_rope ? &tks : NULL,
    };
    ltx2_status st = ltx2_backend_attention(ltx2_backend_cpu(), ctx, &tq, &tk, &tv, &args, &to);
    CHECK(st == LTX2_OK, "cpu attention %s: %s", c->name, ltx2_last_error(ctx));
    return st == LTX2_OK;
}

/* Device copies of one case's inputs, kernel args filled like cuda_attention
 * (src/backend/backend_cuda.c) does, workspace sized by ltx2_k_attention_workspace. */
typedef struct attn_dev {
    uint16_t *q, *k, *v, *out, *wq, *wk;
    float *qc, *qs, *kc, *ks;
    uint8_t *mask;
    ltx2_k_attn_args ka;
} attn_dev;

static void attn_upload(const attn_case *c, const attn_data *a, int impl, attn_dev *d) {
    memset(d, 0, sizeof(*d));
    d->q = emu_alloc_stored(a->q, a->nq, true);
    d->k = emu_alloc_stored(a->k, a->nkv, true);
    d->v = emu_alloc_stored(a->v, a->nkv, true);
    d->out = emu_alloc((size_t)a->nq * 2);
    if (a->wq) d->wq = emu_alloc_stored(a->wq, a->D, true), d->wk = emu_alloc_stored(a->wk, a->D, true);
    if (a->qc) {
        d->qc = emu_alloc_copy(a->qc, (size_t)a->ntq * 4), d->qs = emu_alloc_copy(a->qs, (size_t)a->ntq * 4);
        d->kc = emu_alloc_copy(a->kc, (size_t)a->ntk * 4), d->ks = emu_alloc_copy(a->ks, (size_t)a->ntk * 4);
    }
    if (a->mask) d->mask = emu_alloc_copy(a->mask, (size_t)(c->B * c->Skv));
    d->ka = (ltx2_k_attn_args){
        .q = d->q, .k = d->k, .v = d->v, .out = d->out, .B = c->B, .Sq = c->Sq, .Skv = c->Skv, .heads = c->H,
        .head_dim = c->d, .scale = 1.0f / sqrtf((float)c->d), .key_mask = d->mask, .q_norm = d->wq,
        .k_norm = d->wk, .norm_eps = QK_NORM_EPS, .rope = c->rope, .q_cos = d->qc, .q_sin = d->qs,
        .k_cos = d->kc, .k_sin = d->ks, .impl = impl,
    };
    d->ka.workspace_bytes = ltx2_k_attention_workspace(&d->ka);
    if (d->ka.workspace_bytes) d->ka.workspace = emu_alloc(d->ka.workspace_bytes);
}

static void attn_dev_free(attn_dev *d) {
    free(d->q), free(d->k), free(d->v), free(d->out), free(d->wq), free(d->wk);
    free(d->qc), free(d->qs), free(d->kc), free(d->ks), free(d->mask), free(d->ka.workspace);
}

/* Uploads, launches, checks rc / fault / guard bytes, and downloads the output as f32. */
static bool attn_run(const attn_case *c, const attn_data *a, int impl, float *out, double *ms) {
    attn_dev d;
    attn_upload(c, a, impl, &d);
    ltx2_emu_reset_fault();
    const double t0 = emu_now_ms();
    int rc = ltx2_k_attention(NULL, &d.ka);
    *ms = emu_now_ms() - t0;
    const bool ok = rc == 0 && ltx2_emu_last_fault() == NULL;
    EMU_CHECK_LAUNCH(rc, c->name);
    CHECK(emu_guard_damage(d.out, (size_t)a->nq * 2) == 0, "%s: write past the output", c->name);
    if (d.ka.workspace)
        CHECK(emu_guard_damage(d.ka.workspace, d.ka.workspace_bytes) == 0, "%s: write past the workspace", c->name);
    emu_load(out, d.out, a->nq, true);
    attn_dev_free(&d);
    return ok;
}

/* Every case forces the mma.sync kernel (LTX2_ATTN_IMPL=mma_sync in the backend). Tiles: 64 query
 * rows per CTA, 64 keys per K/V stage. Emulating one CTA over one key tile costs ~0.1 s, so only
 * two cases pay for a second query block (Sq 70) and one for a third key tile (Skv 130). */
static const attn_case k_cases[] = {
    {"d64 H2 70x77 pad-mask", 2, 70, 77, 2, 64, LTX2_KROPE_NONE, false, MASK_PAD},
    {"d128 H2 70x77 split+qknorm", 2, 70, 77, 2, 128, LTX2_KROPE_SPLIT, true, MASK_NONE},
    {"d64 H3 40x77 interleaved+qknorm+pad-mask", 2, 40, 77, 3, 64, LTX2_KROPE_INTERLEAVED, true, MASK_PAD},
    {"d128 H2 33x40 interleaved", 2, 33, 40, 2, 128, LTX2_KROPE_INTERLEAVED, false, MASK_NONE},
    {"d64 H2 cross 17x130 split+tail-mask", 2, 17, 130, 2, 64, LTX2_KROPE_SPLIT, false, MASK_TAIL},
    {"d128 H2 cross 20x77 qknorm+pad-mask", 2, 20, 77, 2, 128, LTX2_KROPE_NONE, true, MASK_PAD},
    {"d64 H2 1x1 split+qknorm+pad-mask", 2, 1, 1, 2, 64, LTX2_KROPE_SPLIT, true, MASK_PAD},
    {"d64 H2 1x77 interleaved", 2, 1, 77, 2, 64, LTX2_KROPE_INTERLEAVED, false, MASK_NONE},
    {"d128 H2 70x1 split", 2, 70, 1, 2, 128, LTX2_KROPE_SPLIT, false, MASK_NONE},
};
/* The case the flipped-RoPE negative control and the AUTO-impl check reuse. */
#define FLIP_CASE 2
#define AUTO_CASE 6

/* Split tables [B, H, S, d/2] holding the interleaved tables' pair angles: the same angles
 * applied to the other pairing (the flipped-mode reference). */
static float *il_to_split(const float *t, int64_t B, int64_t S, int64_t H, int64_t d) {
    float *o = emu_xmalloc((size_t)(B * S * H * d / 2) * sizeof(float));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t s = 0; s < S; s++)
                for (int64_t i = 0; i < d / 2; i++)
                    o[((b * H + h) * S + s) * (d / 2) + i] = t[(b * S + s) * H * d + h * d + 2 * i];
    return o;
}

static void test_attention_cases(ltx2_context *ctx) {
    const int n = (int)(sizeof(k_cases) / sizeof(k_cases[0]));
    /* max_ulp counts bf16 ulps from the correctly rounded value: large for outputs near 0, where
     * the tolerance that matters is ATTN_BF16_ATOL. */
    printf("attention (mma.sync, bf16, emulated) vs the CPU backend (atol %g):\n", ATTN_BF16_ATOL);
    for (int ci = 0; ci < n; ci++) {
        const attn_case *c = &k_cases[ci];
        attn_data a;
        attn_make(c, 100 + 16 * (uint64_t)ci, &a);
        float *ref = emu_xmalloc((size_t)a.nq * sizeof(float)), *out = emu_xmalloc((size_t)a.nq * sizeof(float));
        double ms = 0;
        if (attn_reference(ctx, c, &a, c->rope, a.qc, a.qs, a.kc, a.ks, ref) &&
            attn_run(c, &a, LTX2_KATTN_MMA_SYNC, out, &ms)) {
            emu_report(c->name, emu_compare(out, ref, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, c->name, false), ms);

            if (ci == FLIP_CASE) {
                /* negative control: the reference with split instead of interleaved RoPE must fail */
                float *fqc = il_to_split(a.qc, c->B, c->Sq, c->H, c->d);
                float *fqs = il_to_split(a.qs, c->B, c->Sq, c->H, c->d);
                float *fkc = il_to_split(a.kc, c->B, c->Skv, c->H, c->d);
                float *fks = il_to_split(a.ks, c->B, c->Skv, c->H, c->d);
                float *wrong = emu_xmalloc((size_t)a.nq * sizeof(float));
                if (attn_reference(ctx, c, &a, LTX2_KROPE_SPLIT, fqc, fqs, fkc, fks, wrong)) {
                    emu_stats w = emu_compare(out, wrong, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, c->name, true);
                    CHECK(w.n_bad > 0, "negative control: kernel output matched a split-RoPE reference");
                    printf("  negative control (reference with split RoPE): %lld/%lld bad, max|err| %.3g, cos %.6f\n",
                           (long long)w.n_bad, (long long)a.nq, w.max_abs, w.cosine);
                }
                free(fqc), free(fqs), free(fkc), free(fks), free(wrong);
            }
            if (ci == AUTO_CASE) {
                /* AUTO takes the mma.sync kernel until the wgmma one is verified: same bits */
                float *out2 = emu_xmalloc((size_t)a.nq * sizeof(float));
                double ms2 = 0;
                if (attn_run(c, &a, LTX2_KATTN_AUTO, out2, &ms2))
                    CHECK(memcmp(out, out2, (size_t)a.nq * sizeof(float)) == 0, "AUTO output differs from MMA_SYNC");
                free(out2);
            }
        }
        free(ref), free(out);
        attn_free(&a);
    }
}

/* Negative control: one value element changed on the kernel's side only must be caught. */
static void test_perturbed_input(ltx2_context *ctx) {
    const attn_case c = {"perturbed v", 1, 5, 9, 1, 64, LTX2_KROPE_NONE, false, MASK_NONE};
    attn_data a;
    attn_make(&c, 900, &a);
    float *ref = emu_xmalloc((size_t)a.nq * sizeof(float)), *out = emu_xmalloc((size_t)a.nq * sizeof(float));
    double ms = 0;
    if (attn_reference(ctx, &c, &a, c.rope, NULL, NULL, NULL, NULL, ref)) {
        a.v[3 * a.D + 7] += PERTURB_V; /* key 3, column 7 */
        if (attn_run(&c, &a, LTX2_KATTN_MMA_SYNC, out, &ms)) {
            emu_stats w = emu_compare(out, ref, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, c.name, true);
            CHECK(w.n_bad > 0, "negative control: a perturbed value went unnoticed");
            printf("  negative control (v[key 3][7] += %g on the kernel side): %lld/%lld bad, max|err| %.3g\n",
                   (double)PERTURB_V, (long long)w.n_bad, (long long)a.nq, w.max_abs);
        }
    }
    free(ref), free(out);
    attn_free(&a);
}

/* One refused launch: the error code, nothing written to out or the workspace, no fault. */
static void expect_refused(const char *what, const ltx2_k_attn_args *a, int want_rc, const attn_dev *d,
                           size_t out_bytes) {
    emu_refill(d->out, out_bytes);
    if (d->ka.workspace) emu_refill(d->ka.workspace, d->ka.workspace_bytes);
    ltx2_emu_reset_fault();
    int rc = ltx2_k_attention(NULL, a);
    CHECK(rc == want_rc, "refusal '%s': rc %d, expected %d", what, rc, want_rc);
    CHECK(emu_untouched(d->out, out_bytes), "refusal '%s': output written", what);
    if (d->ka.workspace)
        CHECK(emu_untouched(d->ka.workspace, d->ka.workspace_bytes), "refusal '%s': workspace written", what);
    CHECK(ltx2_emu_last_fault() == NULL, "refusal '%s': fault %s", what, ltx2_emu_last_fault());
}

static void test_refusals(void) {
    /* buffers sized for head_dim 128 so a wrongly accepted head_dim still stays in bounds */
    const attn_case c = {"refusals", 1, 5, 9, 1, 128, LTX2_KROPE_SPLIT, true, MASK_NONE};
    attn_data a;
    attn_make(&c, 950, &a);
    attn_dev d;
    attn_upload(&c, &a, LTX2_KATTN_MMA_SYNC, &d);
    const size_t ob = (size_t)a.nq * 2;
    const ltx2_k_attn_args ok = d.ka;
    CHECK(ok.workspace_bytes >= (size_t)(a.nkv * 2 + c.B * c.Sq * 4), "workspace %zu too small", ok.workspace_bytes);
    ltx2_k_attn_args x;
    char *cq = (char *)d.q, *co = (char *)d.out;

    expect_refused("args NULL", NULL, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.q = NULL, expect_refused("q NULL", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.head_dim = 96, expect_refused("head_dim 96", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.head_dim = 32, x.heads = 4, expect_refused("head_dim 32", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.Skv = 0, expect_refused("Skv 0", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.heads = 0, expect_refused("heads 0", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.B = -1, expect_refused("B -1", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.q = cq + 8, expect_refused("q misaligned", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.out = co + 2, expect_refused("out misaligned", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.k = (const char *)d.k + 4, expect_refused("k misaligned", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.v = (const char *)d.v + 8, expect_refused("v misaligned", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.k_norm = NULL, expect_refused("q_norm without k_norm", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.rope = 3, expect_refused("rope 3", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.rope = -1, expect_refused("rope -1", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.k_sin = NULL, expect_refused("rope without k_sin", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.impl = 3, expect_refused("impl 3", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.workspace = NULL, expect_refused("workspace NULL", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.workspace_bytes--, expect_refused("workspace 1 byte short", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.workspace = (char *)ok.workspace + 128, x.workspace_bytes -= 128;
    expect_refused("workspace not 256-aligned", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    /* the emulated device is sm_90 (attention_sm90.cu runs: test_emu_attention_sm90.c); a forced
     * wgmma launch it cannot take (scale <= 0) is refused before anything runs */
    CHECK(ltx2_k_attention_wgmma_available() == 1, "the emulated sm_90 device reports no wgmma path");
    x = ok, x.impl = LTX2_KATTN_WGMMA, x.scale = -1.0f;
    expect_refused("impl WGMMA with scale < 0", &x, EMU_ERR_NOT_SUPPORTED, &d, ob);
    /* nothing to do is success without a launch */
    x = ok, x.Sq = 0, expect_refused("Sq 0 (no-op)", &x, 0, &d, ob);
    x = ok, x.B = 0, expect_refused("B 0 (no-op)", &x, 0, &d, ob);
    /* without norm and RoPE no workspace is needed */
    x = ok, x.q_norm = x.k_norm = NULL, x.rope = LTX2_KROPE_NONE;
    CHECK(ltx2_k_attention_workspace(&x) == 0, "workspace without norm/RoPE: %zu", ltx2_k_attention_workspace(&x));
    attn_dev_free(&d);
    attn_free(&a);
    printf("  attention launcher refusals checked\n");
}

int main(void) {
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    ltx2_context *ctx = ltx2_context_create(&cp);
    if (!ctx) return test_skip("no context");
    const double t0 = emu_now_ms();
    test_refusals();
    test_attention_cases(ctx);
    test_perturbed_input(ctx);
    emu_counts rs = test_emu_rope_softmax(ctx);
    test_counts_g.passed += rs.passed;
    test_counts_g.failed += rs.failed;
    printf("total %.2f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
