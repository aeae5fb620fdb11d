/* A named collection of tensors from any file a user brings: .safetensors (or a sharded index),
 * .npy, .npz, or a dump directory holding any mix of these. This is what `ltx2 compare` matches
 * by name, so our dumps line up with reference and TPU/JAX dumps. */
#ifndef LTX2_IO_TENSOR_SET_H
#define LTX2_IO_TENSOR_SET_H

#include <stddef.h>

#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

typedef struct ltx2_named_tensor {
    const char *name;
    ltx2_tensor t;       /* contiguous CPU view; data may be unaligned (mmap'd safetensors) */
    const char *source;  /* the file it came from */
} ltx2_named_tensor;

typedef struct ltx2_tensor_set {
    const char *kind;    /* "safetensors", "npy", "npz" or "directory" */
    size_t n;
    ltx2_named_tensor *items;  /* sorted by name */
    void *impl_;
} ltx2_tensor_set;

/* Naming rules: a .safetensors/.npz contributes its own keys; a lone .npy is named by its file
 * stem; inside a directory, a .npy is named by its path relative to the directory with '/'
 * turned into '.' and the suffix dropped (dump/blocks/0/attn1.npy -> "blocks.0.attn1"), while
 * .safetensors/.npz files inside contribute their keys. A name seen twice is an error that names
 * both files. */
ltx2_status ltx2_tensor_set_open(ltx2_context *ctx, const char *path, ltx2_tensor_set **out);
void ltx2_tensor_set_free(ltx2_tensor_set *s);
const ltx2_named_tensor *ltx2_tensor_set_find(const ltx2_tensor_set *s, const char *name);

#endif
