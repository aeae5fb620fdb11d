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
} dit_stream;

typedef struct dit_run {
    ltx2_context *ctx;
    const ltx2_dit_weights *w;
    ltx2_dit_dump_fn dump;
    void *dump_user;
    const uint32_t *perturb; /* [B * num_layers] ltx2_dit_perturb_flag, or NULL */
} dit_run;

/* y[rows, L.out] = x[rows, L.in] W^T + b */
ltx2_status dit_linear(dit_run *r, const ltx2_dit_linear *L, const float *x, int64_t rows, float *y);
/* Dumps a contiguous f32 buffer under name when a dump callback is set. */
void dit_dump(dit_run *r, const char *name, const float *data, int ndim, const int64_t *shape);
void dit_dump3(dit_run *r, const char *name, const float *data, int64_t a, int64_t b, int64_t c);

/* One transformer block (index i) over both streams, in place. */
ltx2_status dit_block_forward(dit_run *r, int64_t i, dit_stream *v, dit_stream *a);

/* The forward with every block run by `block` instead of dit_block_forward (block NULL = the
 * default); the rest (embeddings, AdaLN, RoPE tables, output head) is unchanged. The hook lets
 * src/dist/dit_parallel.c run sharded blocks on a rank's slice of the tokens. */
typedef ltx2_status (*dit_block_fn)(dit_run *r, int64_t i, dit_stream *v, dit_stream *a, void *user);
ltx2_status dit_forward_blocks(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                               dit_block_fn block, void *block_user, float *video_out, float *audio_out);

#endif
