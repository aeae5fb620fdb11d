/* RoPE tables and rotation (split and interleaved), fp32, following ltx-core's rope.py operation
 * by operation: the angle of the highest frequency reaches ~1.5e4 rad, where one fp32 rounding
 * step of the angle is ~1e-3 rad, so the order of the fp32 products matters more than the
 * accuracy of cos/sin (which are evaluated in double and rounded once). */
#include "cpu/cpu_rope.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* pi as the double Python's math.pi holds (strict C11 has no M_PI). */
#define LTX2_ROPE_PI 3.14159265358979311600

static ltx2_status check_params(ltx2_context *ctx, const ltx2_rope_params *p) {
    if (!p) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope: NULL params");
    if (p->n_axes < 1 || p->n_axes > LTX2_ROPE_MAX_AXES)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope: n_axes must be 1..%d, got %d", LTX2_ROPE_MAX_AXES,
                          p->n_axes);
    if (p->dim <= 0 || p->dim % 2 != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope: dim must be positive and even, got %lld", (long long)p->dim);
    if (p->dim / (2 * p->n_axes) < 2)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope: dim %lld gives fewer than 2 frequencies per axis (%d axes)",
                          (long long)p->dim, p->n_axes);
    if (p->type == LTX2_ROPE_SPLIT && (p->heads <= 0 || (p->dim / 2) % p->heads != 0))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope split: dim/2 = %lld must be a multiple of heads = %lld",
                          (long long)(p->dim / 2), (long long)p->heads);
    if (!(p->theta > 1.0))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope: theta must be > 1, got %g", p->theta);
    for (int a = 0; a < p->n_axes; a++)
        if (!(p->max_pos[a] > 0.0f))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope: max_pos[%d] must be > 0, got %g", a,
                              (double)p->max_pos[a]);
    return LTX2_OK;
}

static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int64_t ltx2_cpu_rope_n_freqs(const ltx2_rope_params *p) { return p->dim / (2 * p->n_axes); }

ltx2_status ltx2_cpu_rope_freqs(ltx2_context *ctx, const ltx2_rope_params *p, float *out) {
    LTX2_TRY(check_params(ctx, p));
    int64_t nf = ltx2_cpu_rope_n_freqs(p);
    if (p->double_precision && !p->xla) {
        /* numpy: linspace(0, 1, nf) = k * (1 / (nf - 1)) with the last entry exactly 1, then
         * theta ** y * pi / 2 in float64, cast to fp32 (generate_freq_grid_np). */
        double step = 1.0 / (double)(nf - 1);
        for (int64_t k = 0; k < nf; k++) {
            double y = (k == nf - 1) ? 1.0 : (double)k * step;
            out[k] = (float)(pow(p->theta, y) * LTX2_ROPE_PI / 2.0);
        }
    } else {
        /* the linspace in fp32: torch's fills the first half from the start and the second half from
         * the end; jnp.linspace compiled (xla) is k * fl(1 / (nf - 1)) with the last entry exactly 1
         * (MAXDIFFUSION_NUMERICS.md (a)). Then fp32 pow, * pi, / 2 (generate_freq_grid_pytorch, and
         * MaxDiffusion's numpy-equal power). */
        float step = 1.0f / (float)(nf - 1);
        float theta = (float)p->theta;
        for (int64_t k = 0; k < nf; k++) {
            float y = p->xla ? (k == nf - 1 ? 1.0f : (float)k * step)
                             : (k < nf / 2) ? (float)k * step : 1.0f - (float)(nf - 1 - k) * step;
            float w = (float)pow((double)theta, (double)y);
            w = w * (float)LTX2_ROPE_PI;
            out[k] = w / 2.0f;
        }
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_rope_tables(ltx2_context *ctx, const ltx2_rope_params *p, const float *positions,
                                 int64_t B, int64_t T, int64_t pos_last, float *cos_out, float *sin_out) {
    LTX2_TRY(check_params(ctx, p));
    if (B < 0 || T < 0 || (pos_last != 1 && pos_last != 2))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope tables: bad B=%lld T=%lld pos_last=%lld", (long long)B,
                          (long long)T, (long long)pos_last);
    if (p->use_middle && pos_last != 2)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope tables: use_middle needs [start, end) bounds (pos_last 2)");
    if (B * T > 0 && (!positions || !cos_out || !sin_out))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope tables: NULL buffer");
    const int n = p->n_axes;
    const int64_t nf = ltx2_cpu_rope_n_freqs(p);
    float freqs[4096];
    float *fr = nf <= 4096 ? freqs : malloc((size_t)nf * sizeof(float));
    if (!fr) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "rope tables: %lld frequencies", (long long)nf);
    ltx2_status st = ltx2_cpu_rope_freqs(ctx, p, fr);
    if (st != LTX2_OK) {
        if (fr != freqs) free(fr);
        return st;
    }
    const int64_t n_ang = n * nf;
    const int64_t half = p->dim / 2;
    const int64_t pad = p->type == LTX2_ROPE_SPLIT ? half - n_ang : p->dim % (2 * n);
    const int64_t per_head = p->type == LTX2_ROPE_SPLIT ? half / p->heads : 0;
    /* An angle is fr[k] * u[axis] with u a function of the token's position on that axis alone,
     * and positions repeat across tokens (a video's frames, rows, columns): cos / sin are evaluated
     * once per (axis, distinct u, k) and gathered, the same expressions as evaluating them per
     * token, so the tables are bitwise the same. */
    const int64_t BT = B * T;
    uint32_t *ubits = malloc((size_t)(BT * n > 0 ? BT * n : 1) * sizeof(uint32_t));
    int32_t *uidx = malloc((size_t)(BT * n > 0 ? BT * n : 1) * sizeof(int32_t));
    uint32_t *uniq = malloc((size_t)(BT > 0 ? BT : 1) * sizeof(uint32_t));
    float *trig[LTX2_ROPE_MAX_AXES] = {0};
    st = ubits && uidx && uniq ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "rope tables: %lld positions", (long long)BT);
    for (int a = 0; a < n && st == LTX2_OK; a++) {
        for (int64_t bt = 0; bt < BT; bt++) {
            const int64_t b = bt / (T ? T : 1), t = bt % (T ? T : 1);
            const float *pp = positions + (((b * n + a) * T) + t) * pos_last;
            const float pos = p->use_middle ? (pp[0] + pp[1]) / 2.0f : pp[0];
            /* XLA turns the division by the constant into a multiplication by its reciprocal */
            const float frac = p->xla ? pos * (1.0f / p->max_pos[a]) : pos / p->max_pos[a];
            const float u = frac * 2.0f - 1.0f;
            memcpy(&ubits[a * BT + bt], &u, sizeof u);
            uniq[bt] = ubits[a * BT + bt];
        }
        qsort(uniq, (size_t)BT, sizeof *uniq, cmp_u32);
        int64_t nu = 0;
        for (int64_t i = 0; i < BT; i++)
            if (nu == 0 || uniq[i] != uniq[nu - 1]) uniq[nu++] = uniq[i];
        for (int64_t bt = 0; bt < BT; bt++) {
            const uint32_t key = ubits[a * BT + bt];
            int64_t lo = 0, hi = nu - 1;
            while (lo < hi) {
                const int64_t mid = (lo + hi) / 2;
                if (uniq[mid] < key) lo = mid + 1;
                else hi = mid;
            }
            uidx[a * BT + bt] = (int32_t)lo;
        }
        trig[a] = malloc((size_t)(nu * nf * 2 > 0 ? nu * nf * 2 : 1) * sizeof(float));
        if (!trig[a]) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "rope tables: %lld angles", (long long)(nu * nf));
            break;
        }
        float *tg = trig[a];
#pragma omp parallel for schedule(static) if (nu * nf > 4096)
        for (int64_t q = 0; q < nu; q++) {
            float u;
            memcpy(&u, &uniq[q], sizeof u);
            for (int64_t k = 0; k < nf; k++) {
                const float ang = fr[k] * u;
                tg[(q * nf + k) * 2] = (float)cos((double)ang);
                tg[(q * nf + k) * 2 + 1] = (float)sin((double)ang);
            }
        }
    }
    if (st == LTX2_OK) {
#pragma omp parallel for collapse(2) schedule(static)
        for (int64_t b = 0; b < B; b++) {
            for (int64_t t = 0; t < T; t++) {
                for (int64_t j = 0; j < (p->type == LTX2_ROPE_SPLIT ? half : pad + n_ang); j++) {
                    float c = 1.0f, s = 0.0f;
                    if (j >= pad) {
                        const int64_t i = j - pad; /* flat angle index = k * n + axis */
                        const int a = (int)(i % n);
                        const float *cs = trig[a] + ((int64_t)uidx[a * BT + b * T + t] * nf + i / n) * 2;
                        c = cs[0];
                        s = cs[1];
                    }
                    if (p->type == LTX2_ROPE_SPLIT) {
                        int64_t h = j / per_head, r = j % per_head;
                        int64_t o = ((b * p->heads + h) * T + t) * per_head + r;
                        cos_out[o] = c;
                        sin_out[o] = s;
                    } else if (j < pad) {
                        /* interleaved: the pad covers dim % (2n) single entries at the front */
                        int64_t o = (b * T + t) * p->dim + j;
                        cos_out[o] = 1.0f;
                        sin_out[o] = 0.0f;
                    } else {
                        int64_t o = (b * T + t) * p->dim + pad + 2 * (j - pad);
                        cos_out[o] = cos_out[o + 1] = c;
                        sin_out[o] = sin_out[o + 1] = s;
                    }
                }
            }
        }
    }
    for (int a = 0; a < n; a++) free(trig[a]);
    free(ubits);
    free(uidx);
    free(uniq);
    if (fr != freqs) free(fr);
    return st;
}

ltx2_status ltx2_cpu_rope_apply_split(ltx2_context *ctx, float *x, const float *cos_t, const float *sin_t,
                                      int64_t B, int64_t T, int64_t heads, int64_t head_dim) {
    return ltx2_cpu_rope_apply_split_tab(ctx, x, cos_t, sin_t, B, T, heads, head_dim, B, heads);
}

ltx2_status ltx2_cpu_rope_apply_split_tab(ltx2_context *ctx, float *x, const float *cos_t, const float *sin_t,
                                          int64_t B, int64_t T, int64_t heads, int64_t head_dim, int64_t tab_rows,
                                          int64_t tab_heads) {
    if (B < 0 || T < 0 || heads <= 0 || head_dim <= 0 || head_dim % 2 != 0 || (tab_rows != B && tab_rows != 1) ||
        (tab_heads != heads && tab_heads != 1))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope split: bad B=%lld T=%lld heads=%lld head_dim=%lld (even), tables "
                          "of %lld rows x %lld heads (B or 1, heads or 1)", (long long)B, (long long)T,
                          (long long)heads, (long long)head_dim, (long long)tab_rows, (long long)tab_heads);
    if (B * T > 0 && (!x || !cos_t || !sin_t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope split: NULL buffer");
    const int64_t hd = head_dim / 2;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; b++) {
        for (int64_t t = 0; t < T; t++) {
            for (int64_t h = 0; h < heads; h++) {
                float *xa = x + ((b * T + t) * heads + h) * head_dim;
                float *xb = xa + hd;
                const int64_t tr = tab_rows == 1 ? 0 : b, th = tab_heads == 1 ? 0 : h;
                const float *c = cos_t + ((tr * tab_heads + th) * T + t) * hd;
                const float *s = sin_t + ((tr * tab_heads + th) * T + t) * hd;
                for (int64_t i = 0; i < hd; i++) {
                    float a = xa[i], bb = xb[i];
                    /* the reference multiplies by cos first, then adds the sin term (addcmul) */
                    float ra = a * c[i];
                    float rb = bb * c[i];
                    xa[i] = ra + (-s[i]) * bb;
                    xb[i] = rb + s[i] * a;
                }
            }
        }
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_rope_apply_interleaved(ltx2_context *ctx, float *x, const float *cos_t,
                                            const float *sin_t, int64_t B, int64_t T, int64_t dim) {
    if (B < 0 || T < 0 || dim <= 0 || dim % 2 != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "rope interleaved: bad B=%lld T=%lld dim=%lld (even)",
                          (long long)B, (long long)T, (long long)dim);
    if (B * T > 0 && (!x || !cos_t || !sin_t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rope interleaved: NULL buffer");
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < B * T; r++) {
        float *xr = x + r * dim;
        const float *c = cos_t + r * dim, *s = sin_t + r * dim;
        for (int64_t i = 0; i < dim; i += 2) {
            float x0 = xr[i], x1 = xr[i + 1];
            xr[i] = x0 * c[i] + (-x1) * s[i];
            xr[i + 1] = x1 * c[i + 1] + x0 * s[i + 1];
        }
    }
    return LTX2_OK;
}
