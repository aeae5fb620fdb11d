/* Pointwise activations, fp32: GELU with torch's tanh approximation and SiLU (the DiT, the VAEs),
 * and the vocoders' pointwise ops (LeakyReLU, tanh, hardtanh, log floor, division by a scalar). */
#include "cpu/cpu_ops.h"

#include <math.h>

#include "cpu/cpu_mvec.h"

/* sqrt(2/pi) and the cubic coefficient of the tanh approximation (Hendrycks & Gimpel), the
 * constants torch uses for gelu(approximate='tanh'). */
#define GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_COEF_A 0.044715f

static ltx2_status check_n(ltx2_context *ctx, const char *op, const float *x, const float *y,
                           int64_t n) {
    if (n < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu %s: negative element count %lld", op, (long long)n);
    if (n > 0 && (!x || !y)) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu %s: NULL input or output", op);
    return LTX2_OK;
}

#if LTX2_CPU_MVEC
#define GELU_VEC 16
#else
#define GELU_VEC 1
#endif

ltx2_status ltx2_cpu_gelu_tanh(ltx2_context *ctx, const float *x, float *y, int64_t n) {
    LTX2_TRY(check_n(ctx, "gelu_tanh", x, y, n));
    /* the vector part, with the scalar formula's operations in its order */
    const int64_t nv = GELU_VEC > 1 ? n / GELU_VEC * GELU_VEC : 0;
#if GELU_VEC > 1
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nv; i += GELU_VEC) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(GELU_COEF_A), v), v), v);
        const __m512 t = _ZGVeN16v_tanhf(_mm512_mul_ps(_mm512_set1_ps(GELU_SQRT_2_OVER_PI), _mm512_add_ps(v, v3)));
        const __m512 half_v = _mm512_mul_ps(_mm512_set1_ps(0.5f), v);
        _mm512_storeu_ps(y + i, _mm512_mul_ps(half_v, _mm512_add_ps(_mm512_set1_ps(1.0f), t)));
    }
#endif
#pragma omp parallel for schedule(static) if (n - nv > 4096)
    for (int64_t i = nv; i < n; i++) {
        float v = x[i];
        float inner = GELU_SQRT_2_OVER_PI * (v + GELU_COEF_A * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_silu(ltx2_context *ctx, const float *x, float *y, int64_t n) {
    LTX2_TRY(check_n(ctx, "silu", x, y, n));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = v / (1.0f + expf(-v));
    }
    return LTX2_OK;
}

/* One loop per op; a macro keeps the five identical bodies in one place. */
#define CPU_POINTWISE(name, expr)                                                                          \
    LTX2_TRY(check_n(ctx, name, x, y, n));                                                                 \
    _Pragma("omp parallel for schedule(static) if (n > 65536)") for (int64_t i = 0; i < n; i++) {          \
        const float v = x[i];                                                                              \
        y[i] = (expr);                                                                                     \
    }                                                                                                      \
    return LTX2_OK

ltx2_status ltx2_cpu_leaky_relu(ltx2_context *ctx, const float *x, float *y, int64_t n, float slope) {
    CPU_POINTWISE("leaky_relu", v >= 0.0f ? v : v * slope);
}

ltx2_status ltx2_cpu_tanh(ltx2_context *ctx, const float *x, float *y, int64_t n) {
    CPU_POINTWISE("tanh", tanhf(v));
}

/* comparisons, not fminf / fmaxf: NaN passes through as torch.clamp lets it */
ltx2_status ltx2_cpu_hardtanh(ltx2_context *ctx, const float *x, float *y, int64_t n) {
    CPU_POINTWISE("hardtanh", v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v));
}

ltx2_status ltx2_cpu_log_floor(ltx2_context *ctx, const float *x, float *y, int64_t n, float floor_value) {
    CPU_POINTWISE("log_floor", logf(v < floor_value ? floor_value : v));
}

ltx2_status ltx2_cpu_div_scalar(ltx2_context *ctx, const float *x, float *y, int64_t n, float d) {
    CPU_POINTWISE("div_scalar", v / d);
}
