"""TINY LTX-2.0 / LTX-2.3 configurations, laid out like the real checkpoints' metadata "config".

The dict structure, section order ("transformer", "vae", "scheduler", "audio_vae", "vocoder") and
key order follow the verbatim LTX-2.3 metadata (see LAYOUT_NOTES.md); LTX-2.0 uses the verbatim
19B "transformer" key set, and the first-release key names for the VAE padding modes. Only the
sizes are shrunk. Deviations that tiny sizes force are listed in TINY_DEVIATIONS.

Channel plumbing is kept consistent end to end, so a later test can chain
text features -> connectors -> DiT -> VAE decoder / audio VAE decoder -> vocoder:
  video latent channels 8 (VAE latent_channels = DiT in/out_channels),
  audio latent [B, 2 ch, T, 16 mel] -> 32 features per token (DiT audio_in/out_channels = 32,
  audio VAE ch = z_channels * mel_bins / 4 = 32), mel_bins 64 (the vocoder's conv_pre is hard-wired to
  2 x 64 = 128 input channels in ltx-core).
"""

# Gemma-3 stand-in: ltx-core hard-codes the Gemma dims (3840 hidden, 48 layers -> 49 hidden states)
# in GEMMA3_CONFIG_FOR_LTX; the tiny files use 32 hidden and 2 layers -> 3 states -> 96 features.
TINY_GEMMA_HIDDEN = 32
TINY_GEMMA_LAYERS = 2

VIDEO_LATENT_CHANNELS = 8
AUDIO_Z_CHANNELS = 2
AUDIO_MEL_BINS = 64
AUDIO_LATENT_FEATURES = AUDIO_Z_CHANNELS * AUDIO_MEL_BINS // 4  # 32

TINY_DEVIATIONS = [
    "transformer.audio_in_channels is added (absent in the real metadata, where ltx-core defaults it to "
    "128); tiny audio tokens have 32 features",
    "Gemma dims are not part of the metadata (ltx-core hard-codes 3840 x 49); the tiny files use "
    f"{TINY_GEMMA_HIDDEN} x {TINY_GEMMA_LAYERS + 1}, visible only in the text_embedding_projection shapes",
    "the extra metadata key 'ltx2c_tiny' (JSON) documents these shims; real files do not have it",
]


def _transformer_common(version: str) -> list:
    """Key/value pairs in the verbatim metadata order (LTX-2.3 order; 2.0 is the same minus 2.3 keys)."""
    kv = [("_class_name", "AVTransformer3DModel")]
    if version == "2.0":
        kv.append(("_diffusers_version", "0.25.1"))
    kv += [
        ("activation_fn", "gelu-approximate"),
        ("attention_bias", True),
        ("attention_head_dim", 16),
        ("attention_type", "default"),
        ("caption_channels", TINY_GEMMA_HIDDEN),
        ("cross_attention_dim", 64),
        ("double_self_attention", False),
        ("dropout", 0.0),
        ("in_channels", VIDEO_LATENT_CHANNELS),
        ("norm_elementwise_affine", False),
        ("norm_eps", 1e-06),
        ("norm_num_groups", 32),
        ("num_attention_heads", 4),
        ("num_embeds_ada_norm", 1000),
        ("num_layers", 2),
        ("num_vector_embeds", None),
        ("only_cross_attention", False),
        ("cross_attention_norm", True),
        ("out_channels", VIDEO_LATENT_CHANNELS),
        ("upcast_attention", False),
        ("use_linear_projection", False),
        ("qk_norm", "rms_norm"),
        ("standardization_norm", "rms_norm"),
        ("positional_embedding_type", "rope"),
        ("positional_embedding_theta", 10000.0),
        ("positional_embedding_max_pos", [20, 2048, 2048]),
        ("timestep_scale_multiplier", 1000),
        ("av_ca_timestep_scale_multiplier", 1000.0),
        ("causal_temporal_positioning", True),
        ("audio_num_attention_heads", 4),
        ("audio_attention_head_dim", 8),
        ("use_audio_video_cross_attention", True),
        ("share_ff", False),
        ("audio_in_channels", AUDIO_LATENT_FEATURES),
        ("audio_out_channels", AUDIO_LATENT_FEATURES),
        ("audio_cross_attention_dim", 32),
        ("audio_positional_embedding_max_pos", [20]),
        ("av_cross_ada_norm", True),
        ("use_embeddings_connector", True),
    ]
    if version == "2.0":
        # LTX-2.0: connector inner dim == caption_channels (Gemma hidden), here 2 x 16 = 32.
        kv += [
            ("connector_attention_head_dim", 16),
            ("connector_num_attention_heads", 2),
            ("connector_num_layers", 2),
            ("connector_positional_embedding_max_pos", [4096]),
            ("connector_num_learnable_registers", 128),
            ("connector_norm_output", True),
            ("use_middle_indices_grid", True),
        ]
    else:
        # LTX-2.3: video connector inner == Dv (4 x 16), audio connector inner == Da (4 x 8).
        kv += [
            ("connector_attention_head_dim", 16),
            ("connector_num_attention_heads", 4),
            ("connector_num_layers", 2),
            ("connector_positional_embedding_max_pos", [4096]),
            ("connector_num_learnable_registers", 128),
            ("connector_norm_output", True),
            ("use_middle_indices_grid", True),
            ("apply_gated_attention", True),
            ("connector_apply_gated_attention", True),
            ("caption_projection_first_linear", False),
            ("caption_projection_second_linear", False),
            ("caption_proj_input_norm", False),
            ("connector_learnable_registers_std", 1),
            ("caption_proj_before_connector", True),
            ("audio_connector_attention_head_dim", 8),
            ("audio_connector_num_attention_heads", 4),
            ("cross_attention_adaln", True),
            ("text_encoder_norm_type", "per_token_rms"),
        ]
    kv += [("rope_type", "split"), ("frequencies_precision", "float64")]
    return kv


def transformer_config(version: str) -> dict:
    return dict(_transformer_common(version))


# Encoder: widths 8 -> 16 -> 32 -> 64 -> 64 (spatial x32, temporal x8, patch 4 kept).
_ENCODER_BLOCKS = [
    ["res_x", {"num_layers": 1}],
    ["compress_space_res", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
    ["compress_time_res", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
    ["compress_all_res", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
    ["compress_all_res", {"multiplier": 1}],
    ["res_x", {"num_layers": 1}],
]
# LTX-2.0 decoder style: three residual compress_all x2, res_x with inject_noise false.
_DECODER_BLOCKS_20 = [
    ["res_x", {"num_layers": 1, "inject_noise": False}],
    ["compress_all", {"residual": True, "multiplier": 2}],
    ["res_x", {"num_layers": 1, "inject_noise": False}],
    ["compress_all", {"residual": True, "multiplier": 2}],
    ["res_x", {"num_layers": 1, "inject_noise": False}],
    ["compress_all", {"residual": True, "multiplier": 2}],
    ["res_x", {"num_layers": 1, "inject_noise": False}],
]
# LTX-2.3 decoder style: space / time / all compressions, no residual key, zeros padding.
_DECODER_BLOCKS_23 = [
    ["res_x", {"num_layers": 1}],
    ["compress_space", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
    ["compress_time", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
    ["compress_all", {"multiplier": 1}],
    ["res_x", {"num_layers": 1}],
    ["compress_all", {"multiplier": 2}],
    ["res_x", {"num_layers": 1}],
]


def vae_config(version: str) -> dict:
    cfg = {
        "_class_name": "CausalVideoAutoencoder",
        "dims": 3,
        "in_channels": 3,
        "out_channels": 3,
        "latent_channels": VIDEO_LATENT_CHANNELS,
        "encoder_blocks": _ENCODER_BLOCKS,
        "decoder_blocks": _DECODER_BLOCKS_20 if version == "2.0" else _DECODER_BLOCKS_23,
        "scaling_factor": 1.0,
        "norm_layer": "pixel_norm",
        "patch_size": 4,
        "latent_log_var": "uniform",
        "use_quant_conv": False,
        "causal_decoder": False,
        "timestep_conditioning": False,
        "normalize_latent_channels": False,
        "encoder_base_channels": 8,
        "decoder_base_channels": 8,
    }
    if version == "2.0":
        # First-release key names (ltx-core 1.0.0 does not read them; its defaults give the same modes).
        cfg["encoder_spatial_padding_mode"] = "zeros"
        cfg["decoder_spatial_padding_mode"] = "reflect"
    else:
        cfg["spatial_padding_mode"] = "zeros"
    return cfg


def scheduler_config() -> dict:
    return {"_class_name": "RectifiedFlowScheduler", "_diffusers_version": "0.25.1", "num_train_timesteps": 1000,
            "shifting": None, "base_resolution": None, "sampler": "LinearQuadratic"}


def audio_vae_config() -> dict:
    return {
        "model": {"params": {"ddconfig": {
            "double_z": True, "mel_bins": AUDIO_MEL_BINS, "z_channels": AUDIO_Z_CHANNELS, "resolution": 256,
            "downsample_time": False, "in_channels": 2, "out_ch": 2, "ch": AUDIO_LATENT_FEATURES,
            "ch_mult": [1, 2, 2], "num_res_blocks": 1, "attn_resolutions": [], "dropout": 0.0,
            "mid_block_add_attention": False, "norm_type": "pixel", "causality_axis": "height"},
            "sampling_rate": 16000}},
        "preprocessing": {
            "audio": {"sampling_rate": 16000, "max_wav_value": 32768.0, "duration": 5.12, "stereo": True,
                      "causal_padding": 3},
            "stft": {"filter_length": 1024, "hop_length": 160, "win_length": 1024, "causal": True},
            "mel": {"n_mel_channels": AUDIO_MEL_BINS, "mel_fmin": 0, "mel_fmax": 8000}},
    }


def vocoder_config(version: str) -> dict:
    if version == "2.0":
        # HiFi-GAN "resblock 1" (flat dict: ltx-core picks the plain Vocoder when "bwe" is absent).
        return {"upsample_initial_channel": 32, "resblock": "1", "upsample_rates": [6, 5, 2],
                "resblock_kernel_sizes": [3, 7, 11], "upsample_kernel_sizes": [16, 15, 4],
                "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]], "stereo": True,
                "output_sampling_rate": 24000}
    return {
        "vocoder": {"upsample_initial_channel": 32, "resblock": "AMP1", "upsample_rates": [2, 2],
                    "resblock_kernel_sizes": [3, 7], "upsample_kernel_sizes": [4, 4],
                    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5]], "stereo": True, "use_tanh_at_final": False,
                    "activation": "snakebeta", "use_bias_at_final": False},
        "bwe": {"upsample_initial_channel": 16, "resblock": "AMP1", "upsample_rates": [6, 2],
                "resblock_kernel_sizes": [3, 7], "upsample_kernel_sizes": [12, 4],
                "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5]], "stereo": True, "use_tanh_at_final": False,
                "activation": "snakebeta", "use_bias_at_final": False, "apply_final_activation": False,
                "input_sampling_rate": 16000, "output_sampling_rate": 48000, "hop_length": 4, "n_fft": 8,
                "win_size": 8, "num_mels": 64},
    }


def full_config(version: str) -> dict:
    return {"transformer": transformer_config(version), "vae": vae_config(version),
            "scheduler": scheduler_config(), "audio_vae": audio_vae_config(),
            "vocoder": vocoder_config(version)}


def upsampler_configs() -> dict:
    """Standalone latent upsampler files (own metadata "config", unprefixed keys)."""
    base = {"_class_name": "LatentUpsampler", "in_channels": VIDEO_LATENT_CHANNELS, "mid_channels": 32,
            "num_blocks_per_stage": 1, "dims": 3}
    return {
        "spatial-x2": {**base, "spatial_upsample": True, "temporal_upsample": False, "spatial_scale": 2.0,
                       "rational_resampler": False},
        "spatial-x2-rational": {**base, "spatial_upsample": True, "temporal_upsample": False,
                                "spatial_scale": 2.0, "rational_resampler": True},
        "spatial-x1.5": {**base, "spatial_upsample": True, "temporal_upsample": False, "spatial_scale": 1.5,
                         "rational_resampler": True},
        "temporal-x2": {**base, "spatial_upsample": False, "temporal_upsample": True, "spatial_scale": 2.0,
                        "rational_resampler": False},
    }
