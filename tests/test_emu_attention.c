/* Runs the portable mma.sync flash-attention kernel (kernels/attention.cu: the Q/K pre-pass for
 * the across-heads QK RMSNorm and RoPE, then att_fwd_kernel), the standalone RoPE kernel
 * (kernels/rope.cu) and the softmax kernel (kernels/softmax.cu) in the CPU CUDA emulator
 * (tests/emu/), and compares them with the CPU backend's fp32 reference ops under the op
 * harness's CUDA tolerances (tests/test_ops.c). Shapes are small but reach every path: head dim
 * 64 and 128, lengths that are not multiples of the 64-query / 64-key tiles, Sq = 1 and Skv = 1,
 * cross-attention lengths, padding masks with a fully masked batch and with dead key tiles, RoPE
 * none / split / interleaved, with and without QK RMSNorm; Gemma-3's grouped-query, causal and
 * sliding-window masks at head dims 64, 128 and 256 (key tiles skipped), and on the per-row kernel. Also the launchers' refusals (an error,
 * nothing written, no fault) and two negative controls that show the comparison can fail.
 * The RoPE and softmax parts live in test_emu_attention.d/rope_softmax.c. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "emu_check.h"
#include "emu_attention.h"
#include "test_emu_attention.d/emu_att.h"

/* Negative control: added to one value element on the kernel's side only. With <= 9 keys its
 * softmax weight is >= ~1/20, so the output moves by ~0.4, 100x the tolerance. */
#define PERTURB_V 8.0f

/* Every case forces the mma.sync kernel (LTX2_ATTN_IMPL=mma_sync in the backend). Tiles: 64 query
 * rows per CTA, 64 keys per K/V stage. Emulating one CTA over one key tile costs ~0.1 s, so only
 * two cases pay for a second query block (Sq 70) and one for a third key tile (Skv 130). */
static const attn_case k_cases[] = {
    {"d64 H2 70x77 pad-mask", 2, 70, 77, 2, 64, LTX2_KROPE_NONE, false, MASK_PAD, 0, false, 0, false, false},
    {"d128 H2 70x77 split+qknorm", 2, 70, 77, 2, 128, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, false},
    {"d64 H3 40x77 interleaved+qknorm+pad-mask", 2, 40, 77, 3, 64, LTX2_KROPE_INTERLEAVED, true, MASK_PAD, 0, false, 0, false, false},
    {"d128 H2 33x40 interleaved", 2, 33, 40, 2, 128, LTX2_KROPE_INTERLEAVED, false, MASK_NONE, 0, false, 0, false, false},
    {"d64 H2 cross 17x130 split+tail-mask", 2, 17, 130, 2, 64, LTX2_KROPE_SPLIT, false, MASK_TAIL, 0, false, 0, false, false},
    {"d128 H2 cross 20x77 qknorm+pad-mask", 2, 20, 77, 2, 128, LTX2_KROPE_NONE, true, MASK_PAD, 0, false, 0, false, false},
    {"d64 H2 1x1 split+qknorm+pad-mask", 2, 1, 1, 2, 64, LTX2_KROPE_SPLIT, true, MASK_PAD, 0, false, 0, false, false},
    {"d64 H2 1x77 interleaved", 2, 1, 77, 2, 64, LTX2_KROPE_INTERLEAVED, false, MASK_NONE, 0, false, 0, false, false},
    {"d128 H2 70x1 split", 2, 70, 1, 2, 128, LTX2_KROPE_SPLIT, false, MASK_NONE, 0, false, 0, false, false},
    /* head dims the tensor-core kernels do not take: the per-row kernel (attention_small.cu) */
    {"d16 H4 18x18 split+qknorm (per-row)", 2, 18, 18, 4, 16, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, false},
    {"d8 H4 10x16 qknorm+pad-mask (per-row)", 2, 10, 16, 4, 8, LTX2_KROPE_NONE, true, MASK_PAD, 0, false, 0, false, false},
    {"d40 H2 33x21 interleaved (per-row)", 1, 33, 21, 2, 40, LTX2_KROPE_INTERLEAVED, false, MASK_NONE, 0, false, 0, false, false},
    /* d/2 = 20 is no multiple of 8: the pre-pass's one-element split path */
    {"d40 H2 21x19 split+qknorm (per-row)", 2, 21, 19, 2, 40, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, false},
    /* Gemma-3's masks: grouped-query heads, causal over left padding (padded queries see no key:
     * 0), a sliding window that bites; d 16 on the per-row kernel, d 64 / 256 on mma.sync */
    {"d16 H4/kv2 20x20 causal+left-pad, empty rows 0 (Gemma)", 2, 20, 20, 4, 16, LTX2_KROPE_NONE, false, MASK_LEFT,
     2, true, 0, true, false},
    {"d64 H4/kv1 24x24 causal+window 5+left-pad (Gemma local)", 2, 24, 24, 4, 64, LTX2_KROPE_NONE, false, MASK_LEFT,
     1, true, 5, true, false},
    {"d256 H2/kv1 9x9 causal (Gemma-3 12B head dim)", 1, 9, 9, 2, 256, LTX2_KROPE_NONE, false, MASK_NONE, 1, true, 0,
     true, false},
    {"d16 H2 12x12 causal+left-pad, empty rows averaged", 2, 12, 12, 2, 16, LTX2_KROPE_NONE, false, MASK_LEFT, 0, true,
     0, false, false},
    /* Gemma's masks on the mma.sync kernel's tiles: three query blocks, so causal ends the last
     * block's key loop early and the window starts the third block's at its second key tile;
     * d 256 with its 32-key tiles over two query blocks; grouped heads with a padded batch and no
     * causal mask (its all-masked batch averaged); causal rows averaged when empty (per-row) */
    {"d64 H4/kv2 150x150 causal+window 40+left-pad (tiles skipped)", 1, 150, 150, 4, 64, LTX2_KROPE_NONE, false,
     MASK_LEFT, 2, true, 40, true, false},
    {"d256 H2/kv1 70x70 causal+left-pad (32-key tiles)", 2, 70, 70, 2, 256, LTX2_KROPE_NONE, false, MASK_LEFT, 1, true,
     0, true, false},
    {"d128 H4/kv2 33x77 grouped, pad-mask", 2, 33, 77, 4, 128, LTX2_KROPE_NONE, false, MASK_PAD, 2, false, 0, false, false},
    {"d64 H2 20x20 causal+left-pad, empty rows averaged (per-row)", 2, 20, 20, 2, 64, LTX2_KROPE_NONE, false,
     MASK_LEFT, 0, true, 0, false, false},
};
/* The case the flipped-RoPE negative control reuses. */
#define FLIP_CASE 2

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

/* After a case's comparison: the flipped-RoPE negative control on FLIP_CASE; on every case, the
 * kernel AUTO picks, and on the mma.sync ones (whose output is the kernel's here) AUTO's bits. */
static void case_extra(ltx2_context *ctx, int ci, const attn_case *c, const attn_data *a, const float *out,
                       const float *ref) {
    (void)ref;
    if (ci == FLIP_CASE) {
        /* negative control: the reference with split instead of interleaved RoPE must fail */
        float *fqc = il_to_split(a->qc, c->B, c->Sq, c->H, c->d);
        float *fqs = il_to_split(a->qs, c->B, c->Sq, c->H, c->d);
        float *fkc = il_to_split(a->kc, c->B, c->Skv, c->H, c->d);
        float *fks = il_to_split(a->ks, c->B, c->Skv, c->H, c->d);
        float *wrong = emu_xmalloc((size_t)a->nq * sizeof(float));
        if (attn_reference(ctx, c, a, LTX2_KROPE_SPLIT, fqc, fqs, fkc, fks, wrong)) {
            emu_stats w = emu_compare(out, wrong, a->nq, ATTN_BF16_ATOL, EPS_BF16, true, c->name, true);
            CHECK(w.n_bad > 0, "negative control: kernel output matched a split-RoPE reference");
            printf("  negative control (reference with split RoPE): %lld/%lld bad, max|err| %.3g, cos %.6f\n",
                   (long long)w.n_bad, (long long)a->nq, w.max_abs, w.cosine);
        }
        free(fqc), free(fqs), free(fkc), free(fks), free(wrong);
    }
    /* AUTO on the wgmma cases would emulate that kernel too: test_emu_attention_sm90 does that */
    if (attn_auto_expected(c) == LTX2_KATTN_MMA_SYNC)
        attn_check_auto(c, a, out); /* out is the mma.sync kernel's */
    else
        attn_check_pick(c, a);
}

static void test_attention_cases(ltx2_context *ctx) {
    /* max_ulp counts bf16 ulps from the correctly rounded value: large for outputs near 0, where
     * the tolerance that matters is ATTN_BF16_ATOL. */
    printf("attention (mma.sync, bf16, emulated) vs the CPU backend (atol %g):\n", ATTN_BF16_ATOL);
    attn_run_cases(ctx, k_cases, (int)(sizeof(k_cases) / sizeof(k_cases[0])), LTX2_KATTN_MMA_SYNC, EMU_ATT_SEED,
                   100, case_extra);
}

/* Negative control: one value element changed on the kernel's side only must be caught. */
static void test_perturbed_input(ltx2_context *ctx) {
    const attn_case c = {"perturbed v", 1, 5, 9, 1, 64, LTX2_KROPE_NONE, false, MASK_NONE, 0, false, 0, false, false};
    attn_data a;
    attn_make(&c, EMU_ATT_SEED, 900, &a);
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
    const attn_case c = {"refusals", 1, 5, 9, 1, 128, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, false};
    attn_data a;
    attn_make(&c, EMU_ATT_SEED, 950, &a);
    attn_dev d;
    attn_upload(&c, &a, LTX2_KATTN_MMA_SYNC, LTX2_KATTN_PREP_AUTO, &d);
    const size_t ob = (size_t)a.nq * 2;
    const ltx2_k_attn_args ok = d.ka;
    CHECK(ok.workspace_bytes >= (size_t)(a.nkv * 2 + c.B * c.Sq * 4), "workspace %zu too small", ok.workspace_bytes);
    ltx2_k_attn_args x;
    char *cq = (char *)d.q, *co = (char *)d.out;

    expect_refused("args NULL", NULL, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.q = NULL, expect_refused("q NULL", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.head_dim = 0, expect_refused("head_dim 0", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.head_dim = LTX2_KATTN_MAX_HEAD_DIM + 2;
    expect_refused("head_dim over the limit", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    /* Gemma's masks: kv heads must divide heads, causal/window need Sq == Skv (5 != 9 here), no
     * window < 0, and none of them with the QK norm / RoPE prologue (this case has both) */
    x = ok, x.kv_heads = 2, expect_refused("kv_heads 2 of 1 head", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.kv_heads = -1, expect_refused("kv_heads -1", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.causal = 1, x.q_norm = x.k_norm = NULL, x.rope = LTX2_KROPE_NONE;
    expect_refused("causal with Sq != Skv", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.window = -1, expect_refused("window -1", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.empty_zero = 1, expect_refused("Gemma masks with QK norm + RoPE", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    x = ok, x.head_dim = 63, x.heads = 2, expect_refused("odd head_dim", &x, EMU_ERR_INVALID_VALUE, &d, ob);
    /* head dims other than 64 / 128 take the per-row kernel, which the wgmma path cannot replace */
    x = ok, x.head_dim = 32, x.heads = 4, x.impl = LTX2_KATTN_WGMMA;
    expect_refused("impl WGMMA with head_dim 32", &x, EMU_ERR_NOT_SUPPORTED, &d, ob);
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
