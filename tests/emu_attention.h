/* What the emulated flash-attention tests (tests/test_emu_attention.c: the mma.sync kernel;
 * tests/test_emu_attention_sm90.c: the wgmma/TMA kernel) share: the case description, seeded
 * bf16-valued inputs with RoPE tables and key masks, the CPU backend's fp32 reference, device
 * copies with ltx2_k_attn_args filled like the CUDA backend fills them, the checked launch, and
 * the case loop (compare and report, then a test's own extra checks). Each test passes what
 * differs: the implementation it forces, its Philox seed and stream base, its case table.
 * Include after "emu_kernels.h" and "emu_check.h". */
#ifndef LTX2_TESTS_EMU_ATTENTION_H
#define LTX2_TESTS_EMU_ATTENTION_H

#include "backend/backend.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* Tolerances of the op harness for the CUDA attention (tests/test_ops.c, tol_for with input scale
 * 1): ATTN_BF16_ATOL absolute for the bf16 rounding of normalised/rotated q, k and of P, plus one
 * bf16 ulp (EPS_BF16) relative for the output rounding. */
#define ATTN_BF16_ATOL 4e-3
/* QK RMSNorm epsilon of the LTX-2 attention (as tests/test_ops.d/ops_case.h). */
#define QK_NORM_EPS 1e-6f
/* Norm weights are 1 + this * N(0,1), RoPE angles this * N(0,1) radians (as the op harness). */
#define NORM_W_SPREAD 0.2f
#define ROPE_ANGLE_SCALE 2.0f

enum { MASK_NONE = 0, MASK_PAD, MASK_TAIL, MASK_LEFT };

typedef struct attn_case {
    const char *name;
    int64_t B, Sq, Skv, H, d;
    int rope; /* LTX2_KROPE_* */
    bool qknorm;
    int mask; /* MASK_*: see attn_make */
    /* Gemma-3's masks (0 / false: none): kv heads, causal, sliding window, empty rows zero */
    int64_t Hkv;
    bool causal;
    int64_t window;
    bool empty_zero;
    bool fp8; /* e4m3 attention (ltx2_attn_args.fp8): the reference is ltx2_cpu_attention_fp8's scheme */
} attn_case;

/* Host inputs, f32 holding bf16 values (so the CPU reference sees exactly what the kernel sees). */
typedef struct attn_data {
    int64_t D, Dkv, nq, nkv, ntq, ntk;
    float *q, *k, *v, *wq, *wk, *qc, *qs, *kc, *ks;
    uint8_t *mask;
} attn_data;

static float *rope_angles_to_tables(const float *ang, int64_t n, bool il, bool want_sin) {
    float *t = emu_xmalloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const float a = ang[il ? i & ~(int64_t)1 : i]; /* interleaved: the pair shares its angle */
        t[i] = want_sin ? sinf(a) : cosf(a);
    }
    return t;
}

/* Inputs of case c from Philox `seed`, streams stream0 .. stream0 + 6. */
static void attn_make(const attn_case *c, uint64_t seed, uint64_t stream0, attn_data *a) {
    memset(a, 0, sizeof(*a));
    const int64_t B = c->B, D = c->H * c->d;
    a->D = D;
    a->Dkv = (c->Hkv > 0 ? c->Hkv : c->H) * c->d;
    a->nq = B * c->Sq * D;
    a->nkv = B * c->Skv * a->Dkv;
    a->q = emu_normal_seeded(seed, stream0 + 0, a->nq, 1.0f, 0.0f, true);
    a->k = emu_normal_seeded(seed, stream0 + 1, a->nkv, 1.0f, 0.0f, true);
    a->v = emu_normal_seeded(seed, stream0 + 2, a->nkv, 1.0f, 0.0f, true);
    if (c->qknorm) {
        a->wq = emu_normal_seeded(seed, stream0 + 3, D, NORM_W_SPREAD, 1.0f, true);
        a->wk = emu_normal_seeded(seed, stream0 + 4, D, NORM_W_SPREAD, 1.0f, true);
    }
    if (c->rope != LTX2_KROPE_NONE) {
        /* split [B, H, S, d/2], interleaved [B, S, D] */
        const bool il = c->rope == LTX2_KROPE_INTERLEAVED;
        a->ntq = il ? a->nq : a->nq / 2;
        a->ntk = il ? a->nkv : a->nkv / 2;
        float *aq = emu_normal_seeded(seed, stream0 + 5, a->ntq, ROPE_ANGLE_SCALE, 0.0f, false);
        float *ak = emu_normal_seeded(seed, stream0 + 6, a->ntk, ROPE_ANGLE_SCALE, 0.0f, false);
        a->qc = rope_angles_to_tables(aq, a->ntq, il, false), a->qs = rope_angles_to_tables(aq, a->ntq, il, true);
        a->kc = rope_angles_to_tables(ak, a->ntk, il, false), a->ks = rope_angles_to_tables(ak, a->ntk, il, true);
        free(aq), free(ak);
    }
    if (c->mask != MASK_NONE) {
        /* PAD: batch 0 a text padding pattern, batch 1 every key masked (uniform average).
         * TAIL: batch 0 attends only the last quarter (whole leading key tiles are dead),
         * batch 1 the padding pattern.
         * LEFT: the tokenizer's left padding, a third of batch 0's keys and 2 of batch 1's (with a
         * causal mask, the padded queries see no key). */
        a->mask = emu_xmalloc((size_t)(B * c->Skv));
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < c->Skv; j++) {
                const bool pad = j < (2 * c->Skv) / 3 || j % 5 == 0;
                const bool left = j >= (b == 0 ? c->Skv / 3 : 2);
                const bool m = c->mask == MASK_LEFT ? left
                               : c->mask == MASK_PAD ? (b == 0 && pad) : (b == 0 ? j >= c->Skv - c->Skv / 4 : pad);
                a->mask[b * c->Skv + j] = m ? (uint8_t)(1 + j % 3) : 0; /* any nonzero attends */
            }
    }
}

static void attn_free(attn_data *a) {
    free(a->q), free(a->k), free(a->v), free(a->wq), free(a->wk);
    free(a->qc), free(a->qs), free(a->kc), free(a->ks), free(a->mask);
}

/* The CPU backend's attention (fp32) on the same values, with RoPE mode `rope` and the given
 * tables (a negative control passes a flipped mode). */
static bool attn_reference(ltx2_context *ctx, const attn_case *c, const attn_data *a, int rope, float *qc,
                           float *qs, float *kc, float *ks, float *out) {
    const int64_t B = c->B, D = a->D, hd = c->d / 2;
    const int64_t sq[3] = {B, c->Sq, D}, skv[3] = {B, c->Skv, a->Dkv}, sm[2] = {B, c->Skv}, sw[1] = {D};
    ltx2_tensor tq = ltx2_tensor_make(a->q, LTX2_F32, 3, sq), tk = ltx2_tensor_make(a->k, LTX2_F32, 3, skv);
    ltx2_tensor tv = ltx2_tensor_make(a->v, LTX2_F32, 3, skv), to = ltx2_tensor_make(out, LTX2_F32, 3, sq);
    ltx2_tensor tm = ltx2_tensor_make(a->mask, LTX2_U8, 2, sm);
    ltx2_tensor twq = ltx2_tensor_make(a->wq, LTX2_F32, 1, sw), twk = ltx2_tensor_make(a->wk, LTX2_F32, 1, sw);
    const bool il = rope == LTX2_KROPE_INTERLEAVED, has_rope = rope != LTX2_KROPE_NONE;
    const int64_t stq[4] = {B, c->H, c->Sq, hd}, stk[4] = {B, c->H, c->Skv, hd};
    ltx2_tensor tqc = il ? ltx2_tensor_make(qc, LTX2_F32, 3, sq) : ltx2_tensor_make(qc, LTX2_F32, 4, stq);
    ltx2_tensor tqs = il ? ltx2_tensor_make(qs, LTX2_F32, 3, sq) : ltx2_tensor_make(qs, LTX2_F32, 4, stq);
    ltx2_tensor tkc = il ? ltx2_tensor_make(kc, LTX2_F32, 3, skv) : ltx2_tensor_make(kc, LTX2_F32, 4, stk);
    ltx2_tensor tks = il ? ltx2_tensor_make(ks, LTX2_F32, 3, skv) : ltx2_tensor_make(ks, LTX2_F32, 4, stk);
    ltx2_attn_args args = {
        .heads = c->H, .scale = 1.0f / sqrtf((float)c->d), .key_mask = a->mask ? &tm : NULL,
        .q_norm = a->wq ? &twq : NULL, .k_norm = a->wk ? &twk : NULL, .norm_eps = QK_NORM_EPS,
        .rope_type = il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
        .q_cos = has_rope ? &tqc : NULL, .q_sin = has_rope ? &tqs : NULL,
        .k_cos = has_rope ? &tkc : NULL, .k_sin = has_rope ? &tks : NULL,
        .kv_heads = c->Hkv, .causal = c->causal, .window = c->window, .empty_zero = c->empty_zero, .fp8 = c->fp8,
    };
    const ltx2_status st = ltx2_backend_attention(ltx2_backend_cpu(), ctx, &tq, &tk, &tv, &args, &to);
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

static void attn_upload(const attn_case *c, const attn_data *a, int impl, int prep, attn_dev *d) {
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
        .k_cos = d->kc, .k_sin = d->ks, .impl = impl, .kv_heads = c->Hkv, .causal = c->causal,
        .window = c->window, .empty_zero = c->empty_zero, .prep = prep, .fp8 = c->fp8,
    };
    d->ka.workspace_bytes = ltx2_k_attention_workspace(&d->ka);
    if (d->ka.workspace_bytes) d->ka.workspace = emu_alloc(d->ka.workspace_bytes);
}

static void attn_dev_free(attn_dev *d) {
    free(d->q), free(d->k), free(d->v), free(d->out), free(d->wq), free(d->wk);
    free(d->qc), free(d->qs), free(d->kc), free(d->ks), free(d->mask), free(d->ka.workspace);
}

/* Uploads, launches with `impl` and `prep` (LTX2_KATTN_PREP_*), checks the return code, the
 * emulator's fault report and the guard bytes, and downloads the output as f32. */
static bool attn_run_prep(const attn_case *c, const attn_data *a, int impl, int prep, float *out, double *ms) {
    attn_dev d;
    attn_upload(c, a, impl, prep, &d);
    ltx2_emu_reset_fault();
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_attention(NULL, &d.ka);
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

static bool attn_run(const attn_case *c, const attn_data *a, int impl, float *out, double *ms) {
    return attn_run_prep(c, a, impl, LTX2_KATTN_PREP_AUTO, out, ms);
}

/* The kernel an AUTO launch of case c picks on the emulated sm_90 device (ATT_AUTO_PICKS_WGMMA
 * on): per-row for head dims the tensor-core kernels lack and for causal/windowed rows averaged
 * when empty; mma.sync for head dim 256 and Gemma's other masks; wgmma for the rest. */
static int attn_auto_expected(const attn_case *c) {
    const bool gemma = (c->Hkv && c->Hkv != c->H) || c->causal || c->window || c->empty_zero;
    if ((c->d != 64 && c->d != 128 && c->d != 256) || ((c->causal || c->window) && !c->empty_zero))
        return LTX2_KATTN_PER_ROW;
    return gemma || c->d == 256 ? LTX2_KATTN_MMA_SYNC : LTX2_KATTN_WGMMA;
}

static const char *attn_impl_name(int impl) {
    return impl == LTX2_KATTN_MMA_SYNC ? "mma.sync" : impl == LTX2_KATTN_WGMMA ? "wgmma"
                                                    : impl == LTX2_KATTN_PER_ROW ? "per-row" : "refused";
}

/* AUTO picks attn_auto_expected's kernel (ltx2_k_attention_pick); returns that kernel. */
static int attn_check_pick(const attn_case *c, const attn_data *a) {
    const int want = attn_auto_expected(c);
    attn_dev d;
    attn_upload(c, a, LTX2_KATTN_AUTO, LTX2_KATTN_PREP_AUTO, &d);
    const int pick = ltx2_k_attention_pick(&d.ka);
    attn_dev_free(&d);
    CHECK(pick == want, "%s: AUTO picks %s, expected %s", c->name, attn_impl_name(pick), attn_impl_name(want));
    return want;
}

/* attn_check_pick, then an AUTO launch gives the same bits as that kernel forced, whose output is
 * forced_out (NULL: launched here). */
static void attn_check_auto(const attn_case *c, const attn_data *a, const float *forced_out) {
    const int want = attn_check_pick(c, a);
    if (want == LTX2_KATTN_PER_ROW) return; /* no impl forces it */
    const size_t bytes = (size_t)a->nq * sizeof(float);
    float *own = forced_out ? NULL : emu_xmalloc(bytes), *auto_out = emu_xmalloc(bytes);
    double ms = 0;
    if ((forced_out || attn_run(c, a, want, own, &ms)) && attn_run(c, a, LTX2_KATTN_AUTO, auto_out, &ms))
        CHECK(memcmp(forced_out ? forced_out : own, auto_out, bytes) == 0, "%s: AUTO output differs from %s", c->name,
              attn_impl_name(want));
    free(own), free(auto_out);
}

/* A test's own checks on case ci after its comparison passed through the launch (inputs, the
 * kernel's output and the reference, a.nq values each). */
typedef void (*attn_case_extra)(ltx2_context *ctx, int ci, const attn_case *c, const attn_data *a,
                                const float *out, const float *ref);

/* Every case of `cases` with `impl` forced, inputs from `seed` with case ci on streams
 * stream_base + 16 * ci: the CPU reference, the checked launch, the compared and reported output,
 * then `extra` (may be NULL). */
static void attn_run_cases(ltx2_context *ctx, const attn_case *cases, int n, int impl, uint64_t seed,
                           uint64_t stream_base, attn_case_extra extra) {
    for (int ci = 0; ci < n; ci++) {
        const attn_case *c = &cases[ci];
        attn_data a;
        attn_make(c, seed, stream_base + 16 * (uint64_t)ci, &a);
        float *ref = emu_xmalloc((size_t)a.nq * sizeof(float)), *out = emu_xmalloc((size_t)a.nq * sizeof(float));
        double ms = 0;
        if (attn_reference(ctx, c, &a, c->rope, a.qc, a.qs, a.kc, a.ks, ref) && attn_run(c, &a, impl, out, &ms)) {
            emu_report(c->name, emu_compare(out, ref, a.nq, ATTN_BF16_ATOL, EPS_BF16, true, c->name, false), ms);
            if (extra) extra(ctx, ci, c, &a, out, ref);
        }
        free(ref), free(out);
        attn_free(&a);
    }
}

#endif
