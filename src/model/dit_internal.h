/* Shared pieces of the one DiT forward (dit.c: inputs, embeddings, AdaLN, RoPE tables, output head;
 * dit_block.c: attention and the transformer block; dit_text_cache.c: the text K/V cache). Every
 * tensor here lives on the weights' backend; the forward is written once against the op table and
 * runs on the CPU reference, CUDA and the kernel emulator alike. Parallel execution
 * (dit_parallel.c) enters through dit_hooks. Private to src/model/dit*.c. */
#ifndef LTX2_MODEL_DIT_INTERNAL_H
#define LTX2_MODEL_DIT_INTERNAL_H

#include "backend/backend_pool.h"
#include "model/dit.h"

/* Which attention of a block, for a sequence split: everything local (text, audio, a2v), or
 * sequence-sharded video tokens (self-attention: Q, K, V; v2a: K, V). */
typedef enum dit_attn_kind { DIT_ATTN_LOCAL = 0, DIT_ATTN_SEQ_SELF, DIT_ATTN_SEQ_KV } dit_attn_kind;

/* How parallel execution enters the forward. A NULL hook (or no hooks) is one rank. */
typedef struct dit_hooks {
    void *user;
    /* This rank's tensor-parallel position: attention weights hold heads [rank * H / size, ..). */
    int tp_rank, tp_size;
    /* Before block i: *bw gets the weights block i runs on (this rank's shards; gathered under
     * FSDP). block_end is called after it (success or not). */
    ltx2_status (*block_begin)(void *user, ltx2_context *ctx, int64_t i, const ltx2_dit_block_w **bw);
    void (*block_end)(void *user, int64_t i);
    /* y holds this rank's partial product of a row-parallel linear: sum it over the tensor group. */
    ltx2_status (*reduce)(void *user, ltx2_context *ctx, ltx2_tensor *y);
    /* x [rows, heads * head_dim] of this rank's heads: RMSNorm across every rank's heads, in place,
     * with w this rank's slice of the norm weight; full_dim the whole width. */
    ltx2_status (*qk_norm)(void *user, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *w, int64_t full_dim,
                           float eps);
    /* Attention of a sequence-sharded kind over the whole sequence: q, k normed and rotated;
     * out like q. */
    ltx2_status (*attend)(void *user, ltx2_context *ctx, dit_attn_kind kind, const ltx2_tensor *q,
                          const ltx2_tensor *k, const ltx2_tensor *v, int64_t heads, ltx2_tensor *out);
} dit_hooks;

/* Per-modality state the blocks read (ltx-core's TransformerArgs). AdaLN outputs are kept once per
 * distinct timestep value (f32 [U, k * D]) and every token indexes its row (i32 [B * T]). */
typedef struct dit_stream {
    int64_t B, T, D, S;
    ltx2_tensor x;        /* [B, T, D] residual stream */
    ltx2_tensor context;  /* [B, S, D] after the caption projection */
    ltx2_tensor mask;     /* [B, S] u8, data NULL: every text token attends */
    ltx2_tensor ada, ada_rows;               /* [U, rows * D], [B * T] */
    ltx2_tensor cross_ss, cross_ss_rows;     /* [U, 4 * D], [B * T] */
    ltx2_tensor cross_gate, cross_gate_rows; /* [U, D], [B * T] */
    ltx2_tensor prompt, prompt_rows;         /* [U, 2 * D], [B * S] (LTX-2.3) */
    ltx2_tensor pe_cos, pe_sin;              /* self-attention RoPE, this rank's heads */
    ltx2_tensor xpe_cos, xpe_sin;            /* A/V cross-attention RoPE, this rank's heads */
    /* Text K/V cache binding (dit_text_cache.c): each sample's entry ([B], -1 = uncached), or NULL. */
    const int64_t *text_entry;
    int text_stream; /* 0 video, 1 audio */
    /* every sample's text K/V are cached for every block: context was not made (no block reads it) */
    bool text_cached;
    /* [1, 2 * D] f32, scale 0 then shift -0: the LTX-2.0 text attention's weightless RMSNorm as a
     * modulation (x * (1 + 0) + -0 is x exactly), so it writes the fp8 inputs of that attention's
     * Q like the other modulations; data NULL when r->fp8_fuse is off or the model is 2.3 */
    ltx2_tensor ident_mod;
} dit_stream;

typedef struct dit_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    ltx2_bpool *pool;
    ltx2_dtype dt; /* activations: the weights' dtype (f32 on the CPU, bf16 on CUDA) */
    const ltx2_dit_weights *w;
    const dit_hooks *hooks; /* NULL: one rank */
    ltx2_dit_dump_fn dump;
    void *dump_user;
    const uint32_t *perturb;         /* [B * num_layers] ltx2_dit_perturb_flag, or NULL */
    ltx2_dit_text_cache *text_cache; /* NULL = none */
    ltx2_dit_rope_cache *rope_cache; /* NULL = none */
    bool stg_blend_every_block;      /* ltx2_dit_forward_params.stg_blend_every_block */
    bool tpu;                        /* ltx2_dit_forward_params.precision_tpu */
    bool timestep_xla;               /* ltx2_dit_forward_params.timestep_xla */
    /* the modulations write the fp8 inputs of the fp8 Linears they feed (dit_act); off under
     * ltx2_dit_forward_params.fp8_separate_quant, --precision tpu and dumps */
    bool fp8_fuse;
    bool attn_fp8; /* ltx2_dit_forward_params.attention_fp8 */
} dit_run;

/* An activation as its producer left it for the Linears that read it: its value x and the fp8
 * copies it wrote for fp8 Linears (ltx2_backend_norm_modulate_fp8), one per input scale. A Linear
 * whose input scale has a copy reads it instead of quantising x. has_x false: x was not written
 * (every reader has a copy) and holds garbage. */
typedef struct dit_act {
    const ltx2_tensor *x;
    bool has_x;
    int n;
    float scale[LTX2_FP8_OUTS_MAX];
    ltx2_tensor q[LTX2_FP8_OUTS_MAX];
} dit_act;

/* x, nothing else. */
dit_act dit_act_of(const ltx2_tensor *x);

/* Activation pool (dit_act_pool.c; ltx2_dit_act_pool in model/dit.h). A call's shape: batch, video
 * and audio tokens, video and audio text tokens. */
#define DIT_ACT_KEY 5
/* The pool for a call of shape key on be, emptied first when the last call's shape or backend
 * differed. */
ltx2_status dit_act_pool_begin(ltx2_context *ctx, ltx2_dit_act_pool *a, const ltx2_backend *be,
                               const int64_t key[DIT_ACT_KEY], ltx2_bpool **pool);
/* After the call (st its result): every buffer released; those it did not use freed (all on error). */
void dit_act_pool_end(ltx2_dit_act_pool *a, ltx2_status st);

/* A scratch tensor of the run's pool in dtype dt. */
ltx2_status dit_tensor(dit_run *r, ltx2_dtype dt, int ndim, const int64_t *shape, ltx2_tensor *out);
/* t as f32: t itself when it is f32, else a converted scratch copy. */
ltx2_status dit_f32(dit_run *r, const ltx2_tensor *t, ltx2_tensor *out);
/* y[rows.., L.out] = x[rows.., L.in] W^T + b (then GELU-tanh when gelu). */
ltx2_status dit_linear(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y);
/* dit_linear of an activation: an fp8 L reads the copy for its input scale when a has one. */
ltx2_status dit_linear_act(dit_run *r, const ltx2_dit_linear *L, const dit_act *a, bool gelu, ltx2_tensor *y);
/* A row-parallel linear (attention out, FFN out): under tensor parallelism the partial products
 * are summed over the tensor group and the bias added once; otherwise dit_linear. */
ltx2_status dit_linear_out(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, ltx2_tensor *y);
/* dit_linear_out of an activation (its fp8 copy read when L's input scale has one). */
ltx2_status dit_linear_out_act(dit_run *r, const ltx2_dit_linear *L, const dit_act *a, ltx2_tensor *y);
/* Dumps t (any float dtype, contiguous) as f32 under name when a dump callback is set. */
ltx2_status dit_dump(dit_run *r, const char *name, const ltx2_tensor *t);
/* A host f32 array dumped under name. */
void dit_dump_host(dit_run *r, const char *name, const float *data, int ndim, const int64_t *shape);
/* skip[b] = 1 when sample b has STG flag `flag` in block i; returns how many samples do. */
int64_t dit_perturbed(const dit_run *r, int64_t i, int64_t B, uint32_t flag, uint8_t *skip);
/* MaxDiffusion's STG blend o = v + m * (o - v) over o, v [B, ...] (m 0 for samples in skip, else 1):
 * one rounding more than a plain select, e.g. o 1e-8, v 3, m 1 gives 0. */
ltx2_status dit_stg_blend(dit_run *r, ltx2_tensor *o, const ltx2_tensor *v, const uint8_t *skip);
/* A view of sample b of a [B, ...] tensor (contiguous), keeping its rank with dim 0 of size 1. */
ltx2_tensor dit_sample(const ltx2_tensor *t, int64_t b);

/* RoPE table cache (dit_rope_cache.c; see ltx2_dit_rope_cache in model/dit.h). The key of one
 * stream's tables; dit_rope_key_init zeroes it first, so the parameter structs compare bytewise. */
typedef struct dit_rope_key {
    int stream; /* 0 video, 1 audio */
    const ltx2_backend *be;
    int tp_rank, tp_size;
    ltx2_rope_params rp, xp; /* own positions, the A/V cross axis */
    int64_t T, n_pos;
    const float *pos; /* [n_pos] one sample's positions */
} dit_rope_key;
/* One sample's tables on the backend (f32, shapes as upload_rope's with B = 1). */
typedef struct dit_rope_tables {
    ltx2_tensor cos, sin, xcos, xsin;
} dit_rope_tables;
/* One sample's local tables on the host, and their shapes. */
typedef struct dit_rope_host {
    const float *cos, *sin, *xcos, *xsin;
    int nd;
    int64_t shape[4], xshape[4];
} dit_rope_host;
void dit_rope_key_init(dit_rope_key *k);
/* The stream's tables when its entry has this key (counted as a hit), else NULL. */
const dit_rope_tables *dit_rope_cache_find(ltx2_dit_rope_cache *c, const dit_rope_key *k);
/* Replaces the stream's entry with h uploaded to k->be under key k; *out the stored tables. */
ltx2_status dit_rope_cache_store(ltx2_context *ctx, ltx2_dit_rope_cache *c, const dit_rope_key *k,
                                 const dit_rope_host *h, const dit_rope_tables **out);

/* Text K/V cache. dit_text_cache_begin once per forward (entries bound in it are never evicted);
 * bind the samples of one stream by the host inputs the K/V are a function of: the raw context
 * rows ctx_rows [B, S, W] and (LTX-2.3, else NULL) the prompt timesteps prompt_t [B]. */
void dit_text_cache_begin(ltx2_dit_text_cache *c);
ltx2_status dit_text_cache_bind(ltx2_context *ctx, ltx2_dit_text_cache *c, const ltx2_dit_weights *w, int stream,
                                int64_t B, int64_t S, int64_t W, const float *ctx_rows, const float *prompt_t,
                                int64_t *entry_out);
/* K [B, S, inner] (after k_norm) and V [B, S, inner] of the text cross-attention a of block i over
 * context [B, S, Dc], from the cache where filled, else projected (once per entry) and stored. */
/* Whether entry holds the K/V of every block (a forward through it needs no context). */
bool dit_text_cache_complete(const ltx2_dit_text_cache *c, int64_t entry);
/* Counts a stream whose context a forward did not make (ltx2_dit_text_cache_stats.contexts_skipped). */
void dit_text_cache_note_skip(ltx2_dit_text_cache *c);
ltx2_status dit_text_kv(dit_run *r, const dit_stream *s, int64_t i, const ltx2_dit_attn_w *a,
                        const ltx2_tensor *context, ltx2_tensor *k, ltx2_tensor *v);

/* ---- --precision tpu: MaxDiffusion's bf16 arithmetic (dit_tpu.c) ---- */

/* t (f32, contiguous) rounded to bf16 values in place. */
ltx2_status dit_bf16(dit_run *r, ltx2_tensor *t);
/* flax nnx.Linear(dtype=bf16) (then jax.nn.gelu(approximate=True) when gelu) in bf16 arithmetic. */
ltx2_status dit_tpu_linear(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y);
/* y = jax.nn.silu(x) on a bf16 x (y may be x). */
ltx2_status dit_tpu_silu(dit_run *r, const ltx2_tensor *x, ltx2_tensor *y);
/* o [.., heads*d] *= 2 * sigmoid(logits [.., heads]) in bf16 (LTX2Attention's gated attention). */
ltx2_status dit_tpu_head_gate(dit_run *r, ltx2_tensor *o, const ltx2_tensor *logits, int64_t heads);
/* The f32 [U, D] row views scale and shift of a bf16 modulation table replaced by contiguous
 * scratch: scale by bf16(1 + scale) - 1, so norm_modulate's f32 (1 + scale) is the bf16 `1 + scale`
 * MaxDiffusion multiplies by; shift by a copy (norm_modulate takes rows equally far apart). */
ltx2_status dit_tpu_scale_shift(dit_run *r, ltx2_tensor *scale, ltx2_tensor *shift);
/* The residual update x += y * gate (gate NULL: x += y) with MaxDiffusion's dtypes: the product is
 * rounded when the gate comes from a bf16 table (gate_bf16), the sum when x is a bf16 stream. */
ltx2_status dit_tpu_gated_add(dit_run *r, ltx2_tensor *x, const ltx2_tensor *y, const ltx2_tensor *gate,
                              const ltx2_mod_rows *m, bool gate_bf16, bool x_bf16);

/* One transformer block (index i, weights bw) over both streams, in place. */
ltx2_status dit_block_forward(dit_run *r, int64_t i, const ltx2_dit_block_w *bw, dit_stream *v, dit_stream *a);

/* The forward with parallel hooks (NULL: one rank). */
ltx2_status dit_forward_hooked(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                               const dit_hooks *hooks, float *video_out, float *audio_out);

#endif
