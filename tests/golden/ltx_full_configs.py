"""FULL-SIZE LTX-2 (19B) and LTX-2.3 (22B) checkpoint metadata "config" objects, written to
tests/data/config_full_<v>.json for the tests that need real sizes without real weights (the
memory plan; later the synthetic full-size checkpoints).

Sources (see tests/golden/LAYOUT_NOTES.md section 2 and ../shared/spec):
- LTX-2.3 22B: the whole verbatim metadata config (public copy, search id 53924154157), every
  section.
- LTX-2.0 19B: the verbatim "transformer" dict (search id 69641246293); no verbatim 2.0 vae /
  audio_vae / vocoder sections are public, so those are the values the diffusers converter loads
  the real 2.0 weights with (spec ltx2_vae_audio_spec.md sections 1 and 5.1, marked [conv]), laid
  out in the 2.3 structure with the first-release VAE key names, as the tiny 2.0 file does.
Only values are written here; the reader is the engine's own config parser.

Usage: python3 tests/golden/ltx_full_configs.py   (no dependencies)
"""
import json
import os

TRANSFORMER_19B = {
    "_class_name": "AVTransformer3DModel", "_diffusers_version": "0.25.1",
    "activation_fn": "gelu-approximate", "attention_bias": True, "attention_head_dim": 128,
    "attention_type": "default", "audio_attention_head_dim": 64, "audio_cross_attention_dim": 2048,
    "audio_num_attention_heads": 32, "audio_out_channels": 128, "audio_positional_embedding_max_pos": [20],
    "av_ca_timestep_scale_multiplier": 1000.0, "av_cross_ada_norm": True, "caption_channels": 3840,
    "causal_temporal_positioning": True, "connector_attention_head_dim": 128, "connector_norm_output": True,
    "connector_num_attention_heads": 30, "connector_num_layers": 2, "connector_num_learnable_registers": 128,
    "connector_positional_embedding_max_pos": [4096], "cross_attention_dim": 4096, "cross_attention_norm": True,
    "double_self_attention": False, "dropout": 0.0, "frequencies_precision": "float64", "in_channels": 128,
    "norm_elementwise_affine": False, "norm_eps": 1e-06, "norm_num_groups": 32, "num_attention_heads": 32,
    "num_embeds_ada_norm": 1000, "num_layers": 48, "num_vector_embeds": None, "only_cross_attention": False,
    "out_channels": 128, "positional_embedding_max_pos": [20, 2048, 2048], "positional_embedding_theta": 10000.0,
    "positional_embedding_type": "rope", "qk_norm": "rms_norm", "rope_type": "split", "share_ff": False,
    "standardization_norm": "rms_norm", "timestep_scale_multiplier": 1000, "upcast_attention": False,
    "use_audio_video_cross_attention": True, "use_embeddings_connector": True, "use_linear_projection": False,
    "use_middle_indices_grid": True,
}

TRANSFORMER_22B = {
    "_class_name": "AVTransformer3DModel", "activation_fn": "gelu-approximate", "attention_bias": True,
    "attention_head_dim": 128, "attention_type": "default", "caption_channels": 3840, "cross_attention_dim": 4096,
    "double_self_attention": False, "dropout": 0.0, "in_channels": 128, "norm_elementwise_affine": False,
    "norm_eps": 1e-06, "norm_num_groups": 32, "num_attention_heads": 32, "num_embeds_ada_norm": 1000,
    "num_layers": 48, "num_vector_embeds": None, "only_cross_attention": False, "cross_attention_norm": True,
    "out_channels": 128, "upcast_attention": False, "use_linear_projection": False, "qk_norm": "rms_norm",
    "standardization_norm": "rms_norm", "positional_embedding_type": "rope", "positional_embedding_theta": 10000.0,
    "positional_embedding_max_pos": [20, 2048, 2048], "timestep_scale_multiplier": 1000,
    "av_ca_timestep_scale_multiplier": 1000.0, "causal_temporal_positioning": True, "audio_num_attention_heads": 32,
    "audio_attention_head_dim": 64, "use_audio_video_cross_attention": True, "share_ff": False,
    "audio_out_channels": 128, "audio_cross_attention_dim": 2048, "audio_positional_embedding_max_pos": [20],
    "av_cross_ada_norm": True, "use_embeddings_connector": True, "connector_attention_head_dim": 128,
    "connector_num_attention_heads": 32, "connector_num_layers": 8, "connector_positional_embedding_max_pos": [4096],
    "connector_num_learnable_registers": 128, "connector_norm_output": True, "use_middle_indices_grid": True,
    "apply_gated_attention": True, "connector_apply_gated_attention": True, "caption_projection_first_linear": False,
    "caption_projection_second_linear": False, "caption_proj_input_norm": False,
    "connector_learnable_registers_std": 1, "caption_proj_before_connector": True,
    "audio_connector_attention_head_dim": 64, "audio_connector_num_attention_heads": 32,
    "cross_attention_adaln": True, "text_encoder_norm_type": "per_token_rms", "rope_type": "split",
    "frequencies_precision": "float64",
}

VAE_22B = {
    "_class_name": "CausalVideoAutoencoder", "dims": 3, "in_channels": 3, "out_channels": 3, "latent_channels": 128,
    "encoder_blocks": [["res_x", {"num_layers": 4}], ["compress_space_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 6}], ["compress_time_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 4}], ["compress_all_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 2}], ["compress_all_res", {"multiplier": 1}],
                       ["res_x", {"num_layers": 2}]],
    "decoder_blocks": [["res_x", {"num_layers": 4}], ["compress_space", {"multiplier": 2}],
                       ["res_x", {"num_layers": 6}], ["compress_time", {"multiplier": 2}],
                       ["res_x", {"num_layers": 4}], ["compress_all", {"multiplier": 1}],
                       ["res_x", {"num_layers": 2}], ["compress_all", {"multiplier": 2}],
                       ["res_x", {"num_layers": 2}]],
    "scaling_factor": 1.0, "norm_layer": "pixel_norm", "patch_size": 4, "latent_log_var": "uniform",
    "use_quant_conv": False, "causal_decoder": False, "timestep_conditioning": False,
    "normalize_latent_channels": False, "encoder_base_channels": 128, "decoder_base_channels": 128,
    "spatial_padding_mode": "zeros",
}

# [conv]: the diffusers converter's LTX-2.0 VAE (spec ltx2_vae_audio_spec.md section 1).
VAE_19B = {
    "_class_name": "CausalVideoAutoencoder", "dims": 3, "in_channels": 3, "out_channels": 3, "latent_channels": 128,
    "encoder_blocks": [["res_x", {"num_layers": 4}], ["compress_space_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 6}], ["compress_time_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 6}], ["compress_all_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 2}], ["compress_all_res", {"multiplier": 2}],
                       ["res_x", {"num_layers": 2}]],
    "decoder_blocks": [["res_x", {"num_layers": 5, "inject_noise": False}],
                       ["compress_all", {"residual": True, "multiplier": 2}],
                       ["res_x", {"num_layers": 5, "inject_noise": False}],
                       ["compress_all", {"residual": True, "multiplier": 2}],
                       ["res_x", {"num_layers": 5, "inject_noise": False}],
                       ["compress_all", {"residual": True, "multiplier": 2}],
                       ["res_x", {"num_layers": 5, "inject_noise": False}]],
    "scaling_factor": 1.0, "norm_layer": "pixel_norm", "patch_size": 4, "latent_log_var": "uniform",
    "use_quant_conv": False, "causal_decoder": False, "timestep_conditioning": False,
    "normalize_latent_channels": False, "encoder_base_channels": 128, "decoder_base_channels": 128,
    "encoder_spatial_padding_mode": "zeros", "decoder_spatial_padding_mode": "reflect",
}

SCHEDULER = {"_class_name": "RectifiedFlowScheduler", "_diffusers_version": "0.25.1", "num_train_timesteps": 1000,
             "shifting": None, "base_resolution": None, "sampler": "LinearQuadratic"}

AUDIO_VAE = {
    "model": {"params": {"ddconfig": {"double_z": True, "mel_bins": 64, "z_channels": 8, "resolution": 256,
                                      "downsample_time": False, "in_channels": 2, "out_ch": 2, "ch": 128,
                                      "ch_mult": [1, 2, 4], "num_res_blocks": 2, "attn_resolutions": [],
                                      "dropout": 0.0, "mid_block_add_attention": False, "norm_type": "pixel",
                                      "causality_axis": "height"},
                         "sampling_rate": 16000}},
    "preprocessing": {"audio": {"sampling_rate": 16000, "max_wav_value": 32768.0, "duration": 5.12, "stereo": True,
                                "causal_padding": 3},
                      "stft": {"filter_length": 1024, "hop_length": 160, "win_length": 1024, "causal": True},
                      "mel": {"n_mel_channels": 64, "mel_fmin": 0, "mel_fmax": 8000}},
}

VOCODER_22B = {
    "vocoder": {"upsample_initial_channel": 1536, "resblock": "AMP1", "upsample_rates": [5, 2, 2, 2, 2, 2],
                "resblock_kernel_sizes": [3, 7, 11], "upsample_kernel_sizes": [11, 4, 4, 4, 4, 4],
                "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]], "stereo": True,
                "use_tanh_at_final": False, "activation": "snakebeta", "use_bias_at_final": False},
    "bwe": {"upsample_initial_channel": 512, "resblock": "AMP1", "upsample_rates": [6, 5, 2, 2, 2],
            "resblock_kernel_sizes": [3, 7, 11], "upsample_kernel_sizes": [12, 11, 4, 4, 4],
            "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]], "stereo": True, "use_tanh_at_final": False,
            "activation": "snakebeta", "use_bias_at_final": False, "apply_final_activation": False,
            "input_sampling_rate": 16000, "output_sampling_rate": 48000, "hop_length": 80, "n_fft": 512,
            "win_size": 512, "num_mels": 64},
}

# [conv]: HiFi-GAN v1 at 24 kHz (spec section 5.1), the flat dict ltx-core reads.
VOCODER_19B = {
    "upsample_initial_channel": 1024, "resblock": "1", "upsample_rates": [6, 5, 2, 2, 2],
    "upsample_kernel_sizes": [16, 15, 8, 4, 4], "resblock_kernel_sizes": [3, 7, 11],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]], "stereo": True, "output_sampling_rate": 24000,
}

CONFIGS = {
    "2.0": {"transformer": TRANSFORMER_19B, "vae": VAE_19B, "scheduler": SCHEDULER, "audio_vae": AUDIO_VAE,
            "vocoder": VOCODER_19B},
    "2.3": {"transformer": TRANSFORMER_22B, "vae": VAE_22B, "scheduler": SCHEDULER, "audio_vae": AUDIO_VAE,
            "vocoder": VOCODER_22B},
}


def main():
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
    for v, cfg in CONFIGS.items():
        path = os.path.join(out_dir, f"config_full_{v}.json")
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
            f.write("\n")
        print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
