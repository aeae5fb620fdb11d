/* The DiT's e4m3 attention (ltx2_dit_forward_params.attention_fp8) through the one forward: a model
 * whose video heads have head dim 128 (dit_fp8_attn_model.h) on the CUDA kernels in the CPU
 * emulator (bf16) against the CPU backend (f32, ltx2_cpu_attention_fp8). Checks: the device forward
 * with fp8 attention matches the CPU's within the device bounds of dit_device_check.h; fp8 attention
 * moves the CPU's output by an amount in the scheme's range, and the device's move goes the same
 * way (see F8_DELTA_MIN_COSINE for how far that can be asked); the audio stream (head dim 8: its
 * attentions stay as they are) moves less than the video; a --precision tpu forward refuses it. */
#include "backend_emu.h"
#include "dit_device_check.h"
#include "dit_fp8_attn_model.h"

/* The e4m3 scheme's effect on the velocity, rel-L2 against the same forward with bf16 attention
 * (the op alone is ~0.05 on N(0,1) inputs: tests/test_emu_attention_sm90.c). */
#define F8_EFFECT_MAX 0.1
#define F8_EFFECT_MIN 1e-3
/* The device's fp8 move (its fp8 forward minus its bf16-attention one) against the CPU's: the same
 * scheme, but e4m3 codes of scores and weights are sensitive to the inputs, and the device's carry
 * bf16 noise. At the op level (ltx2_cpu_attention_fp8 on inputs perturbed by 2^-9 and 2^-7
 * relative noise) the two moves keep cosine 0.72 and 0.42; this forward gives about 0.54. So the
 * bound only separates "the same rounding of nearly the same values" from a move that is absent
 * (cosine 0, ratio 0) or made of other values (cosine near 0); the kernel's exactness is
 * test_emu_attention_sm90's, op by op. */
#define F8_DELTA_MIN_COSINE 0.25
#define F8_DELTA_MAX_RATIO 2.0

/* cosine of (a1 - a0) and (b1 - b0), and |a1 - a0| / |b1 - b0| into *ratio */
static double delta_cosine(const float *a1, const float *a0, const float *b1, const float *b0, int64_t n,
                           double *ratio) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        const double da = (double)a1[i] - a0[i], db = (double)b1[i] - b0[i];
        ab += da * db, aa += da * da, bb += db * db;
    }
    *ratio = bb > 0 ? sqrt(aa / bb) : 0.0;
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    f8m_model m;
    ltx2_dit_weights *dev = NULL;
    bool made = emu && f8m_make(ctx, &m);
    ltx2_status st = made ? ltx2_dit_weights_to(ctx, m.w, emu, LTX2_BF16, &dev) : LTX2_ERR_INTERNAL;
    CHECK(!made || st == LTX2_OK, "device weights: %s", ltx2_last_error(ctx));
    made = made && st == LTX2_OK;
    const int64_t nv = made ? m.nv : 1, na = made ? m.na : 1;
    float *v[4], *a[4]; /* cpu bf16-attention, cpu fp8, device bf16-attention, device fp8 */
    for (int i = 0; i < 4; i++) v[i] = malloc((size_t)nv * sizeof(float)), a[i] = malloc((size_t)na * sizeof(float));
    for (int i = 0; made && i < 4 && st == LTX2_OK; i++) {
        m.p.attention_fp8 = i % 2 == 1;
        st = ltx2_dit_forward(ctx, i < 2 ? m.w : dev, &m.p, v[i], a[i]);
        CHECK(st == LTX2_OK, "forward %d: %s", i, ltx2_last_error(ctx));
    }
    if (made && st == LTX2_OK) {
        double worst = 0;
        dit_device_compare("fp8 attention: device video vs CPU", v[1], v[3], nv, &worst);
        dit_device_compare("fp8 attention: device audio vs CPU", a[1], a[3], na, &worst);
        const double effect = test_rel_l2(v[1], v[0], nv), dev_dist = test_rel_l2(v[3], v[1], nv);
        double ratio = 0;
        const double cosine = delta_cosine(v[3], v[2], v[1], v[0], nv, &ratio);
        printf("video velocity: fp8 attention moves it by rel-L2 %.3g on the CPU; the device's move against the "
               "CPU's: cosine %.3f, size ratio %.3f; device vs CPU (both fp8) %.3g\n", effect, cosine, ratio, dev_dist);
        CHECK(effect > F8_EFFECT_MIN && effect < F8_EFFECT_MAX,
              "fp8 attention moves the CPU's video velocity by %.3g, not within [%.2g, %.2g]", effect, F8_EFFECT_MIN,
              F8_EFFECT_MAX);
        CHECK(cosine > F8_DELTA_MIN_COSINE && ratio > 1.0 / F8_DELTA_MAX_RATIO && ratio < F8_DELTA_MAX_RATIO,
              "the device's fp8 move is not the CPU's: cosine %.3f (min %.2f), size ratio %.3f", cosine,
              F8_DELTA_MIN_COSINE, ratio);
        /* audio's own attentions have head dim 8 (they stay as they are): its stream moves only
         * through the A/V exchange with the video */
        CHECK(test_rel_l2(a[1], a[0], na) < effect, "audio moved more than video (%.3g)", test_rel_l2(a[1], a[0], na));
    }
    if (made) { /* refused where it does not apply */
        m.p.attention_fp8 = true;
        m.p.precision_tpu = true;
        st = ltx2_dit_forward(ctx, m.w, &m.p, v[0], a[0]);
        CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(ctx), "e4m3"),
              "fp8 attention with --precision tpu: '%s'", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    for (int i = 0; i < 4; i++) free(v[i]), free(a[i]);
    ltx2_dit_weights_free(dev);
    if (made) f8m_free(&m);
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
