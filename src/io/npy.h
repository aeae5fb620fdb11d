/* NumPy .npy (format versions 1.0, 2.0, 3.0) and .npz (zip of .npy; stored or deflated members)
 * readers and writers. dtypes: f32, f16, f64, i32, i64, u8, bool, and bf16 (ml_dtypes writes it
 * as void '<V2'/'|V2' or 'bfloat16'; we read those as bf16 and write '<V2'... see npy.c). C order
 * only: Fortran-order arrays are refused with a message saying how to convert them. */
#ifndef LTX2_IO_NPY_H
#define LTX2_IO_NPY_H

#include <stddef.h>

#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

typedef struct ltx2_array {
    ltx2_tensor t;  /* contiguous CPU tensor; t.data is owned (64-byte aligned) */
} ltx2_array;

ltx2_status ltx2_npy_read(ltx2_context *ctx, const char *path, ltx2_array *out);
/* Parses a whole .npy held in memory (copies the data out). label names it in errors. */
ltx2_status ltx2_npy_parse(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                           ltx2_array *out);
/* Writes a contiguous CPU tensor (temp file + rename). */
ltx2_status ltx2_npy_write(ltx2_context *ctx, const char *path, const ltx2_tensor *t);
void ltx2_array_free(ltx2_array *a);

/* Room for the preamble ltx2_npy_header writes (our dicts are short: 8 dims x 20 digits max). */
#define LTX2_NPY_HEADER_MAX 512
/* The .npy preamble for t (magic, version 1.0, dict, space padding and '\n' up to a multiple of
 * 64 bytes, as numpy writes it), so the npz writer can stream member data after it. */
ltx2_status ltx2_npy_header(ltx2_context *ctx, const ltx2_tensor *t, char *buf, size_t cap,
                            size_t *len);

typedef struct ltx2_npz {
    size_t n;
    char **names;       /* member names without the ".npy" suffix, in archive order */
    ltx2_array *arrays;
} ltx2_npz;

ltx2_status ltx2_npz_read(ltx2_context *ctx, const char *path, ltx2_npz *out);
ltx2_status ltx2_npz_parse(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                           ltx2_npz *out);
/* Writes stored (uncompressed) members, like numpy.savez. */
ltx2_status ltx2_npz_write(ltx2_context *ctx, const char *path, size_t n, const char *const *names,
                           const ltx2_tensor *tensors);
void ltx2_npz_free(ltx2_npz *z);

#endif
