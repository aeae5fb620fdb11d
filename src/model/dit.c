/* DiT forward: preprocessing (patchify projection, caption projection, AdaLN-single timestep
 * embeddings, RoPE tables; ltx-core transformer_args.py), the blocks, and the output head
 * (model.py _process_output). AdaLN MLPs run once per distinct timestep value and tokens index
 * their row: identical to ltx-core's per-token evaluation (row-wise), without B*T*9*D memory. */
#include "model/dit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"
#include "model/dit_internal.h"

/* -ln(10000): the sinusoid's max_period exponent, rounded to fp32 as torch does. */
#define DIT_NEG_LN_MAX_PERIOD (-9.210340371976184)

void ltx2_dit_forward_params_init(ltx2_dit_forward_params *p) {
    memset(p, 0, sizeof *p);
    p->av_timestep = LTX2_DIT_AV_TS_CROSS_SIGMA;
}

ltx2_status ltx2_dit_perturb_set(ltx2_context *ctx, uint32_t *perturb, int64_t num_layers, int64_t b, uint32_t flags,
                                 const int64_t *blocks, int64_t n_blocks) {
    if (!perturb || num_layers <= 0 || b < 0 || (!blocks && n_blocks))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit perturbation: bad arguments");
    if (!blocks) {
        for (int64_t i = 0; i < num_layers; i++) perturb[b * num_layers + i] |= flags;
        return LTX2_OK;
    }
    for (int64_t j = 0; j < n_blocks; j++) {
        if (blocks[j] < 0 || blocks[j] >= num_layers)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit perturbation: block %lld out of range [0, %lld)",
                              (long long)blocks[j], (long long)num_layers);
        perturb[b * num_layers + blocks[j]] |= flags;
    }
    return LTX2_OK;
}

ltx2_status dit_linear(dit_run *r, const ltx2_dit_linear *L, const float *x, int64_t rows, float *y) {
    if (rows == 0) return LTX2_OK;
    return ltx2_cpu_gemm(r->ctx, rows, L->out, L->in, 1.0f, x, L->in, L->w, L->in, LTX2_B_NK, 0.0f, y, L->out, L->b);
}

void dit_dump(dit_run *r, const char *name, const float *data, int ndim, const int64_t *shape) {
    if (!r->dump) return;
    ltx2_tensor t = ltx2_tensor_make((void *)data, LTX2_F32, ndim, shape);
    r->dump(name, &t, r->dump_user);
}

void dit_dump3(dit_run *r, const char *name, const float *data, int64_t a, int64_t b, int64_t c) {
    int64_t s[3] = {a, b, c};
    dit_dump(r, name, data, 3, s);
}

/* AdaLayerNormSingle over n timesteps (already x multiplier): mod [U, rows*D], emb [U, D] for the
 * U distinct values; row[i] is value i's row. */
typedef struct adaln_res {
    float *mod, *emb;
    int64_t *row;
    int64_t U;
} adaln_res;

static void adaln_res_free(adaln_res *a) {
    free(a->mod);
    free(a->emb);
    free(a->row);
    memset(a, 0, sizeof *a);
}

static ltx2_status adaln_run(dit_run *r, const char *name, const ltx2_dit_adaln_w *a, const float *t, int64_t n,
                             adaln_res *res) {
    ltx2_context *ctx = r->ctx;
    const int64_t D = a->dim, W = a->rows * a->dim, C = LTX2_DIT_TIMESTEP_CHANNELS, half = C / 2;
    memset(res, 0, sizeof *res);
    res->row = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    float *uniq = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!res->row || !uniq) {
        free(uniq);
        adaln_res_free(res);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit %s: %lld timesteps", name, (long long)n);
    }
    int64_t U = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < U && memcmp(&uniq[j], &t[i], sizeof(float)) != 0) j++;
        if (j == U) uniq[U++] = t[i];
        res->row[i] = j;
    }
    res->U = U;
    float *sinus = malloc((size_t)(U * C) * sizeof(float));
    float *h = malloc((size_t)(U * D) * sizeof(float));
    res->emb = malloc((size_t)(U * D) * sizeof(float));
    res->mod = malloc((size_t)(U * W) * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!sinus || !h || !res->emb || !res->mod) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit %s: AdaLN buffers", name);
        goto done;
    }
    for (int64_t u = 0; u < U; u++) {
        for (int64_t j = 0; j < half; j++) {
            /* torch: exp(float(-ln 1e4) * j / 128) in fp32, t * f in fp32; cos first (flip) */
            float e = (float)DIT_NEG_LN_MAX_PERIOD * (float)j;
            e = e / (float)half;
            float f = (float)exp((double)e);
            float arg = uniq[u] * f;
            sinus[u * C + j] = (float)cos((double)arg);
            sinus[u * C + half + j] = (float)sin((double)arg);
        }
    }
    if ((st = dit_linear(r, &a->l1, sinus, U, h)) != LTX2_OK) goto done;
    if ((st = ltx2_cpu_silu(ctx, h, h, U * D)) != LTX2_OK) goto done;
    if ((st = dit_linear(r, &a->l2, h, U, res->emb)) != LTX2_OK) goto done;
    if ((st = ltx2_cpu_silu(ctx, res->emb, h, U * D)) != LTX2_OK) goto done;
    if ((st = dit_linear(r, &a->lin, h, U, res->mod)) != LTX2_OK) goto done;
    if (r->dump && n > 0) {
        /* expand to the reference's per-token rows */
        size_t big = (size_t)n * (size_t)(W > C ? W : C);
        float *ex = malloc(big * sizeof(float));
        if (!ex) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit %s: dump buffer", name);
            goto done;
        }
        char nm[160];
        int64_t s1[1] = {n};
        snprintf(nm, sizeof nm, "%s.in", name);
        dit_dump(r, nm, t, 1, s1);
        const struct {
            const char *suffix;
            const float *src;
            int64_t w;
        } parts[3] = {{"emb.time_proj.out", sinus, C}, {"emb.out", res->emb, D}, {"out", res->mod, W}};
        for (int p = 0; p < 3; p++) {
            for (int64_t i = 0; i < n; i++)
                memcpy(ex + i * parts[p].w, parts[p].src + res->row[i] * parts[p].w, (size_t)parts[p].w * sizeof(float));
            int64_t s2[2] = {n, parts[p].w};
            snprintf(nm, sizeof nm, "%s.%s", name, parts[p].suffix);
            dit_dump(r, nm, ex, 2, s2);
        }
        free(ex);
    }
done:
    free(uniq);
    free(sinus);
    free(h);
    if (st != LTX2_OK) adaln_res_free(res);
    return st;
}

/* Per-modality buffers owned by the forward. */
typedef struct modality_state {
    float *x, *context, *cap_h;
    uint8_t *mask;
    adaln_res ada, prompt, cross_ss, cross_gate;
    float *pe_cos, *pe_sin, *xpe_cos, *xpe_sin, *xpos;
    float *t_scaled, *cross_t, *gate_t, *prompt_t, *prompt_rows;
    int64_t n_gate; /* B (per-sample gate) or B * T (LTX2_DIT_AV_TS_OWN) */
} modality_state;

static void modality_state_free(modality_state *m) {
    free(m->x);
    free(m->context);
    free(m->cap_h);
    free(m->mask);
    adaln_res_free(&m->ada);
    adaln_res_free(&m->prompt);
    adaln_res_free(&m->cross_ss);
    adaln_res_free(&m->cross_gate);
    free(m->pe_cos);
    free(m->pe_sin);
    free(m->xpe_cos);
    free(m->xpe_sin);
    free(m->xpos);
    free(m->t_scaled);
    free(m->cross_t);
    free(m->gate_t);
    free(m->prompt_t);
    free(m->prompt_rows);
}

typedef struct modality_desc {
    const char *name;       /* "video" / "audio" */
    const char *pfx;        /* "" / "audio_" module-name prefix */
    const ltx2_dit_linear *patchify, *cap1, *cap2;
    const ltx2_dit_adaln_w *adaln, *prompt_adaln, *cross_ss_adaln, *cross_gate_adaln;
    int64_t in_ch, D, heads, n_axes;
    const float *max_pos;
} modality_desc;

static ltx2_status prepare(dit_run *r, const ltx2_dit_forward_params *p, const modality_desc *md,
                           const ltx2_dit_modality *in, const ltx2_dit_modality *other, modality_state *m,
                           dit_stream *s) {
    ltx2_context *ctx = r->ctx;
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = p->batch, T = in->T, S = in->S, D = md->D;
    char nm[160];
    if (!in->latent || !in->positions || !in->timesteps || !in->sigma || !in->context || T <= 0 || S <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: %s input incomplete (need latent, positions, "
                          "timesteps, sigma, context; T, S > 0)", md->name);
    memset(s, 0, sizeof *s);
    s->B = B;
    s->T = T;
    s->D = D;
    s->S = S;
    m->x = malloc((size_t)(B * T * D) * sizeof(float));
    m->context = malloc((size_t)(B * S * D) * sizeof(float));
    m->t_scaled = malloc((size_t)(B * T) * sizeof(float));
    m->cross_t = malloc((size_t)(B * T) * sizeof(float));
    m->gate_t = malloc((size_t)(B * T) * sizeof(float));
    m->prompt_t = malloc((size_t)B * sizeof(float));
    if (!m->x || !m->context || !m->t_scaled || !m->cross_t || !m->gate_t || !m->prompt_t)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: %s buffers", md->name);
    LTX2_TRY(dit_linear(r, md->patchify, in->latent, B * T, m->x));
    snprintf(nm, sizeof nm, "%spatchify_proj.out", md->pfx);
    dit_dump3(r, nm, m->x, B, T, D);

    /* timestep embeddings */
    const float mult = cfg->timestep_scale_multiplier;
    for (int64_t i = 0; i < B * T; i++) m->t_scaled[i] = in->timesteps[i] * mult;
    snprintf(nm, sizeof nm, "%sadaln_single", md->pfx);
    LTX2_TRY(adaln_run(r, nm, md->adaln, m->t_scaled, B * T, &m->ada));
    if (cfg->cross_attention_adaln) {
        for (int64_t b = 0; b < B; b++) m->prompt_t[b] = in->sigma[b] * mult;
        snprintf(nm, sizeof nm, "%sprompt_adaln_single", md->pfx);
        LTX2_TRY(adaln_run(r, nm, md->prompt_adaln, m->prompt_t, B, &m->prompt));
    }
    /* A/V cross-attention AdaLN: the gate from the other modality's sigma, except in the
     * diffusers use_cross_timestep=False mode (own per-token timesteps for everything) */
    if ((unsigned)p->av_timestep > (unsigned)LTX2_DIT_AV_TS_OWN)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: unknown av_timestep mode %d", (int)p->av_timestep);
    const float av_factor = (float)((double)cfg->av_ca_timestep_scale_multiplier / (double)mult);
    if (p->av_timestep == LTX2_DIT_AV_TS_OWN) {
        for (int64_t i = 0; i < B * T; i++) m->gate_t[i] = m->t_scaled[i] * av_factor;
        m->n_gate = B * T;
    } else {
        for (int64_t b = 0; b < B; b++) m->gate_t[b] = (other->sigma[b] * mult) * av_factor;
        m->n_gate = B;
    }
    int64_t n_cross;
    if (p->av_timestep == LTX2_DIT_AV_TS_CROSS_SIGMA) {
        for (int64_t b = 0; b < B; b++) m->cross_t[b] = other->sigma[b] * mult;
        n_cross = B;
    } else {
        memcpy(m->cross_t, m->t_scaled, (size_t)(B * T) * sizeof(float));
        n_cross = B * T;
    }
    const char *side = md->pfx[0] ? "audio" : "video";
    snprintf(nm, sizeof nm, "av_ca_%s_scale_shift_adaln_single", side);
    LTX2_TRY(adaln_run(r, nm, md->cross_ss_adaln, m->cross_t, n_cross, &m->cross_ss));
    snprintf(nm, sizeof nm, "av_ca_%s_gate_adaln_single", md->pfx[0] ? "v2a" : "a2v");
    LTX2_TRY(adaln_run(r, nm, md->cross_gate_adaln, m->gate_t, m->n_gate, &m->cross_gate));

    /* context (LTX-2.0: caption projection linear_1 -> GELU-tanh -> linear_2) */
    if (cfg->caption_projection) {
        m->cap_h = malloc((size_t)(B * S * D) * sizeof(float));
        if (!m->cap_h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: caption projection");
        LTX2_TRY(dit_linear(r, md->cap1, in->context, B * S, m->cap_h));
        LTX2_TRY(ltx2_cpu_gelu_tanh(ctx, m->cap_h, m->cap_h, B * S * D));
        LTX2_TRY(dit_linear(r, md->cap2, m->cap_h, B * S, m->context));
        snprintf(nm, sizeof nm, "%scaption_projection.out", md->pfx);
        dit_dump3(r, nm, m->context, B, S, D);
    } else {
        memcpy(m->context, in->context, (size_t)(B * S * D) * sizeof(float));
    }
    snprintf(nm, sizeof nm, "%s_args.context", md->name);
    dit_dump3(r, nm, m->context, B, S, D);
    if (in->context_mask) {
        m->mask = malloc((size_t)(B * S));
        if (!m->mask) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: mask");
        memcpy(m->mask, in->context_mask, (size_t)(B * S));
    }

    /* RoPE: own positions (all axes) and the A/V cross tables (time axis only) */
    ltx2_rope_params rp = {.type = cfg->rope_type, .dim = D, .heads = md->heads, .n_axes = (int)md->n_axes,
                           .theta = cfg->rope_theta,
                           .double_precision = cfg->rope_double_precision && !p->rope_ladder_f32,
                           .use_middle = true};
    for (int64_t a = 0; a < md->n_axes; a++) rp.max_pos[a] = md->max_pos[a];
    const int64_t tab = cfg->rope_type == LTX2_ROPE_SPLIT ? B * T * D / 2 : B * T * D;
    const int64_t Dx = cfg->audio_cross_attention_dim;
    const int64_t xtab = cfg->rope_type == LTX2_ROPE_SPLIT ? B * T * Dx / 2 : B * T * Dx;
    m->pe_cos = malloc((size_t)tab * sizeof(float));
    m->pe_sin = malloc((size_t)tab * sizeof(float));
    m->xpe_cos = malloc((size_t)xtab * sizeof(float));
    m->xpe_sin = malloc((size_t)xtab * sizeof(float));
    m->xpos = malloc((size_t)(B * T * 2) * sizeof(float));
    if (!m->pe_cos || !m->pe_sin || !m->xpe_cos || !m->xpe_sin || !m->xpos)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: %s RoPE tables", md->name);
    LTX2_TRY(ltx2_cpu_rope_tables(ctx, &rp, in->positions, B, T, 2, m->pe_cos, m->pe_sin));
    for (int64_t b = 0; b < B; b++)
        memcpy(m->xpos + b * T * 2, in->positions + b * md->n_axes * T * 2, (size_t)(T * 2) * sizeof(float));
    ltx2_rope_params xp = rp;
    xp.dim = Dx;
    xp.n_axes = 1;
    xp.max_pos[0] = cfg->max_pos[0] > cfg->audio_max_pos ? cfg->max_pos[0] : cfg->audio_max_pos;
    LTX2_TRY(ltx2_cpu_rope_tables(ctx, &xp, m->xpos, B, T, 2, m->xpe_cos, m->xpe_sin));
    if (r->dump) {
        int64_t sh[4] = {B, md->heads, T, D / (2 * md->heads)}, xs[4] = {B, md->heads, T, Dx / (2 * md->heads)};
        int64_t shi[3] = {B, T, D}, xsi[3] = {B, T, Dx};
        bool split = cfg->rope_type == LTX2_ROPE_SPLIT;
        snprintf(nm, sizeof nm, "%s_args.pe.cos", md->name);
        dit_dump(r, nm, m->pe_cos, split ? 4 : 3, split ? sh : shi);
        snprintf(nm, sizeof nm, "%s_args.pe.sin", md->name);
        dit_dump(r, nm, m->pe_sin, split ? 4 : 3, split ? sh : shi);
        snprintf(nm, sizeof nm, "%s_args.cross_pe.cos", md->name);
        dit_dump(r, nm, m->xpe_cos, split ? 4 : 3, split ? xs : xsi);
        snprintf(nm, sizeof nm, "%s_args.cross_pe.sin", md->name);
        dit_dump(r, nm, m->xpe_sin, split ? 4 : 3, split ? xs : xsi);
    }
    s->x = m->x;
    s->context = m->context;
    s->ctx_mask = m->mask;
    s->mod = m->ada.mod;
    s->row_mod = m->ada.row;
    s->prompt_mod = NULL;
    if (cfg->cross_attention_adaln) {
        /* expand the per-sample prompt AdaLN rows to [B, 2D] */
        m->prompt_rows = malloc((size_t)(B * 2 * D) * sizeof(float));
        if (!m->prompt_rows) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: prompt AdaLN");
        for (int64_t b = 0; b < B; b++)
            memcpy(m->prompt_rows + b * 2 * D, m->prompt.mod + m->prompt.row[b] * 2 * D,
                   (size_t)(2 * D) * sizeof(float));
        s->prompt_mod = m->prompt_rows;
    }
    s->cross_ss = m->cross_ss.mod;
    s->row_cross_ss = NULL;
    /* cross scale/shift rows: per token (own timesteps) or per sample */
    if (n_cross == B * T) s->row_cross_ss = m->cross_ss.row;
    s->pe_cos = m->pe_cos;
    s->pe_sin = m->pe_sin;
    s->xpe_cos = m->xpe_cos;
    s->xpe_sin = m->xpe_sin;
    return LTX2_OK;
}

/* Output head: LayerNorm (no affine) * (1 + table[1] + e) + (table[0] + e), then proj_out. */
static ltx2_status output_head(dit_run *r, const char *pfx, const float *sst, const adaln_res *ada,
                               const ltx2_dit_linear *proj, dit_stream *s, float *out) {
    const int64_t B = s->B, T = s->T, D = s->D;
    char nm[96];
    float *y = malloc((size_t)(B * T * D) * sizeof(float));
    if (!y) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit forward: output head");
    ltx2_status st = ltx2_cpu_layer_norm(r->ctx, s->x, y, B * T, D, NULL, NULL, r->w->cfg.norm_eps);
    if (st == LTX2_OK) {
        snprintf(nm, sizeof nm, "%snorm_out.out", pfx);
        dit_dump3(r, nm, y, B, T, D);
        for (int64_t i = 0; i < B * T; i++) {
            const float *e = ada->emb + ada->row[i] * D;
            float *yr = y + i * D;
            for (int64_t c = 0; c < D; c++) {
                float shift = sst[c] + e[c];
                float scale = sst[D + c] + e[c];
                yr[c] = yr[c] * (1.0f + scale) + shift;
            }
        }
        st = dit_linear(r, proj, y, B * T, out);
    }
    if (st == LTX2_OK) {
        snprintf(nm, sizeof nm, "%sproj_out.out", pfx);
        dit_dump3(r, nm, out, B, T, proj->out);
    }
    free(y);
    return st;
}

ltx2_status ltx2_dit_forward(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                             float *video_out, float *audio_out) {
    return dit_forward_blocks(ctx, w, p, NULL, NULL, video_out, audio_out);
}

ltx2_status dit_forward_blocks(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                               dit_block_fn block, void *block_user, float *video_out, float *audio_out) {
    if (!w || !p || !video_out || !audio_out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: NULL argument");
    if (p->batch <= 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: batch must be > 0");
    const ltx2_dit_config *cfg = &w->cfg;
    /* the text K/V cache serves dit_block_forward only (a block hook computes its own K/V) */
    dit_run r = {ctx, w, p->dump, p->dump_user, p->perturb, block ? NULL : p->text_cache, p->stg_blend_every_block};
    modality_desc vd = {"video", "", &w->patchify, &w->caption1, &w->caption2, &w->adaln, &w->prompt_adaln,
                        &w->av_video_ss, &w->av_a2v_gate, cfg->in_channels, cfg->inner_dim, cfg->heads, 3,
                        cfg->max_pos};
    modality_desc ad = {"audio", "audio_", &w->audio_patchify, &w->audio_caption1, &w->audio_caption2,
                        &w->audio_adaln, &w->audio_prompt_adaln, &w->av_audio_ss, &w->av_v2a_gate,
                        cfg->audio_in_channels, cfg->audio_inner_dim, cfg->audio_heads, 1, &cfg->audio_max_pos};
    modality_state vm, am;
    memset(&vm, 0, sizeof vm);
    memset(&am, 0, sizeof am);
    dit_stream vs, as;
    ltx2_status st = prepare(&r, p, &vd, &p->video, &p->audio, &vm, &vs);
    if (st == LTX2_OK) st = prepare(&r, p, &ad, &p->audio, &p->video, &am, &as);
    if (st == LTX2_OK) {
        vs.cross_gate = vm.cross_gate.mod; /* [U<=B, D], rows by sample */
        as.cross_gate = am.cross_gate.mod;
    }
    /* The gate rows are per sample but deduplicated: expand to [B, D]. */
    float *vg = NULL, *ag = NULL;
    if (st == LTX2_OK) {
        const int64_t B = p->batch, Dv = cfg->inner_dim, Da = cfg->audio_inner_dim;
        vg = malloc((size_t)(B * Dv) * sizeof(float));
        ag = malloc((size_t)(B * Da) * sizeof(float));
        float *vss = NULL, *ass = NULL;
        if (!vg || !ag) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: gates");
        if (st == LTX2_OK && vm.n_gate == B) {
            for (int64_t b = 0; b < B; b++) {
                memcpy(vg + b * Dv, vm.cross_gate.mod + vm.cross_gate.row[b] * Dv, (size_t)Dv * sizeof(float));
                memcpy(ag + b * Da, am.cross_gate.mod + am.cross_gate.row[b] * Da, (size_t)Da * sizeof(float));
            }
            vs.cross_gate = vg;
            as.cross_gate = ag;
        } else if (st == LTX2_OK) {
            /* per-token gates: the blocks pick each token's deduplicated row */
            vs.row_cross_gate = vm.cross_gate.row;
            as.row_cross_gate = am.cross_gate.row;
        }
        /* per-sample scale/shift rows: index by sample through a [B] row map */
        if (st == LTX2_OK && !vs.row_cross_ss) {
            vss = malloc((size_t)(B * 4 * Dv) * sizeof(float));
            ass = malloc((size_t)(B * 4 * Da) * sizeof(float));
            if (!vss || !ass) {
                free(vss);
                free(ass);
                st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: cross scale/shift");
            } else {
                for (int64_t b = 0; b < B; b++) {
                    memcpy(vss + b * 4 * Dv, vm.cross_ss.mod + vm.cross_ss.row[b] * 4 * Dv,
                           (size_t)(4 * Dv) * sizeof(float));
                    memcpy(ass + b * 4 * Da, am.cross_ss.mod + am.cross_ss.row[b] * 4 * Da,
                           (size_t)(4 * Da) * sizeof(float));
                }
                free(vm.cross_ss.mod);
                free(am.cross_ss.mod);
                vm.cross_ss.mod = vss;
                am.cross_ss.mod = ass;
                vs.cross_ss = vss;
                as.cross_ss = ass;
            }
        }
    }
    int64_t *text_entry = NULL;
    if (st == LTX2_OK && r.text_cache) {
        text_entry = malloc((size_t)(2 * p->batch) * sizeof(int64_t));
        if (!text_entry) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: text cache binding");
        dit_text_cache_begin(r.text_cache);
        if (st == LTX2_OK) st = dit_text_cache_bind(ctx, r.text_cache, w, 0, &vs, text_entry);
        if (st == LTX2_OK) st = dit_text_cache_bind(ctx, r.text_cache, w, 1, &as, text_entry + p->batch);
        if (st == LTX2_OK) {
            vs.text_entry = text_entry;
            vs.text_stream = 0;
            as.text_entry = text_entry + p->batch;
            as.text_stream = 1;
        }
    }
    for (int64_t i = 0; st == LTX2_OK && i < cfg->num_layers; i++)
        st = block ? block(&r, i, &vs, &as, block_user) : dit_block_forward(&r, i, &vs, &as);
    if (st == LTX2_OK) st = output_head(&r, "", w->sst, &vm.ada, &w->proj_out, &vs, video_out);
    if (st == LTX2_OK) st = output_head(&r, "audio_", w->audio_sst, &am.ada, &w->audio_proj_out, &as, audio_out);
    free(text_entry);
    free(vg);
    free(ag);
    modality_state_free(&vm);
    modality_state_free(&am);
    return st;
}
