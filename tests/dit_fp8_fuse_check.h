/* The DiT's fp8 Linear inputs written by the ops that make them (the modulations,
 * ltx2_backend_norm_modulate_fp8, and LTX-2.3's head gate before the out-projection,
 * ltx2_backend_head_gate_fp8: the default) against each Linear quantising its own (ltx2_dit_forward_params.fp8_separate_quant):
 * one masked forward of fp8 weights each way on a golden's inputs must give the same bits, and a
 * backend wrapper counts what ran, so a forward that silently took the separate path fails. Used on
 * the CPU (test_dit_fp8_scaled) and on a device or the emulator (dit_device_check.h). */
#ifndef LTX2_TEST_DIT_FP8_FUSE_CHECK_H
#define LTX2_TEST_DIT_FP8_FUSE_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dit_inputs.h"
#include "test_util.h"

/* w's backend with its fp8 quantisations and norm_modulate's and head_gate's fp8 copies counted (be first: the
 * forward passes &be to every op, which forward to inner). */
typedef struct fp8_fuse_count {
    ltx2_backend be;
    const ltx2_backend *inner;
    int64_t quant_calls, copies;
} fp8_fuse_count;

static inline fp8_fuse_count *fp8_fuse_count_of(const ltx2_backend *be) {
    return (fp8_fuse_count *)(uintptr_t)be;
}

static ltx2_status fp8_fuse_count_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                                      ltx2_tensor *y) {
    fp8_fuse_count *c = fp8_fuse_count_of(be);
    if (y->dtype == LTX2_F8_E4M3) c->quant_calls++;
    return c->inner->fp8(c->inner, ctx, x, scale, y);
}

static ltx2_status fp8_fuse_count_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                            const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q) {
    fp8_fuse_count *c = fp8_fuse_count_of(be);
    if (q) c->copies += q->n;
    return c->inner->head_gate(c->inner, ctx, o, logits, heads, q);
}

static ltx2_status fp8_fuse_count_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                           ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                           const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                           const ltx2_fp8_outs *q) {
    fp8_fuse_count *c = fp8_fuse_count_of(be);
    if (q) c->copies += q->n;
    return c->inner->norm_modulate(c->inner, ctx, x, norm, eps, scale, shift, m, y, q);
}

/* One masked forward of w (fp8 Linears) on g's inputs with and without fp8_separate_quant:
 * bitwise equal, and the fused one wrote copies and quantised less. label names the case. */
static inline void dit_fp8_fuse_pair(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_st_file *g,
                              const char *label) {
    dit_inputs in;
    if (!dit_inputs_load(ctx, g, DIT_INPUTS_MASKED, &in)) return;
    const int64_t nv = in.B * in.video.T * w->cfg.out_channels, na = in.B * in.audio.T * w->cfg.audio_out_channels;
    float *out[2][2];
    fp8_fuse_count cnt[2];
    ltx2_status st = LTX2_OK;
    for (int sep = 0; sep < 2; sep++) {
        out[sep][0] = malloc((size_t)nv * sizeof(float));
        out[sep][1] = malloc((size_t)na * sizeof(float));
        cnt[sep] = (fp8_fuse_count){.be = *w->be, .inner = w->be};
        cnt[sep].be.fp8 = fp8_fuse_count_fp8;
        cnt[sep].be.norm_modulate = fp8_fuse_count_modulate;
        cnt[sep].be.head_gate = fp8_fuse_count_head_gate;
        ltx2_dit_weights cw = *w;
        cw.be = &cnt[sep].be;
        ltx2_dit_forward_params p = in.p;
        p.fp8_separate_quant = sep;
        if (st == LTX2_OK)
            st = out[sep][0] && out[sep][1] ? ltx2_dit_forward(ctx, &cw, &p, out[sep][0], out[sep][1]) : LTX2_ERR_OOM;
        CHECK(st == LTX2_OK, "%s fp8 %s forward: %s", label, sep ? "separate" : "fused", ltx2_last_error(ctx));
    }
    if (st == LTX2_OK) {
        CHECK(!memcmp(out[0][0], out[1][0], (size_t)nv * sizeof(float)) &&
                  !memcmp(out[0][1], out[1][1], (size_t)na * sizeof(float)),
              "%s: the forward with fp8 inputs from the modulations differs from the one quantising per Linear", label);
        CHECK(cnt[0].copies > 0 && cnt[1].copies == 0 && cnt[0].quant_calls < cnt[1].quant_calls,
              "%s: fused forward %lld copies, %lld quantisations; separate %lld copies, %lld quantisations", label,
              (long long)cnt[0].copies, (long long)cnt[0].quant_calls, (long long)cnt[1].copies,
              (long long)cnt[1].quant_calls);
        printf("%s: fp8 inputs from their producers bitwise the per-Linear ones (%lld copies, %lld quantisations "
               "left of %lld)\n", label, (long long)cnt[0].copies, (long long)cnt[0].quant_calls,
               (long long)cnt[1].quant_calls);
    }
    for (int sep = 0; sep < 2; sep++) free(out[sep][0]), free(out[sep][1]);
    dit_inputs_free(&in);
}

/* The Linears whose input scales dit_fp8_fuse_check spreads: K and V of the attentions that project
 * both from one modulation (self-attention, the A/V exchange's K/V), and the 2.3 gates beside Q. */
#define DIT_FP8_SPREAD_PER_BLOCK 10

static int dit_fp8_spread_list(ltx2_dit_block_w *b, ltx2_dit_linear **out) {
    ltx2_dit_attn_w *att[4] = {&b->attn1, &b->audio_attn1, &b->a2v, &b->v2a};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        out[n++] = &att[i]->k;
        out[n++] = &att[i]->v;
    }
    out[n++] = &b->attn1.gate;
    out[n++] = &b->attn2.gate;
    return n;
}

/* dit_fp8_fuse_pair on w as loaded (the goldens' Linears reading one input share its scale, as
 * calibrated checkpoints' would), then with K, V and the gates given other input scales than their
 * Q, so one modulation writes several copies and each Linear must pick its own. */
static inline void dit_fp8_fuse_check(ltx2_context *ctx, ltx2_dit_weights *w, const ltx2_st_file *g, const char *label) {
    dit_fp8_fuse_pair(ctx, w, g, label);
    const int64_t L = w->cfg.num_layers, n = L * DIT_FP8_SPREAD_PER_BLOCK;
    float *saved = malloc((size_t)n * sizeof(float));
    ltx2_dit_linear **lin = malloc((size_t)n * sizeof *lin);
    if (!saved || !lin) {
        CHECK(false, "%s: out of memory", label);
        free(saved), free(lin);
        return;
    }
    static const float spread[DIT_FP8_SPREAD_PER_BLOCK] = {1.5f, 0.75f, 1.25f, 0.5f, 2.0f,
                                                           0.625f, 1.75f, 0.875f, 1.125f, 3.0f};
    for (int64_t i = 0; i < L; i++) {
        const int k = dit_fp8_spread_list(&w->blocks[i], lin + i * DIT_FP8_SPREAD_PER_BLOCK);
        for (int j = 0; j < k; j++) {
            ltx2_dit_linear *l = lin[i * DIT_FP8_SPREAD_PER_BLOCK + j];
            saved[i * DIT_FP8_SPREAD_PER_BLOCK + j] = l->x_scale;
            if (l->x_scale > 0.0f) l->x_scale *= spread[j];
        }
    }
    char lab2[160];
    snprintf(lab2, sizeof lab2, "%s, K / V / gate input scales apart from Q's", label);
    dit_fp8_fuse_pair(ctx, w, g, lab2);
    for (int64_t j = 0; j < n; j++) lin[j]->x_scale = saved[j];
    free(saved), free(lin);
}

#endif
