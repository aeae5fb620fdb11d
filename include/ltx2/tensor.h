/* ltx2c public tensor view: dtype, shape, strides, device, data pointer. A view never owns memory;
 * the owner (arena, mmap'd file, caller) decides lifetime. Strides are in elements. */
#ifndef LTX2_TENSOR_H
#define LTX2_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LTX2_MAX_DIMS 8

typedef enum ltx2_dtype {
    LTX2_F32 = 0,
    LTX2_F16,
    LTX2_BF16,
    LTX2_F8_E4M3, /* e4m3fn: no inf, one NaN pattern per sign, max 448 */
    LTX2_F8_E5M2, /* IEEE-like: inf and NaN, max 57344 */
    LTX2_F64,
    LTX2_I64,
    LTX2_I32,
    LTX2_I16,
    LTX2_I8,
    LTX2_U8,
    LTX2_BOOL,
    LTX2_DTYPE_COUNT
} ltx2_dtype;

typedef enum ltx2_device { LTX2_DEVICE_CPU = 0, LTX2_DEVICE_CUDA = 1 } ltx2_device;

typedef struct ltx2_tensor {
    void *data;
    ltx2_dtype dtype;
    ltx2_device device;
    int ndim;
    int64_t shape[LTX2_MAX_DIMS];
    int64_t strides[LTX2_MAX_DIMS]; /* in elements, not bytes */
} ltx2_tensor;

size_t ltx2_dtype_size(ltx2_dtype dt);
/* Our short name: "f32", "bf16", "f8_e4m3", ... */
const char *ltx2_dtype_name(ltx2_dtype dt);
/* Safetensors name: "F32", "BF16", "F8_E4M3", ... */
const char *ltx2_dtype_st_name(ltx2_dtype dt);
/* Parse a safetensors dtype name; returns false when unknown. */
bool ltx2_dtype_from_st_name(const char *name, size_t len, ltx2_dtype *out);
bool ltx2_dtype_is_float(ltx2_dtype dt);

/* A contiguous row-major view over data. ndim in [0, LTX2_MAX_DIMS]. */
ltx2_tensor ltx2_tensor_make(void *data, ltx2_dtype dt, int ndim, const int64_t *shape);
int64_t ltx2_tensor_numel(const ltx2_tensor *t);
size_t ltx2_tensor_nbytes(const ltx2_tensor *t); /* numel * itemsize */
bool ltx2_tensor_is_contiguous(const ltx2_tensor *t);
bool ltx2_tensor_same_shape(const ltx2_tensor *a, const ltx2_tensor *b);
/* "[2, 3, 4]" into buf; returns buf. */
const char *ltx2_shape_str(const int64_t *shape, int ndim, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
