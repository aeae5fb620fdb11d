/* --precision tpu (issue #15 item 3): the DiT in MaxDiffusion's bf16 dtypes, as its source writes
 * them (AI-Hypercomputer/maxdiffusion 7cfb880, configs ltx2_video.yml / ltx2_3_video.yml:
 * weights_dtype = activations_dtype = bfloat16). Every value that code types bf16 is rounded to
 * bf16 at the op that makes it; every value it types f32 stays f32. The rules, from the jaxpr of
 * transformer_forward_pass (jax.make_jaxpr, one line per op with its dtype):
 *  - flax nnx.Linear(dtype=bf16): the input cast to bf16, the product rounded, then the bf16 bias
 *    added and the sum rounded again (two ops: dot_general, add).
 *  - jax.nn.gelu(approximate=True) and jax.nn.silu on bf16: each elementwise op rounded, the
 *    constants 0.044715 and sqrt(2/pi) themselves bf16 (0.044677734375, 0.796875).
 *  - nnx.RMSNorm / LayerNorm(dtype=f32), RoPE (apply_*_rotary_emb casts to f32), the attention
 *    scores and softmax: f32. The probabilities are cast to bf16 before P V, whose output is bf16.
 *  - Modulation tables: the params named exactly `scale_shift_table` (the video stream's, block and
 *    output head) stay f32 (ltx2_pipeline.py _CAST_EXCLUSION_PATTERN); every other table is bf16,
 *    so table + AdaLN output is rounded, and so is `1 + scale` (a weak-typed 1 keeps bf16).
 *    norm * (1 + scale) + shift is then f32 (the f32 norm promotes).
 *  - Residual stream: the scan carry is bf16 (hidden_states_out.astype at the end of each block).
 *    Inside a block the video stream turns f32 at its first gated add (bf16 + f32 gate); the audio
 *    stream's gates are bf16, so each of its updates rounds the product and the sum.
 *  - CFG + STG mode (dit_block.c): the STG blend value + m * (attn - value) is bf16 throughout (the
 *    per-layer mask array is made in the activation dtype), and the A/V attention outputs are
 *    multiplied by the f32 modality mask (made in the latents' dtype), so those updates, and the
 *    audio stream's sums after them, are f32 until the carry.
 * The elementwise f32 in between is the engine's own (the same formulas; a few f32 ulps apart,
 * which moves a bf16 rounding only when a value sits on a tie). Compared against MaxDiffusion
 * compiled with --xla_allow_excess_precision=false, which keeps exactly these roundings; by
 * default XLA deletes each f32 -> bf16 -> f32 pair it finds adjacent (tests/golden/
 * gen_maxdiffusion_bf16.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "model/dit_internal.h"

/* jax.nn.gelu(approximate=True)'s constants as bf16 constants (np.sqrt(2 / np.pi).astype(bf16),
 * and the weak-typed 0.044715 meeting a bf16 array). */
#define TPU_GELU_CUBIC 0.044715f
#define TPU_GELU_SQRT_2_OVER_PI 0.7978845608028654f

/* out = x rounded to bf16 values (out may be x): through a bf16 scratch and back. */
static ltx2_status bf16_into(dit_run *r, const ltx2_tensor *x, ltx2_tensor *out) {
    ltx2_tensor b;
    LTX2_TRY(dit_tensor(r, LTX2_BF16, x->ndim, x->shape, &b));
    LTX2_TRY(ltx2_backend_convert(r->be, r->ctx, x, &b));
    return ltx2_backend_convert(r->be, r->ctx, &b, out);
}

ltx2_status dit_bf16(dit_run *r, ltx2_tensor *t) {
    return bf16_into(r, t, t);
}

/* A one-element f32 tensor holding v (a broadcast scalar operand). */
static ltx2_status scalar(dit_run *r, float v, ltx2_tensor *out) {
    const int64_t one = 1;
    return ltx2_bpool_upload_f32(r->ctx, r->pool, &v, LTX2_F32, 1, &one, out);
}

/* A scratch f32 tensor of t's shape filled with v. */
static ltx2_status filled(dit_run *r, const ltx2_tensor *t, float v, ltx2_tensor *out) {
    const int64_t n = ltx2_tensor_numel(t);
    float *h = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit --precision tpu: %lld floats", (long long)n);
    for (int64_t i = 0; i < n; i++) h[i] = v;
    ltx2_status st = ltx2_bpool_upload_f32(r->ctx, r->pool, h, LTX2_F32, t->ndim, t->shape, out);
    free(h);
    return st;
}

/* y = bf16(a op b) (numpy broadcasting). */
static ltx2_status bin(dit_run *r, ltx2_op op, const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y) {
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, op, a, b, y));
    return dit_bf16(r, y);
}

/* jax.nn.sigmoid on a bf16 value: XLA expands logistic into 1 / (1 + exp(-x)) before it widens bf16
 * ops to f32, so each of the three ops is rounded. bf16 exp and tanh are taken as the correctly
 * rounded f32 result rounded again: bitwise XLA's on 100,000 random bf16 inputs (its f32 error rarely
 * reaches a bf16 rounding boundary). */
static inline float sigmoid_bf16(float x) {
    const float e = ltx2_round_bf16((float)exp(-(double)x));
    return ltx2_round_bf16(1.0f / ltx2_round_bf16(1.0f + e));
}

/* jax.nn.gelu(x, approximate=True) on a bf16 value: x * (0.5 * (1 + tanh(c2 * (x + c1 * x**3)))),
 * each op rounded, x**3 = x * (x * x) (integer_pow by squaring), c1 and c2 bf16 constants. */
static inline float gelu_bf16(float x, float c1, float c2) {
    const float x3 = ltx2_round_bf16(x * ltx2_round_bf16(x * x));
    const float in = ltx2_round_bf16(c2 * ltx2_round_bf16(x + ltx2_round_bf16(c1 * x3)));
    const float t = ltx2_round_bf16((float)tanh((double)in));
    return ltx2_round_bf16(x * ltx2_round_bf16(0.5f * ltx2_round_bf16(1.0f + t)));
}

/* The elementwise bf16 functions below read and write the CPU backend's host tensors directly:
 * --precision tpu is a CPU reference mode (dit_forward_hooked refuses another backend). */
ltx2_status dit_tpu_silu(dit_run *r, const ltx2_tensor *x, ltx2_tensor *y) {
    (void)r;
    const int64_t n = ltx2_tensor_numel(x);
    const float *xd = x->data;
    float *yd = y->data;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) yd[i] = ltx2_round_bf16(xd[i] * sigmoid_bf16(xd[i]));
    return LTX2_OK;
}

static void gelu_host(ltx2_tensor *x) {
    const float c1 = ltx2_round_bf16(TPU_GELU_CUBIC), c2 = ltx2_round_bf16(TPU_GELU_SQRT_2_OVER_PI);
    const int64_t n = ltx2_tensor_numel(x);
    float *d = x->data;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) d[i] = gelu_bf16(d[i], c1, c2);
}

ltx2_status dit_tpu_linear(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y) {
    if (L->w.dtype != LTX2_BF16)
        return LTX2_ERROR(r->ctx, LTX2_ERR_UNSUPPORTED,
                          "dit --precision tpu: a %s linear [%lld, %lld]: MaxDiffusion's TPU configs cast the DiT's "
                          "weights to bf16 (a bf16 checkpoint or MaxDiffusion's bf16 weights cache; f32 weights "
                          "and fused LoRAs would need the same cast, not done here)",
                          ltx2_dtype_name(L->w.dtype), (long long)L->out, (long long)L->in);
    ltx2_tensor xb;
    LTX2_TRY(dit_tensor(r, LTX2_F32, x->ndim, x->shape, &xb));
    LTX2_TRY(bf16_into(r, x, &xb)); /* promote_dtype: the input cast to bf16 (x itself stays f32) */
    ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .x_scale = 1.0f, .w_scale = 1.0f};
    LTX2_TRY(ltx2_backend_gemm_ex(r->be, r->ctx, &xb, &L->w, &ga, y));
    LTX2_TRY(dit_bf16(r, y)); /* dot_general's bf16 result */
    if (L->b.data) {
        ltx2_tensor b32;
        LTX2_TRY(dit_f32(r, &L->b, &b32));
        LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, y, &b32, y));
        LTX2_TRY(dit_bf16(r, y)); /* + bias, in bf16 */
    }
    if (gelu) gelu_host(y);
    return LTX2_OK;
}

ltx2_status dit_tpu_head_gate(dit_run *r, ltx2_tensor *o, const ltx2_tensor *logits, int64_t heads) {
    /* attn_output * (2.0 * jax.nn.sigmoid(gate_logits)): doubling a bf16 value is exact */
    (void)r;
    const int64_t inner = o->shape[o->ndim - 1], rows = ltx2_tensor_numel(o) / inner, d = inner / heads;
    float *od = o->data;
    const float *l = logits->data;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; i++)
        for (int64_t h = 0; h < heads; h++) {
            const float g = 2.0f * sigmoid_bf16(l[i * heads + h]);
            for (int64_t j = 0; j < d; j++) od[i * inner + h * d + j] = ltx2_round_bf16(od[i * inner + h * d + j] * g);
        }
    return LTX2_OK;
}

ltx2_status dit_tpu_scale_shift(dit_run *r, ltx2_tensor *scale, ltx2_tensor *shift) {
    int64_t s[2] = {scale->shape[0], scale->shape[1]};
    ltx2_tensor one, m1, zero, t, sc, sh;
    LTX2_TRY(scalar(r, 1.0f, &one));
    LTX2_TRY(scalar(r, -1.0f, &m1));
    LTX2_TRY(scalar(r, 0.0f, &zero));
    LTX2_TRY(dit_tensor(r, LTX2_F32, 2, s, &t));
    LTX2_TRY(dit_tensor(r, LTX2_F32, 2, s, &sc));
    LTX2_TRY(dit_tensor(r, LTX2_F32, 2, s, &sh));
    LTX2_TRY(bin(r, LTX2_OP_ADD, scale, &one, &t)); /* bf16(1 + scale) */
    /* t - 1 is exact for |t| >= 2^-16 (an 8-bit t and 1 span at most 24 bits), so 1 + sc is t */
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, &t, &m1, &sc));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, shift, &zero, &sh)); /* a contiguous copy */
    *scale = sc;
    *shift = sh;
    return LTX2_OK;
}

ltx2_status dit_tpu_gated_add(dit_run *r, ltx2_tensor *x, const ltx2_tensor *y, const ltx2_tensor *gate,
                              const ltx2_mod_rows *m, bool gate_bf16, bool x_bf16) {
    if (gate && gate_bf16) {
        /* bf16(y * gate) as 0 + y * gate through the op itself (0 + v is v) */
        ltx2_tensor t;
        LTX2_TRY(filled(r, y, 0.0f, &t));
        LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, &t, y, gate, m));
        LTX2_TRY(dit_bf16(r, &t));
        LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, x, &t, NULL, m));
    } else {
        LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, x, y, gate, m));
    }
    return x_bf16 ? dit_bf16(r, x) : LTX2_OK;
}
