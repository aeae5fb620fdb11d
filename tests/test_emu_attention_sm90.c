/* Runs the Hopper attention kernel (kernels/attention_sm90.cu: TMA loads into an mbarrier-guarded
 * K/V ring, one producer and two consumer warpgroups, wgmma for S = QK^T and O += PV) in the CPU
 * emulator (tests/emu/emu_sm90.c) through ltx2_k_attention with the wgmma implementation forced,
 * and compares it with the CPU backend's fp32 attention under the op harness's CUDA attention
 * tolerance. Shapes reach every path of the kernel: head dim 64, 128 and 256; two query blocks with
 * a partial second one (Sq 130) and Sq 1; Skv 1, 100 (one partial key tile), 300 (three
 * tiles: the two-stage ring wraps and the barrier parities flip) and 520 (five: slots released
 * inside the main loop get refilled); a key mask with masked keys, an
 * all-masked batch and dead leading key tiles; split and interleaved RoPE with the QK RMSNorm
 * pre-pass; Gemma-3's launches: head dim 256 (64-key tiles), grouped-query heads, causal and
 * sliding-window masks whose CTAs load only the tiles they see (a window's CTA starting past tile
 * 0), left padding whose rows see no key, empty rows zeroed. Also: the emulated device reports
 * the wgmma path available, AUTO takes this kernel (ATT_AUTO_PICKS_WGMMA is on) with the same
 * bits, and the comparison can fail. The e4m3 variant (ltx2_attn_args.fp8) against its CPU
 * reference ltx2_cpu_attention_fp8: QK norm + split RoPE through the pre-pass, partial key tiles,
 * masked keys with an all-masked batch, grouped heads over 5 tiles; and its distance from fp32
 * attention, which the scheme itself costs. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "emu_check.h"
#include "emu_attention.h"

/* Philox seed of this test's inputs. */
#define SM90_SEED 0x5a90a77eULL
/* Sensitivity check: one output element moved by this must be flagged. */
#define SENSITIVITY_DELTA 0.05f

/* 128 query rows per CTA (two consumer warpgroups), 128 keys per tile, a 2-stage ring. */
static const attn_case k_cases[] = {
    {"d64 130x300 pad-mask (batch 1 all masked)", 2, 130, 300, 2, 64, LTX2_KROPE_NONE, false, MASK_PAD, 0, false, 0, false, false},
    {"d128 130x100 split+qknorm", 2, 130, 100, 2, 128, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, false},
    {"d128 1x300 interleaved+qknorm+tail-mask", 2, 1, 300, 2, 128, LTX2_KROPE_INTERLEAVED, true, MASK_TAIL, 0, false, 0, false, false},
    {"d64 1x1 interleaved+qknorm+pad-mask", 2, 1, 1, 2, 64, LTX2_KROPE_INTERLEAVED, true, MASK_PAD, 0, false, 0, false, false},
    {"d64 130x100 split", 2, 130, 100, 2, 64, LTX2_KROPE_SPLIT, false, MASK_NONE, 0, false, 0, false, false},
    {"d128 1x1 none", 2, 1, 1, 2, 128, LTX2_KROPE_NONE, false, MASK_NONE, 0, false, 0, false, false},
    /* 5 tiles: the slots are refilled after releases inside the main loop, not only the first */
    {"d64 1x520 split+pad-mask", 2, 1, 520, 2, 64, LTX2_KROPE_SPLIT, false, MASK_PAD, 0, false, 0, false, false},
    /* Gemma-3's launches. d 256: 64-key tiles, O += PV in two n128 halves; causal: CTA 0 loads 2 of
     * the 3 tiles, CTA 1 all 3, diagonal tiles masked per element; left padding leaves rows with no
     * key (0) */
    {"d256 H2/kv1 130x130 causal+left-pad (Gemma-3 12B head dim)", 2, 130, 130, 2, 256, LTX2_KROPE_NONE, false,
     MASK_LEFT, 1, true, 0, true, false},
    /* window 100 over 128-key tiles: CTA 2 starts at tile 1 (the ring counts from there), the
     * window's far edge is masked per element; grouped heads read their kv head */
    {"d64 H4/kv2 300x300 causal+window 100+left-pad (Gemma local)", 1, 300, 300, 4, 64, LTX2_KROPE_NONE, false,
     MASK_LEFT, 2, true, 100, true, false},
    {"d256 H4/kv2 200x200 causal+window 70 (64-key tiles skipped)", 1, 200, 200, 4, 256, LTX2_KROPE_NONE, false,
     MASK_NONE, 2, true, 70, true, false},
    /* not causal: empty rows zeroed (batch 1 wholly masked gives 0, not the uniform average) */
    {"d128 H4/kv2 130x300 grouped+pad-mask, empty rows 0", 2, 130, 300, 4, 128, LTX2_KROPE_NONE, false, MASK_PAD, 2,
     false, 0, true, false},
};
/* The case the AUTO check reuses: 130 x 100, where the two kernels' roundings differ. */
#define AUTO_CASE 1

/* The kernel's two layouts (ltx2_k_attn_args.prep) give the same bits: Q normalised and rotated
 * by the pre-pass with the mask packed to bits (AUTO, whose output is `out`), and both done inside
 * the kernel (IN_KERNEL). */
static void check_prep_layouts(const attn_case *c, const attn_data *a, const float *out) {
    float *in_kernel = emu_xmalloc((size_t)a->nq * sizeof(float));
    double ms = 0;
    if (attn_run_prep(c, a, LTX2_KATTN_WGMMA, LTX2_KATTN_PREP_IN_KERNEL, in_kernel, &ms))
        CHECK(memcmp(in_kernel, out, (size_t)a->nq * sizeof(float)) == 0,
              "%s: Q and the mask prepared inside the kernel give other bits than the pre-pass", c->name);
    free(in_kernel);
}

/* After a case's comparison: both prep layouts alike, the sensitivity check on case 0 and the AUTO
 * check on AUTO_CASE. */
static void case_extra(ltx2_context *ctx, int ci, const attn_case *c, const attn_data *a, const float *out,
                       const float *ref) {
    (void)ctx;
    check_prep_layouts(c, a, out);
    if (ci == 0) /* the comparison can fail */
        emu_check_sensitive(c->name, out, ref, a->nq, ATTN_BF16_ATOL, EPS_BF16, true, a->nq / 2, SENSITIVITY_DELTA);
    if (ci == AUTO_CASE) attn_check_auto(c, a, out); /* out is this kernel's */
}

/* The e4m3 variant (head dim 128): kernel against ltx2_cpu_attention_fp8 (the same codes, scales and
 * 128-key online softmax). What may differ: f32 vs double sums, ex2.approx, and so the e4m3 code of
 * a weight lying at a rounding boundary (one e4m3 step is 1/8 to 1/16 of the weight), then O's bf16
 * rounding. F8_ATOL bounds that for these O(1) outputs; F8_SCHEME_RL2 bounds the scheme's distance
 * from exact attention (rel-L2 against the fp32 reference; measured 0.045-0.056, printed per case). */
#define F8_ATOL 4e-3
#define F8_SCHEME_RL2 0.06
static const attn_case k_f8_cases[] = {
    /* 3 key tiles, the last partial: K tile scales, the ring wrap, V^T zero past Skv */
    {"fp8 d128 130x300 split+qknorm", 2, 130, 300, 2, 128, LTX2_KROPE_SPLIT, true, MASK_NONE, 0, false, 0, false, true},
    /* masked keys, a batch with every key masked (uniform average), a partial query block */
    {"fp8 d128 130x260 pad-mask (batch 1 all masked)", 2, 130, 260, 2, 128, LTX2_KROPE_NONE, false, MASK_PAD, 0, false,
     0, false, true},
    /* grouped heads read their kv head's K tiles, V^T rows, scales and means; 5 tiles */
    {"fp8 d128 H4/kv2 130x520 tail-mask", 1, 130, 520, 4, 128, LTX2_KROPE_NONE, false, MASK_TAIL, 2,
     false, 0, false, true},
    /* K with channel offsets up to F8_OFFSET (real keys have them): the means taken out before
     * rounding keep the scheme's error where it is without offsets (V's are taken out the same way,
     * but an offset in V is an offset in the output, which would hide the error in rel-L2) */
    {"fp8 d128 130x300 K channel offsets", 2, 130, 300, 2, 128, LTX2_KROPE_NONE, false, MASK_NONE, 0, false, 0,
     false, true},
};
/* The offset case: channel c of K gets F8_OFFSET * ((c % 7) - 3) / 3 added. */
#define F8_OFFSET_CASE 3
#define F8_OFFSET 4.0f

/* The quantisation's statistics are over the keys the queries see: scaling batch 0's masked keys
 * (its own padding, as the parallel DiT's) by F8_MASKED_GAIN changes no output bit, on the device
 * and in the reference. (Batch 1, every key masked, averages all of them: they all count there.) */
#define F8_MASKED_CASE 1
#define F8_MASKED_GAIN 100.0f
static void check_f8_masked_keys(ltx2_context *ctx, const attn_case *c, attn_data *a, const float *out,
                                 const float *ref) {
    const size_t bytes = (size_t)a->nq * sizeof(float);
    float *out2 = emu_xmalloc(bytes), *ref2 = emu_xmalloc(bytes);
    int64_t changed = 0;
    for (int64_t j = 0; j < c->Skv; j++) {
        if (a->mask[j]) continue; /* batch 0's row of the mask */
        for (int64_t e = 0; e < a->Dkv; e++) {
            a->k[j * a->Dkv + e] = ltx2_round_bf16(a->k[j * a->Dkv + e] * F8_MASKED_GAIN);
            a->v[j * a->Dkv + e] = ltx2_round_bf16(a->v[j * a->Dkv + e] * F8_MASKED_GAIN);
        }
        changed++;
    }
    double ms = 0;
    if (changed && attn_reference(ctx, c, a, c->rope, a->qc, a->qs, a->kc, a->ks, ref2) &&
        attn_run(c, a, LTX2_KATTN_WGMMA, out2, &ms)) {
        CHECK(memcmp(out2, out, bytes) == 0, "%s: the kernel's output moved with %lld masked keys' values", c->name,
              (long long)changed);
        CHECK(memcmp(ref2, ref, bytes) == 0, "%s: the reference moved with %lld masked keys' values", c->name,
              (long long)changed);
    }
    CHECK(changed > 0, "%s: batch 0 has no masked key", c->name);
    free(out2), free(ref2);
}

static void test_f8_cases(ltx2_context *ctx) {
    printf("e4m3 attention (wgmma kernel, emulated) vs ltx2_cpu_attention_fp8 (atol %g, rtol %g); rel-L2 to bf16:\n",
           F8_ATOL, EPS_BF16);
    const int n = (int)(sizeof(k_f8_cases) / sizeof(k_f8_cases[0]));
    for (int ci = 0; ci < n; ci++) {
        const attn_case *c = &k_f8_cases[ci];
        attn_case exact = *c;
        exact.fp8 = false;
        attn_data a;
        attn_make(c, SM90_SEED, 1000 + 16 * (uint64_t)ci, &a);
        for (int64_t i = 0; ci == F8_OFFSET_CASE && i < a.nkv; i++) {
            const float off = F8_OFFSET * (float)((i % a.Dkv % c->d) % 7 - 3) / 3.0f;
            a.k[i] = ltx2_round_bf16(a.k[i] + off);
        }
        const size_t bytes = (size_t)a.nq * sizeof(float);
        float *ref = emu_xmalloc(bytes), *ref_exact = emu_xmalloc(bytes), *out = emu_xmalloc(bytes);
        double ms = 0;
        if (attn_reference(ctx, c, &a, c->rope, a.qc, a.qs, a.kc, a.ks, ref) &&
            attn_reference(ctx, &exact, &a, c->rope, a.qc, a.qs, a.kc, a.ks, ref_exact) &&
            attn_run(c, &a, LTX2_KATTN_WGMMA, out, &ms)) {
            emu_report(c->name, emu_compare(out, ref, a.nq, F8_ATOL, EPS_BF16, true, c->name, false), ms);
            const double kernel_rl2 = test_rel_l2(out, ref, a.nq), scheme_rl2 = test_rel_l2(ref, ref_exact, a.nq);
            printf("    rel-L2: kernel to the e4m3 reference %.3g; the e4m3 reference to fp32 attention %.3g\n",
                   kernel_rl2, scheme_rl2);
            CHECK(scheme_rl2 < F8_SCHEME_RL2, "%s: the e4m3 scheme is %.3g (rel-L2) from fp32 attention", c->name,
                  scheme_rl2);
            CHECK(kernel_rl2 < 0.1 * scheme_rl2, "%s: the kernel is %.3g from its reference, not well inside the "
                  "scheme's own error %.3g", c->name, kernel_rl2, scheme_rl2);
            if (ci == 0) /* the comparison can fail */
                emu_check_sensitive(c->name, out, ref, a.nq, F8_ATOL, EPS_BF16, true, a.nq / 3, 2 * F8_ATOL + 0.01f);
            if (ci == F8_MASKED_CASE) check_f8_masked_keys(ctx, c, &a, out, ref);
        }
        free(ref), free(ref_exact), free(out);
        attn_free(&a);
    }
}

static void test_cases(ltx2_context *ctx) {
    printf("attention (wgmma/TMA sm_90a kernel, emulated) vs the CPU backend (atol %g, rtol %g):\n", ATTN_BF16_ATOL,
           EPS_BF16);
    attn_run_cases(ctx, k_cases, (int)(sizeof(k_cases) / sizeof(k_cases[0])), LTX2_KATTN_WGMMA, SM90_SEED, 0,
                   case_extra);
}

int main(void) {
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    ltx2_context *ctx = ltx2_context_create(&cp);
    if (!ctx) return test_skip("no context");
    const double t0 = emu_now_ms();
    CHECK(ltx2_k_attention_wgmma_available() == 1, "the emulated sm_90 device reports no wgmma path");
    test_cases(ctx);
    test_f8_cases(ctx);
    printf("total %.2f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
