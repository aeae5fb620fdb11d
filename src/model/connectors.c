/* Text connectors forward (fp32, CPU): feature extractor (ltx-core feature_extractor.py) and the
 * Embeddings1DConnector (embeddings_connector.py) for video and audio, in the reference's order
 * of operations. Batches are handled per sample where ltx-core only supports batch 1 (register
 * replacement), with the same result as running each sample alone. */
#include "model/connectors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_attention.h"
#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"

/* eps of the feature-extractor norms, the connector RMS norms and the QK RMSNorm (ltx-core 1e-6). */
#define CONN_EPS 1e-6f
/* V1 normalisation: 8 * (x - mean) / (max - min + eps), fixed in _norm_and_concat_padded_batch. */
#define FE_V1_SCALE 8.0f

typedef struct conn_run {
    ltx2_context *ctx;
    ltx2_dit_dump_fn dump;
    void *user;
} conn_run;

static void dump3(conn_run *r, const char *name, const float *d, int64_t a, int64_t b, int64_t c) {
    if (!r->dump) return;
    int64_t s[3] = {a, b, c};
    ltx2_tensor t = ltx2_tensor_make((void *)d, LTX2_F32, 3, s);
    r->dump(name, &t, r->user);
}

static ltx2_status linear(conn_run *r, const ltx2_dit_linear *L, const float *x, int64_t rows, float *y) {
    return ltx2_cpu_gemm(r->ctx, rows, L->out, L->in, 1.0f, x, L->in, L->w, L->in, LTX2_B_NK, 0.0f, y, L->out, L->b);
}

/* V1: per sample b and layer l over the valid tokens: mean, min, max of x[b, valid, :, l]. */
static void fe_v1(const ltx2_text_hidden *in, float *normed) {
    const int64_t S = in->S, D = in->D, L = in->L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < in->B; b++)
        for (int64_t l = 0; l < L; l++) {
            const float *x = in->hidden + b * S * D * L;
            const uint8_t *m = in->mask + b * S;
            double sum = 0.0;
            float lo = INFINITY, hi = -INFINITY;
            int64_t n = 0;
            for (int64_t t = 0; t < S; t++) {
                if (!m[t]) continue;
                n++;
                for (int64_t d = 0; d < D; d++) {
                    float v = x[(t * D + d) * L + l];
                    sum += v;
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            }
            /* torch: sum / (float(n * D) + 1e-6) in fp32 */
            float mean = (float)sum / ((float)(n * D) + CONN_EPS);
            float range = hi - lo;
            for (int64_t t = 0; t < S; t++)
                for (int64_t d = 0; d < D; d++) {
                    float *o = normed + (b * S + t) * D * L + d * L + l;
                    *o = m[t] ? FE_V1_SCALE * (x[(t * D + d) * L + l] - mean) / (range + CONN_EPS) : 0.0f;
                }
        }
}

/* V2: per token and layer, x / sqrt(mean_d(x^2) + eps); padding zeroed. */
static void fe_v2(const ltx2_text_hidden *in, float *normed) {
    const int64_t S = in->S, D = in->D, L = in->L;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < in->B; b++)
        for (int64_t t = 0; t < S; t++) {
            const float *x = in->hidden + (b * S + t) * D * L;
            float *o = normed + (b * S + t) * D * L;
            const bool keep = in->mask[b * S + t] != 0;
            for (int64_t l = 0; l < L; l++) {
                double ss = 0.0;
                for (int64_t d = 0; d < D; d++) ss += (double)x[d * L + l] * (double)x[d * L + l];
                float var = (float)(ss / (double)D);
                float inv = (float)(1.0 / sqrt((double)(var + CONN_EPS)));
                for (int64_t d = 0; d < D; d++) o[d * L + l] = keep ? x[d * L + l] * inv : 0.0f;
            }
        }
}

/* Pre-norm self-attention of one connector block (ltx-core Attention.forward, no mask: the
 * registers make every key valid). cos/sin are batch-1 tables shared by all samples. */
static ltx2_status conn_attn(conn_run *r, const ltx2_connectors_config *cfg, const ltx2_dit_attn_w *a, const float *x,
                             int64_t B, int64_t S, const float *cos_t, const float *sin_t, float *out, float *buf) {
    ltx2_context *ctx = r->ctx;
    const int64_t H = a->heads, d = a->head_dim, inner = H * d, n = B * S * inner;
    float *q = buf, *k = q + n, *v = k + n, *o = v + n, *g = o + n;
    LTX2_TRY(linear(r, &a->q, x, B * S, q));
    LTX2_TRY(linear(r, &a->k, x, B * S, k));
    LTX2_TRY(linear(r, &a->v, x, B * S, v));
    LTX2_TRY(ltx2_cpu_rms_norm(ctx, q, q, B * S, inner, a->q_norm, CONN_EPS));
    LTX2_TRY(ltx2_cpu_rms_norm(ctx, k, k, B * S, inner, a->k_norm, CONN_EPS));
    for (int64_t b = 0; b < B; b++) {
        float *qb = q + b * S * inner, *kb = k + b * S * inner;
        if (cfg->rope_type == LTX2_ROPE_SPLIT) {
            LTX2_TRY(ltx2_cpu_rope_apply_split(ctx, qb, cos_t, sin_t, 1, S, H, d));
            LTX2_TRY(ltx2_cpu_rope_apply_split(ctx, kb, cos_t, sin_t, 1, S, H, d));
        } else {
            LTX2_TRY(ltx2_cpu_rope_apply_interleaved(ctx, qb, cos_t, sin_t, 1, S, inner));
            LTX2_TRY(ltx2_cpu_rope_apply_interleaved(ctx, kb, cos_t, sin_t, 1, S, inner));
        }
    }
    LTX2_TRY(ltx2_cpu_attention(ctx, q, k, v, o, B, S, S, H, d, NULL, (float)(1.0 / sqrt((double)d))));
    if (a->gate.w) {
        LTX2_TRY(linear(r, &a->gate, x, B * S, g));
#pragma omp parallel for schedule(static)
        for (int64_t rr = 0; rr < B * S; rr++)
            for (int64_t h = 0; h < H; h++) {
                float gv = 2.0f * (float)(1.0 / (1.0 + exp(-(double)g[rr * H + h])));
                for (int64_t j = 0; j < d; j++) o[rr * inner + h * d + j] *= gv;
            }
    }
    return linear(r, &a->o, o, B * S, out);
}

/* One Embeddings1DConnector over features [B, S, D] -> out [B, S, D]. */
static ltx2_status connector_run(conn_run *r, const ltx2_connectors_config *cfg, const char *name,
                                 const ltx2_connector_config *cc, const ltx2_connector_w *w, const float *feat,
                                 const uint8_t *mask, int64_t B, int64_t S, float *out) {
    ltx2_context *ctx = r->ctx;
    const int64_t D = cc->inner_dim, n = B * S * D, R = LTX2_CONNECTOR_REGISTERS;
    const bool split = cfg->rope_type == LTX2_ROPE_SPLIT;
    const int64_t tab = split ? S * D / 2 : S * D;
    /* h, xn, y, ffn hidden (4D), attention scratch (4n + gates), positions, tables */
    size_t total = (size_t)(3 * n + 4 * n + 4 * n + B * S * cc->heads + S + 2 * tab);
    float *buf = malloc(total * sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s connector: %zu floats", name, total);
    float *h = buf, *xn = h + n, *y = xn + n, *ffh = y + n, *scr = ffh + 4 * n, *pos = scr + 4 * n + B * S * cc->heads;
    float *cos_t = pos + S, *sin_t = cos_t + tab;
    char nm[128];
    ltx2_status st = LTX2_OK;
    /* _replace_padded_with_learnable_registers: valid tokens compacted to the front, then
     * h[p] = flip(mask)[p] ? compacted[p] : registers[p mod R] (for left padding: tokens first). */
    for (int64_t b = 0; b < B; b++) {
        const uint8_t *m = mask + b * S;
        int64_t c = 0;
        for (int64_t t = 0; t < S; t++)
            if (m[t]) memcpy(xn + (b * S + c++) * D, feat + (b * S + t) * D, (size_t)D * sizeof(float));
        for (; c < S; c++) memset(xn + (b * S + c) * D, 0, (size_t)D * sizeof(float));
        for (int64_t p = 0; p < S; p++) {
            const float *src = m[S - 1 - p] ? xn + (b * S + p) * D : w->registers + (p % R) * D;
            memcpy(h + (b * S + p) * D, src, (size_t)D * sizeof(float));
        }
    }
    snprintf(nm, sizeof nm, "%s_connector.registers.out", name);
    dump3(r, nm, h, B, S, D);
    /* 1-D RoPE over positions 0..S-1 (no interval midpoint), shared by the batch */
    ltx2_rope_params rp = {.type = cfg->rope_type, .dim = D, .heads = cc->heads, .n_axes = 1,
                           .theta = cfg->rope_theta, .double_precision = cfg->rope_double_precision,
                           .use_middle = false};
    rp.max_pos[0] = cfg->max_pos;
    for (int64_t p = 0; p < S; p++) pos[p] = (float)p;
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    TRY_(ltx2_cpu_rope_tables(ctx, &rp, pos, 1, S, 1, cos_t, sin_t));
    for (int64_t j = 0; j < cc->num_layers; j++) {
        const ltx2_connector_block_w *bw = &w->blocks[j];
        TRY_(ltx2_cpu_rms_norm(ctx, h, xn, B * S, D, NULL, CONN_EPS));
        TRY_(conn_attn(r, cfg, &bw->attn1, xn, B, S, cos_t, sin_t, y, scr));
        for (int64_t i = 0; i < n; i++) h[i] = y[i] + h[i];
        TRY_(ltx2_cpu_rms_norm(ctx, h, xn, B * S, D, NULL, CONN_EPS));
        TRY_(linear(r, &bw->ff.proj_in, xn, B * S, ffh));
        TRY_(ltx2_cpu_gelu_tanh(ctx, ffh, ffh, B * S * 4 * D));
        TRY_(linear(r, &bw->ff.proj_out, ffh, B * S, y));
        for (int64_t i = 0; i < n; i++) h[i] = y[i] + h[i];
        snprintf(nm, sizeof nm, "%s_connector.transformer_1d_blocks.%lld.out", name, (long long)j);
        dump3(r, nm, h, B, S, D);
    }
    TRY_(ltx2_cpu_rms_norm(ctx, h, out, B * S, D, NULL, CONN_EPS));
    snprintf(nm, sizeof nm, "%s.encoding", name);
    dump3(r, nm, out, B, S, D);
#undef TRY_
done:
    free(buf);
    return st;
}

ltx2_status ltx2_connectors_forward(ltx2_context *ctx, const ltx2_connectors_weights *w, const ltx2_text_hidden *in,
                                    ltx2_dit_dump_fn dump, void *dump_user, float *video_out, float *audio_out,
                                    uint8_t *mask_out) {
    if (!w || !in || !in->hidden || !in->mask || !video_out || !audio_out || !mask_out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors forward: NULL argument");
    const ltx2_connectors_config *cfg = &w->cfg;
    const int64_t B = in->B, S = in->S, DL = in->D * in->L;
    if (B <= 0 || S <= 0 || in->D <= 0 || in->L <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "connectors forward: hidden states [%lld, %lld, %lld, %lld] must be "
                          "non-empty", (long long)B, (long long)S, (long long)in->D, (long long)in->L);
    if (DL != w->text_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "connectors forward: Gemma hidden size x layers = %lld x %lld = %lld, but the text "
                          "projection expects %lld",
                          (long long)in->D, (long long)in->L, (long long)DL, (long long)w->text_dim);
    if (S % LTX2_CONNECTOR_REGISTERS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "connectors forward: sequence length %lld must be a multiple of the %d learnable registers "
                          "(pad the prompt; the pipeline pads to 1024)",
                          (long long)S, LTX2_CONNECTOR_REGISTERS);
    conn_run r = {ctx, dump, dump_user};
    const int64_t Dv = cfg->video.inner_dim, Da = cfg->audio.inner_dim;
    float *normed = malloc((size_t)(B * S * DL) * sizeof(float));
    float *fv = malloc((size_t)(B * S * Dv) * sizeof(float));
    float *fa = cfg->fe == LTX2_TEXT_FE_V2 ? malloc((size_t)(B * S * Da) * sizeof(float)) : NULL;
    ltx2_status st = LTX2_OK;
    if (!normed || !fv || (cfg->fe == LTX2_TEXT_FE_V2 && !fa)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors forward: feature buffers");
        goto done;
    }
    if (cfg->fe == LTX2_TEXT_FE_V1) {
        fe_v1(in, normed);
        dump3(&r, "feature.normed", normed, B, S, DL);
        if ((st = linear(&r, &w->proj_video, normed, B * S, fv)) != LTX2_OK) goto done;
        fa = fv; /* one projection feeds both connectors */
    } else {
        fe_v2(in, normed);
        dump3(&r, "feature.normed", normed, B, S, DL);
        /* _rescale_norm: x * sqrt(out / D) before each projection (python double, applied in fp32) */
        float *scaled = malloc((size_t)(B * S * DL) * sizeof(float));
        if (!scaled) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors forward: rescale buffer");
            goto done;
        }
        const float sv = (float)sqrt((double)Dv / (double)in->D), sa = (float)sqrt((double)Da / (double)in->D);
        for (int64_t i = 0; i < B * S * DL; i++) scaled[i] = normed[i] * sv;
        st = linear(&r, &w->proj_video, scaled, B * S, fv);
        for (int64_t i = 0; st == LTX2_OK && i < B * S * DL; i++) scaled[i] = normed[i] * sa;
        if (st == LTX2_OK) st = linear(&r, &w->proj_audio, scaled, B * S, fa);
        free(scaled);
        if (st != LTX2_OK) goto done;
    }
    dump3(&r, "feature.video", fv, B, S, Dv);
    dump3(&r, "feature.audio", fa, B, S, Da);
    st = connector_run(&r, cfg, "video", &cfg->video, &w->video, fv, in->mask, B, S, video_out);
    if (st == LTX2_OK) st = connector_run(&r, cfg, "audio", &cfg->audio, &w->audio, fa, in->mask, B, S, audio_out);
    if (st == LTX2_OK) {
        /* the registers make every position valid: the returned mask is all ones (and the video
         * output's multiplication by it is the identity) */
        memset(mask_out, 1, (size_t)(B * S));
        if (dump) {
            float *mf = malloc((size_t)(B * S) * sizeof(float));
            if (mf) {
                for (int64_t i = 0; i < B * S; i++) mf[i] = 1.0f;
                int64_t s2[2] = {B, S};
                ltx2_tensor t = ltx2_tensor_make(mf, LTX2_F32, 2, s2);
                dump("mask", &t, dump_user);
                free(mf);
            }
        }
    }
done:
    free(normed);
    if (fa != fv) free(fa);
    free(fv);
    return st;
}
