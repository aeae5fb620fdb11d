/* A golden file's f32 tensor by name, when it holds exactly numel values (else NULL: the caller
 * CHECKs it, so a regenerated golden of another shape fails by name, not by reading past it). */
#ifndef LTX2_TESTS_GOLDEN_TENSOR_H
#define LTX2_TESTS_GOLDEN_TENSOR_H

#include <stdint.h>

#include "io/safetensors.h"

static inline const float *golden_tensor(const ltx2_st_file *f, const char *name, int64_t numel) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    if (!t || t->dtype != LTX2_F32) return NULL;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n == numel ? t->data : NULL;
}

#endif
