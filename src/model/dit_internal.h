/* Shared pieces of the DiT forward (dit.c: embeddings, preprocessing, output head; dit_block.c:
 * attention and the transformer block). Private to src/model/dit*.c. */
#ifndef LTX2_MODEL_DIT_INTERNAL_H
#define LTX2_MODEL_DIT_INTERNAL_H

#include "model/dit.h"

/* Per-modality state the blocks read (ltx-core's TransformerArgs). AdaLN outputs are kept once per
 * distinct timestep value: row_* maps a token (b * T + t) or a sample to its row. */
typedef struct dit_stream {
    int64_t B, T, D, S;
    float *x;                  /* [B, T, D] residual stream */
    const float *context;      /* [B, S, D] after the caption projection */
    const uint8_t *ctx_mask;   /* [B, S] or NULL */
    const float *mod;          /* [U, rows * D] block AdaLN values (adaln_single.linear) */
    const int64_t *row_mod;    /* [B * T] */
    const float *prompt_mod;   /* [B, 2 * D] (LTX-2.3) */
    const float *cross_ss;     /* [U, 4 * D] A/V scale/shift */
    const int64_t *row_cross_ss; /* [B * T] */
    const float *cross_gate;   /* [B, D] A/V gate, or [U, D] with row_cross_gate */
    const int64_t *row_cross_gate; /* [B * T] per-token gate rows (LTX2_DIT_AV_TS_OWN), else NULL */
    const float *pe_cos, *pe_sin;       /* self-attention RoPE */
    const float *xpe_cos, *xpe_sin;     /* A/V cross-attention RoPE */
    /* Text K/V cache binding (dit_text_cache.c): the cache entry of each sample for this stream
     * ([B], -1 = uncached), or NULL when no cache is in use. */
    const int64_t *text_entry;
    int text_stream; /* 0 video, 1 audio */
} dit_stream;

typedef struct dit_run {
    ltx2_context *ctx;
    const ltx2_dit_weights *w;
    ltx2_dit_dump_fn dump;
    void *dump_user;
    const uint32_t *perturb; /* [B * num_layers] ltx2_dit_perturb_flag, or NULL */
    ltx2_dit_text_cache *text_cache; /* NULL = none */
    bool stg_blend_every_block;      /* ltx2_dit_forward_params.stg_blend_every_block */
} dit_run;

/* MaxDiffusion's STG blend o = v + m * (o - v) over n floats (m 0 or 1): one rounding more than a
 * plain select, e.g. o 1e-8, v 3, m 1 gives 0. */
void dit_stg_blend(float *o, const float *v, int64_t n, float m);

/* Where a modulation value comes from: a learned table row plus an AdaLN output row chosen per
 * token (row_tok) or per sample (row_tok NULL). */
typedef struct dit_ada_src {
    const float *table; /* [rows, D] */
    const float *mod;   /* [U, W] */
    int64_t W;
    const int64_t *row_tok;
} dit_ada_src;

/* out = xn * (1 + (table[js] + mod[js])) + (table[jh] + mod[jh]) over [B, T, D], the reference's
 * order of operations (shared by the single-rank block and dist/dit_parallel.c). */
void dit_modulate(float *out, const float *xn, int64_t B, int64_t T, int64_t D, const dit_ada_src *s, int64_t js,
                  int64_t jh);
/* x += y * (table[jg] + mod[jg]) */
void dit_gated_add(float *x, const float *y, int64_t B, int64_t T, int64_t D, const dit_ada_src *s, int64_t jg);
/* LTX-2.3 prompt AdaLN of the text context: ctx_mod[B, S, D] = context * (1 + scale) + shift, with
 * shift / scale = prompt_sst rows 0 / 1 + s->prompt_mod per sample. */
void dit_prompt_modulate(float *ctx_mod, const dit_stream *s, const float *prompt_sst, int64_t B, int64_t D);
/* skip[b] = 1 when sample b has STG flag `flag` in block i; returns how many samples do. */
int64_t dit_perturbed(const dit_run *r, int64_t i, int64_t B, uint32_t flag, uint8_t *skip);

/* y[rows, L.out] = x[rows, L.in] W^T + b */
ltx2_status dit_linear(dit_run *r, const ltx2_dit_linear *L, const float *x, int64_t rows, float *y);
/* Dumps a contiguous f32 buffer under name when a dump callback is set. */
void dit_dump(dit_run *r, const char *name, const float *data, int ndim, const int64_t *shape);
void dit_dump3(dit_run *r, const char *name, const float *data, int64_t a, int64_t b, int64_t c);

/* Binds the samples of stream s (context [B,S,D] after the caption projection, prompt rows [B,2D]
 * or NULL) to cache entries, creating empty ones for new keys; entry_out [B]. Call
 * dit_text_cache_begin once per forward first (entries bound in this forward are never evicted). */
void dit_text_cache_begin(ltx2_dit_text_cache *c);
ltx2_status dit_text_cache_bind(ltx2_context *ctx, ltx2_dit_text_cache *c, const ltx2_dit_weights *w, int stream,
                                const dit_stream *s, int64_t *entry_out);
/* K [B,S,inner] (after k_norm) and V [B,S,inner] of the text cross-attention `a` of block i,
 * from the cache where filled, else projected (one projection per entry) and stored. */
ltx2_status dit_text_kv(dit_run *r, const dit_stream *s, int64_t i, const ltx2_dit_attn_w *a, const float *context,
                        float *k, float *v);

/* One transformer block (index i) over both streams, in place. */
ltx2_status dit_block_forward(dit_run *r, int64_t i, dit_stream *v, dit_stream *a);

/* The forward with every block run by `block` instead of dit_block_forward (block NULL = the
 * default); the rest (embeddings, AdaLN, RoPE tables, output head) is unchanged. The hook lets
 * src/dist/dit_parallel.c run sharded blocks on a rank's slice of the tokens. */
typedef ltx2_status (*dit_block_fn)(dit_run *r, int64_t i, dit_stream *v, dit_stream *a, void *user);
ltx2_status dit_forward_blocks(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                               dit_block_fn block, void *block_user, float *video_out, float *audio_out);

#endif
