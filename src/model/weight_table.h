/* A model's weights as one table of named tensors (checkpoint name, shape, and the tensor view in the
 * model's weight struct it fills), and what every loader does with such a table: place the tensors
 * in one allocation on a backend in one dtype, fill them from a checkpoint (every tensor checked;
 * missing, mis-shaped, unsupported-dtype and unexpected tensors gathered into one message naming
 * the first few of each), copy them to another backend, or fill them with seeded normals. A device
 * is filled tensor by tensor through a host staging buffer of the largest tensor: no full host copy. */
#ifndef LTX2_MODEL_WEIGHT_TABLE_H
#define LTX2_MODEL_WEIGHT_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "io/safetensors.h"

#define LTX2_WNAME_CAP 192
/* Every tensor of a store starts this many bytes apart at least (cuBLASLt's preferred operand
 * alignment; also a cache line multiple for the CPU GEMM's panels). */
#define LTX2_W_TENSOR_ALIGN 256

/* A torch Linear: y = x W^T + b. */
typedef struct ltx2_linear {
    ltx2_tensor w;  /* [out, in]; w.data NULL when absent */
    ltx2_tensor b;  /* [out]; b.data NULL when absent or bias-free */
    int64_t out, in;
    /* w in fp8 e4m3 (ltx-core's FP8Linear, fp8_scaled_mm): W = w * w_scale, and x enters the GEMM
     * quantised per tensor as e4m3(x / x_scale) (a static input scale). Unused otherwise. */
    float w_scale, x_scale;
} ltx2_linear;

static inline bool ltx2_linear_present(const ltx2_linear *L) { return L->w.data != NULL; }

typedef struct ltx2_wspec {
    char name[LTX2_WNAME_CAP]; /* relative to the load prefix */
    int ndim;
    int64_t shape[2];
    ltx2_tensor *dst;
    bool layer; /* a tensor a tensor-parallel rank reads only a shard of (skipped by replicated loads) */
    bool matrix; /* a Linear's weight: stored in the store's matrix dtype */
    bool fp8;    /* a matrix stored as fp8 e4m3 with its scales (decided by the layout) */
    float *w_scale, *x_scale; /* a matrix's ltx2_linear scales (filled when fp8) */
} ltx2_wspec;

typedef struct ltx2_wtable {
    ltx2_wspec *v;
    size_t n, cap;
    bool oom; /* an add failed: the table is incomplete */
} ltx2_wtable;

void ltx2_wtable_add(ltx2_wtable *t, const char *name, int ndim, int64_t s0, int64_t s1, ltx2_tensor *dst);
/* "<prefix>.weight" [out, in] and, with bias, "<prefix>.bias" [out]; sets lin->out / in (and
 * nothing else: building a table over a copy of loaded weights leaves their views to read). */
void ltx2_wtable_add_linear(ltx2_wtable *t, const char *prefix, int64_t out, int64_t in, bool bias, ltx2_linear *lin);
/* Flags the entries from index n0 on as layer tensors. */
void ltx2_wtable_mark_layers(ltx2_wtable *t, size_t n0);
void ltx2_wtable_free(ltx2_wtable *t);

/* The one allocation holding a table's tensors. */
typedef struct ltx2_wstore {
    const ltx2_backend *be;
    ltx2_dtype dtype;        /* vectors (biases, norms, tables) */
    ltx2_dtype matrix_dtype; /* Linear weights: dtype, or bf16 under f32 where be widens them itself */
    size_t n_fp8;            /* Linear weights stored as fp8 e4m3 (their entries' fp8 flag) */
    void *mem;
    size_t n_bytes, n_elems, n_tensors; /* n_bytes: the allocation's; n_elems, n_tensors: every tensor's */
    /* Non-NULL when the Linear weights are not copied but views of the checkpoint's mapping (kept
     * alive by this reference until ltx2_wstore_free): n_mapped_bytes of it. */
    ltx2_st_mapping *mapping;
    size_t n_mapped_bytes;
} ltx2_wstore;

/* Points every entry's tensor into a new zeroed allocation of dtype on be (layer entries get no
 * storage and data NULL when skip_layers). LTX2_ERR_UNSUPPORTED when be has no GEMM in dtype. */
ltx2_status ltx2_wstore_layout(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                               ltx2_dtype dtype, bool skip_layers);
/* As ltx2_wstore_layout (nothing skipped), with every layer entry's Linear weight in fp8 e4m3 (the
 * blocks' attention and FF matrices): for benches, which fill them and set their ltx2_linear scales
 * themselves. Copying and random filling refuse a store with fp8 entries. */
ltx2_status ltx2_wstore_layout_fp8(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                                   ltx2_dtype dtype);
/* Every Linear weight in fp8 e4m3 for storage only: loaded with ltx2_wload.quantize_fp8 and widened to
 * dtype before its GEMM (needs the fp8 conversion op, not the fp8 GEMM); the rest in dtype. */
ltx2_status ltx2_wstore_layout_fp8_stored(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t,
                                          const ltx2_backend *be, ltx2_dtype dtype);
/* The layout for a load from f (tensor names under prefix): the Linear weights stay the file's
 * bf16 when every one f holds is bf16 and be widens bf16 weights itself under dtype f32 (no f32
 * copy; the same results bitwise), else dtype. Where that bf16 is on the CPU and f has a mapping of
 * its own (ltx2_st_mapping_retain), they are not stored at all: ltx2_wtable_load points them into
 * the mapping, which the store then keeps alive. So a CPU load of a bf16 checkpoint holds no copy
 * of its matrices, only the pages of the file (shared, reclaimable), and its norms, biases and
 * tables in f32. keep_fp8: the Linear weights f holds as scaled fp8 (ltx2_weight_fp8_scales) stay fp8
 * and run as fp8 GEMMs (ltx-core's fp8_scaled_mm); be needs an fp8 GEMM. */
ltx2_status ltx2_wstore_layout_for(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t, const ltx2_backend *be,
                                   ltx2_dtype dtype, const ltx2_st_file *f, const char *prefix, bool skip_layers,
                                   bool keep_fp8);
/* The Linear weights f holds as scaled fp8 in fp8 (as keep_fp8 above), every other entry stored in
 * dtype, nothing viewed in the file: for loads whose weight hook changes the other weights too. */
ltx2_status ltx2_wstore_layout_fp8_from(ltx2_context *ctx, ltx2_wstore *s, const ltx2_wtable *t,
                                        const ltx2_backend *be, ltx2_dtype dtype, const ltx2_st_file *f,
                                        const char *prefix);
void ltx2_wstore_free(ltx2_wstore *s);

/* How a table is read from a checkpoint. */
typedef struct ltx2_wload {
    const ltx2_st_file *f;
    const char *prefix;   /* prepended to every entry's name ("" for none) */
    bool skip_layers;     /* layer entries are checked but not read */
    const char *what;     /* for messages: "DiT weights" */
    const char *cfgdesc;  /* for messages: the config the table came from */
    /* Whether a file tensor nobody asked for belongs to this model (an unexpected tensor, an error)
     * or to another component (ignored). */
    bool (*owns)(const char *name, const void *user);
    const void *owns_user;
    /* Called on every stored Linear weight after its conversion to f32, before it is stored (name
     * relative to prefix, w [out, in]): may change the values (LoRA fusion). NULL: none. A store
     * with such a hook must not view the file's mapping (ltx2_wstore_layout, not _for). */
    ltx2_status (*adjust)(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, void *user);
    /* The same for an fp8 entry, given its dequantised values; *changed: it changed them, and the
     * entry is re-quantised (ltx2_fp8_quantize_per_tensor), else it keeps the file's codes and
     * scale. NULL: fp8 entries refuse a store loaded with adjust. Shares adjust_user. */
    ltx2_status (*adjust_fp8)(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, bool *changed,
                              void *user);
    void *adjust_user;
    /* fp8 entries whose file tensor is not scaled fp8 are quantised per tensor as they load
     * (ltx2_fp8_quantize_per_tensor: the weight scale set, the input scale left 0): weights stored
     * in fp8 and widened before use (Gemma's fp8 weights), not run by the fp8 GEMM. */
    bool quantize_fp8;
} ltx2_wload;

/* Fills every stored entry of t (laid out in s) from how->f, converting to s's dtype (fp8 with its
 * scale as weight_fetch.h does); an fp8 entry takes the file's e4m3 bytes as they are, and its
 * scales. All problems are reported together. */
ltx2_status ltx2_wtable_load(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_wstore *s, const ltx2_wload *how);
/* dst's entries from src's (the same table of another weight struct, in the same order), each
 * converted from src's backend/dtype to dst's store. Entries without data on either side are left. */
ltx2_status ltx2_wtable_copy(ltx2_context *ctx, const ltx2_wtable *src, const ltx2_wstore *src_store,
                             const ltx2_wtable *dst, const ltx2_wstore *dst_store);
/* Every stored entry, in table order, as one Philox normal stream (seed, stream 0) times scale; s
 * must be host f32 (for benches and shape tests). */
ltx2_status ltx2_wtable_random(ltx2_context *ctx, const ltx2_wtable *t, const ltx2_wstore *s, uint64_t seed,
                               float scale);

#endif
