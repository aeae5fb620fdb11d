/* Converting one checkpoint tensor into fp32 at load time, shared by the DiT and connector
 * loaders: f32 / bf16 / f16 convert exactly; fp8 e4m3 weights as Lightricks ships them
 * (`ltx-2-19b-*-fp8.safetensors`) are dequantised with their per-tensor sibling
 * `<layer>.weight_scale` as ltx-core does (`weight.to(float32) * weight_scale`,
 * ltx_core/loader/fuse_loras.py `_fuse_delta_with_scaled_fp8`; the file keeps the torch [out, in]
 * layout, ltx_core/quantization/fp8_scaled_mm.py transposes only in memory). An fp8 tensor without
 * a scale is upcast as is (ltx-core's fp8_cast policy). The activation `input_scale` is used only
 * where the weights stay fp8 (ltx2_weight_fp8_scales, ltx2_dit_weights_load_fp8: ltx-core's
 * fp8_scaled_mm); dequantised weights run on unquantised activations. */
#ifndef LTX2_MODEL_WEIGHT_FETCH_H
#define LTX2_MODEL_WEIGHT_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/safetensors.h"

#define LTX2_FP8_WEIGHT_SCALE_SUFFIX ".weight_scale"
#define LTX2_FP8_INPUT_SCALE_SUFFIX ".input_scale"

/* Dtypes the loaders accept for a weight (f32, bf16, f16, fp8 e4m3). */
bool ltx2_weight_dtype_ok(ltx2_dtype dt);
/* dst[n] = t in fp32; t->name is the key in f (for the scale lookup and messages). */
ltx2_status ltx2_weight_to_f32(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, float *dst,
                               size_t n);
/* The [row0, row0 + nrows) x [col0, col0 + ncols) block of the 1-D / 2-D tensor t, row-major into
 * dst[nrows * ncols] in fp32 (a 1-D tensor of n elements reads as [n, 1]: col0 0, ncols 1). Only
 * the block's bytes of the mapping are touched, so a rank can read its tensor shard without
 * paging in the rest; the floats are bitwise those ltx2_weight_to_f32 gives for the same elements
 * (elementwise conversion, the same fp8 scale). */
ltx2_status ltx2_weight_slice_to_f32(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, int64_t row0,
                                     int64_t nrows, int64_t col0, int64_t ncols, float *dst);
/* The raw e4m3 codes of that block of the fp8 tensor t (no scale applied): what a rank keeps of a
 * scaled fp8 weight. A NaN code is refused, naming its place. */
ltx2_status ltx2_weight_slice_fp8_codes(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t,
                                        int64_t row0, int64_t nrows, int64_t col0, int64_t ncols, uint8_t *dst);
/* Whether t is a scaled fp8 weight, the kind ltx-core's fp8_scaled_mm policy runs as FP8Linear: e4m3
 * with a `.weight_scale` sibling in f (ltx_core/quantization/fp8_scaled_mm.py get_fp8_swap_module_ops).
 * Then *w_scale and *x_scale are its weight and input scales; a missing `.input_scale`, or a scale
 * that is not one finite value > 0, is an error. *scaled false (and OK) for any other tensor. */
ltx2_status ltx2_weight_fp8_scales(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, bool *scaled,
                                   float *w_scale, float *x_scale);
/* w[n] quantised per tensor as ltx-core's quantize_weight_to_fp8_per_tensor does (fp8_scaled_mm.py):
 * scale = 448 / amax|w| (fp32), q = e4m3(clamp(w * scale, +-448)), *w_scale = 1 / scale. An all-zero
 * or non-finite w is refused (torch would write NaN codes). name is for the message. */
ltx2_status ltx2_fp8_quantize_per_tensor(ltx2_context *ctx, const char *name, const float *w, size_t n, uint8_t *q,
                                         float *w_scale);
/* The same in two halves, for a tensor quantised in blocks (a rank's shard): amax|w| of a block,
 * and the block quantised with the whole tensor's amax (the largest of its blocks'): the codes and
 * scale ltx2_fp8_quantize_per_tensor gives for those elements of the whole. */
float ltx2_fp8_amax(const float *w, size_t n);
ltx2_status ltx2_fp8_quantize_amax(ltx2_context *ctx, const char *name, const float *w, size_t n, float amax,
                                   uint8_t *q, float *w_scale);
/* True for a `.weight_scale` / `.input_scale` tensor whose `.weight` sibling is fp8 in f: consumed by
 * that weight, not an unexpected tensor. */
bool ltx2_weight_is_fp8_aux(const ltx2_st_file *f, const char *name);

#endif
