/* The audio VAE encoder's convs as its checkpoint describes them: torch Conv2d over (time, mel)
 * with explicit, possibly asymmetric zero padding and a stride (the causal convs pad time only in
 * front; the Downsample pads time 2 in front and mel 1 behind, then strides 2). The loader checks
 * shapes and packs weights with these; audio_vae_encode.c maps each onto the conv3d op. */
#ifndef LTX2_MODEL_AUDIO_CONV2D_H
#define LTX2_MODEL_AUDIO_CONV2D_H

#include <stdint.h>

#include "core/context.h"

typedef struct ltx2_conv2d_desc {
    int64_t c_in, c_out;
    int64_t kh, kw;                       /* >= 1 */
    int64_t sh, sw;                       /* strides, >= 1 */
    int64_t pad_top, pad_bottom;          /* zeros, >= 0 */
    int64_t pad_left, pad_right;          /* zeros, >= 0 */
} ltx2_conv2d_desc;

/* Output extent (h + pads - kh) / sh + 1 (likewise w); refuses inputs smaller than the kernel. */
ltx2_status ltx2_audio_conv2d_out_shape(ltx2_context *ctx, const ltx2_conv2d_desc *d, int64_t h, int64_t w,
                                        int64_t out_hw[2]);

/* PyTorch Conv2d weight [c_out, c_in, kh, kw] -> GEMM operand [kh, kw, c_in][c_out]. */
ltx2_status ltx2_audio_conv2d_pack_weight(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *w_oikk,
                                          float *w_packed);

#endif
