/* Renames every launcher of kernels/ltx2_kernels.h (ltx2_k_foo -> ltx2_emu_k_foo) so that the
 * emulated kernels never clash with the real CUDA library in builds that have both.
 * tests/test_emu_runtime.c checks that this list covers every launcher the header declares. */
#ifndef LTX2_EMU_RENAME_H
#define LTX2_EMU_RENAME_H

#define ltx2_k_attention ltx2_emu_k_attention
#define ltx2_k_attention_pick ltx2_emu_k_attention_pick
#define ltx2_k_attention_wgmma_available ltx2_emu_k_attention_wgmma_available
#define ltx2_k_attention_workspace ltx2_emu_k_attention_workspace
#define ltx2_k_binary ltx2_emu_k_binary
#define ltx2_k_conv3d ltx2_emu_k_conv3d
#define ltx2_k_conv3d_wgmma_available ltx2_emu_k_conv3d_wgmma_available
#define ltx2_k_convert ltx2_emu_k_convert
#define ltx2_k_depth_to_space ltx2_emu_k_depth_to_space
#define ltx2_k_fp8_dequant ltx2_emu_k_fp8_dequant
#define ltx2_k_fp8_quant ltx2_emu_k_fp8_quant
#define ltx2_k_gated_add ltx2_emu_k_gated_add
#define ltx2_k_head_gate ltx2_emu_k_head_gate
#define ltx2_k_layer_norm ltx2_emu_k_layer_norm
#define ltx2_k_norm_modulate ltx2_emu_k_norm_modulate
#define ltx2_k_pixel_norm ltx2_emu_k_pixel_norm
#define ltx2_k_rms_apply ltx2_emu_k_rms_apply
#define ltx2_k_rms_norm ltx2_emu_k_rms_norm
#define ltx2_k_rope ltx2_emu_k_rope
#define ltx2_k_row_sumsq ltx2_emu_k_row_sumsq
#define ltx2_k_row_stats ltx2_emu_k_row_stats
#define ltx2_k_add_rms_norm ltx2_emu_k_add_rms_norm
#define ltx2_k_softmax ltx2_emu_k_softmax
#define ltx2_k_space_to_depth ltx2_emu_k_space_to_depth
#define ltx2_k_group_norm ltx2_emu_k_group_norm
#define ltx2_k_blur_downsample ltx2_emu_k_blur_downsample
#define ltx2_k_conv1d ltx2_emu_k_conv1d
#define ltx2_k_conv_transpose1d ltx2_emu_k_conv_transpose1d
#define ltx2_k_fir_upsample ltx2_emu_k_fir_upsample
#define ltx2_k_fir_downsample ltx2_emu_k_fir_downsample
#define ltx2_k_snake ltx2_emu_k_snake
#define ltx2_k_complex_abs ltx2_emu_k_complex_abs
#define ltx2_k_table_get ltx2_emu_k_table_get
#define ltx2_k_unary ltx2_emu_k_unary

#endif
