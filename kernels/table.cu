// The launchers of ltx2_kernels.h as one table (ltx2_k_table): the op table's kernel ops
// (src/backend/backend_kernels.c) call through it, so the same op code drives the real kernels and,
// in the CPU emulator's build (every ltx2_k_* renamed ltx2_emu_k_*), the emulated ones.
#include "common.cuh"

static_assert(LTX2_KERR_NOT_SUPPORTED == (int)cudaErrorNotSupported, "LTX2_KERR_NOT_SUPPORTED is cudaErrorNotSupported");

extern "C" const ltx2_k_table *ltx2_k_table_get(void) {
    static const ltx2_k_table t = {
        ltx2_k_rms_norm,       ltx2_k_row_sumsq,  ltx2_k_rms_apply,     ltx2_k_layer_norm,
        ltx2_k_softmax,        ltx2_k_unary,      ltx2_k_binary,        ltx2_k_convert,
        ltx2_k_rope,           ltx2_k_attention_workspace,              ltx2_k_attention,
        ltx2_k_attention_wgmma_available,         ltx2_k_conv3d,        ltx2_k_conv3d_wgmma_available,
        ltx2_k_pixel_norm,
        ltx2_k_depth_to_space, ltx2_k_space_to_depth, ltx2_k_norm_modulate,  ltx2_k_gated_add,
        ltx2_k_head_gate,      ltx2_k_fp8_dequant,    ltx2_k_fp8_quant,      ltx2_k_group_norm,
        ltx2_k_blur_downsample, ltx2_k_conv1d,   ltx2_k_conv_transpose1d, ltx2_k_fir_upsample,
        ltx2_k_fir_downsample,  ltx2_k_snake,    ltx2_k_complex_abs,     ltx2_k_row_stats,
        ltx2_k_add_rms_norm,    ltx2_k_rms_norm_rope,
    };
    return &t;
}
