#!/usr/bin/env python3
"""diffusers-format tiny LTX-2 directories holding the SAME weights as weights/tiny/ltx2-tiny-*.safetensors.

Reads the Lightricks-layout tiny checkpoints written by gen_tiny_ltx2.py, renames the DiT and the
text-connector keys to diffusers names (the rename rules of diffusers'
scripts/convert_ltx2_to_diffusers.py, as summarised in the DiT spec section 2.3/2.4), loads them
with strict=True into diffusers' own LTX2VideoTransformer3DModel / LTX2TextConnectors built from
the equivalent tiny diffusers config, and saves with save_pretrained:
  weights/tiny/ltx2-tiny-diffusers-<version>/transformer/  (sharded: index.json + 2+ shards)
  weights/tiny/ltx2-tiny-diffusers-<version>/connectors/
  weights/tiny/ltx2-tiny-diffusers-<version>/vae/        AutoencoderKLLTX2Video
  weights/tiny/ltx2-tiny-diffusers-<version>/audio_vae/  AutoencoderKLLTX2Audio
  weights/tiny/ltx2-tiny-diffusers-<version>/vocoder/    LTX2Vocoder (2.0) / LTX2VocoderWithBWE (2.3)
  weights/tiny/ltx2-tiny-diffusers-<version>/latent_upsampler/  LTX2LatentUpsamplerModel (the tiny x2 one)
A strict load is the check: every diffusers parameter must be provided by exactly one renamed key.

Rename sources: the video and audio VAE go through diffusers' own
loaders/single_file_utils.py convert_ltx2_vae_to_diffusers / convert_ltx2_audio_vae_to_diffusers.
That table stops at the 2.0 decoder's seven blocks (up_blocks.0..6); the 2.3 decoder has a fourth
stage (up_blocks.7 = its upsampler, up_blocks.8 = its res blocks), renamed here by the same pattern
(up_blocks.3.upsamplers.0 / up_blocks.3) - an extension, checked only by the strict load. The
vocoder renames are scripts/convert_ltx2_to_diffusers.py's LTX_2_0_VOCODER_RENAME_DICT (ups,
resblocks, conv_pre, conv_post); the BigVGAN / BWE parts it does not list (act_post -> act_out,
downsample.lowpass.filter -> downsample.filter, the outer vocoder. of VocoderWithBWE) follow
diffusers' module tree (LTX2VocoderWithBWE) and are likewise checked only by the strict load.
The latent upsampler keeps Lightricks' names: diffusers' converter (scripts/convert_ltx2_to_diffusers.py
convert_ltx2_spatial_latent_upsampler) strict-loads the original state dict as is; its config keys
are diffusers' (rational_spatial_scale, use_rational_resampler for spatial_scale, rational_resampler).
"""
import json
import os
import re
import shutil
import sys

import torch
from safetensors import safe_open

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ltx_tiny_configs as C  # noqa: E402
import torchaudio_stub  # noqa: E402,F401  (before diffusers)

from diffusers import AutoencoderKLLTX2Audio, AutoencoderKLLTX2Video, LTX2VideoTransformer3DModel  # noqa: E402
from diffusers.loaders.single_file_utils import (  # noqa: E402
    convert_ltx2_audio_vae_to_diffusers, convert_ltx2_vae_to_diffusers)
from diffusers.pipelines.ltx2.vocoder import LTX2Vocoder, LTX2VocoderWithBWE  # noqa: E402
from diffusers.pipelines.ltx2.connectors import LTX2TextConnectors  # noqa: E402
from diffusers.pipelines.ltx2.latent_upsampler import LTX2LatentUpsamplerModel  # noqa: E402

WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
SHARD_SIZE = "200KB"  # small enough that the tiny transformer needs several shards (index.json path)

DIT_RENAMES = [  # whole-component renames
    ("patchify_proj", "proj_in"),
    ("audio_patchify_proj", "audio_proj_in"),
    ("av_ca_video_scale_shift_adaln_single", "av_cross_attn_video_scale_shift"),
    ("av_ca_a2v_gate_adaln_single", "av_cross_attn_video_a2v_gate"),
    ("av_ca_audio_scale_shift_adaln_single", "av_cross_attn_audio_scale_shift"),
    ("av_ca_v2a_gate_adaln_single", "av_cross_attn_audio_v2a_gate"),
    ("scale_shift_table_a2v_ca_video", "video_a2v_cross_attn_scale_shift_table"),
    ("scale_shift_table_a2v_ca_audio", "audio_a2v_cross_attn_scale_shift_table"),
    ("q_norm", "norm_q"),
    ("k_norm", "norm_k"),
    ("prompt_adaln_single", "prompt_adaln"),
    ("audio_prompt_adaln_single", "audio_prompt_adaln"),
]


def rename_dit(k):
    """Rename whole dotted components (top-level adaln_single -> time_embed, then DIT_RENAMES)."""
    parts = k.split(".")
    if parts[0] == "adaln_single":
        parts[0] = "time_embed"
    elif parts[0] == "audio_adaln_single":
        parts[0] = "audio_time_embed"
    table = dict(DIT_RENAMES)
    return ".".join(table.get(p, p) for p in parts)


def rename_connector(k):
    for a, b in (("text_embedding_projection.aggregate_embed.", "text_proj_in."),
                 ("text_embedding_projection.video_aggregate_embed.", "video_text_proj_in."),
                 ("text_embedding_projection.audio_aggregate_embed.", "audio_text_proj_in."),
                 ("model.diffusion_model.video_embeddings_connector.", "video_connector."),
                 ("model.diffusion_model.audio_embeddings_connector.", "audio_connector.")):
        if k.startswith(a):
            k = b + k[len(a):]
    return (k.replace("transformer_1d_blocks", "transformer_blocks").replace(".q_norm.", ".norm_q.")
            .replace(".k_norm.", ".norm_k."))


def transformer_diffusers_config(version):
    t = C.transformer_config(version)
    v23 = version == "2.3"
    return dict(
        in_channels=t["in_channels"], out_channels=t["out_channels"], patch_size=1, patch_size_t=1,
        num_attention_heads=t["num_attention_heads"], attention_head_dim=t["attention_head_dim"],
        cross_attention_dim=t["cross_attention_dim"], vae_scale_factors=(8, 32, 32),
        pos_embed_max_pos=t["positional_embedding_max_pos"][0], base_height=t["positional_embedding_max_pos"][1],
        base_width=t["positional_embedding_max_pos"][2], gated_attn=v23, cross_attn_mod=v23,
        audio_in_channels=t["audio_in_channels"], audio_out_channels=t["audio_out_channels"], audio_patch_size=1,
        audio_patch_size_t=1, audio_num_attention_heads=t["audio_num_attention_heads"],
        audio_attention_head_dim=t["audio_attention_head_dim"],
        audio_cross_attention_dim=t["audio_cross_attention_dim"], audio_scale_factor=4,
        audio_pos_embed_max_pos=t["audio_positional_embedding_max_pos"][0], audio_sampling_rate=16000,
        audio_hop_length=160, audio_gated_attn=v23, audio_cross_attn_mod=v23, num_layers=t["num_layers"],
        activation_fn="gelu-approximate", qk_norm="rms_norm_across_heads", norm_elementwise_affine=False,
        norm_eps=t["norm_eps"], caption_channels=t["caption_channels"], attention_bias=True,
        attention_out_bias=True, rope_theta=t["positional_embedding_theta"], rope_double_precision=True,
        causal_offset=1, timestep_scale_multiplier=t["timestep_scale_multiplier"],
        cross_attn_timestep_scale_multiplier=int(t["av_ca_timestep_scale_multiplier"]), rope_type="split",
        use_prompt_embeddings=not v23, use_prompt_adaln_single=v23,
    )


def connectors_diffusers_config(version):
    t = C.transformer_config(version)
    v23 = version == "2.3"
    return dict(
        caption_channels=C.TINY_GEMMA_HIDDEN, text_proj_in_factor=C.TINY_GEMMA_LAYERS + 1,
        video_connector_num_attention_heads=t["connector_num_attention_heads"],
        video_connector_attention_head_dim=t["connector_attention_head_dim"],
        video_connector_num_layers=t["connector_num_layers"], video_connector_num_learnable_registers=128,
        video_gated_attn=v23,
        audio_connector_num_attention_heads=t.get("audio_connector_num_attention_heads",
                                                  t["connector_num_attention_heads"]),
        audio_connector_attention_head_dim=t.get("audio_connector_attention_head_dim",
                                                 t["connector_attention_head_dim"]),
        audio_connector_num_layers=t["connector_num_layers"], audio_connector_num_learnable_registers=128,
        audio_gated_attn=v23, connector_rope_base_seq_len=t["connector_positional_embedding_max_pos"][0],
        rope_theta=10000.0, rope_double_precision=True, causal_temporal_positioning=False, rope_type="split",
        per_modality_projections=v23,
        # 2.3: the per-modality projections' widths (the DiT's). 2.0 has one projection to the caption
        # width: diffusers ignores these two there, but MaxDiffusion sizes both connectors from them
        # (text_encoders_ltx2.py, v_dim / a_dim), so they carry the connectors' own width.
        video_hidden_dim=t["num_attention_heads"] * t["attention_head_dim"] if v23 else C.TINY_GEMMA_HIDDEN,
        audio_hidden_dim=(t["audio_num_attention_heads"] * t["audio_attention_head_dim"] if v23
                          else C.TINY_GEMMA_HIDDEN), proj_bias=v23,
    )


def vae_diffusers_config(version):
    """AutoencoderKLLTX2Video config of the tiny VAE (ltx_tiny_configs.vae_config): encoder widths
    8 -> 16 -> 32 -> 64 -> 64. The decoder's per-stage tuples are listed in diffusers' config order
    (the reverse of the order they run in; diffusers reverses them), except upsample_type, which
    LTX2VideoDecoder3d does not reverse (run order)."""
    v = C.vae_config(version)
    enc = dict(block_out_channels=(16, 32, 64, 64), down_block_types=("LTX2VideoDownBlock3D",) * 4,
               layers_per_block=(1, 1, 1, 1, 1), spatio_temporal_scaling=(True, True, True, True),
               downsample_type=("spatial", "temporal", "spatiotemporal", "spatiotemporal"))
    if version == "2.0":
        dec = dict(decoder_block_out_channels=(16, 32, 64), decoder_layers_per_block=(1, 1, 1, 1),
                   decoder_spatio_temporal_scaling=(True, True, True), decoder_inject_noise=(False,) * 4,
                   upsample_type=("spatiotemporal",) * 3, upsample_residual=(True, True, True),
                   upsample_factor=(2, 2, 2), encoder_spatial_padding_mode=v["encoder_spatial_padding_mode"],
                   decoder_spatial_padding_mode=v["decoder_spatial_padding_mode"])
    else:
        dec = dict(decoder_block_out_channels=(16, 32, 32, 64), decoder_layers_per_block=(1, 1, 1, 1, 1),
                   decoder_spatio_temporal_scaling=(True, True, True, True), decoder_inject_noise=(False,) * 5,
                   upsample_type=("spatiotemporal", "spatiotemporal", "temporal", "spatial"),
                   upsample_residual=(False,) * 4, upsample_factor=(2, 2, 1, 2),
                   encoder_spatial_padding_mode=v["spatial_padding_mode"],
                   decoder_spatial_padding_mode=v["spatial_padding_mode"])
    return dict(in_channels=v["in_channels"], out_channels=v["out_channels"], latent_channels=v["latent_channels"],
                timestep_conditioning=v["timestep_conditioning"], patch_size=v["patch_size"], patch_size_t=1,
                resnet_norm_eps=1e-6, scaling_factor=v["scaling_factor"], encoder_causal=True,
                decoder_causal=v["causal_decoder"], spatial_compression_ratio=32, temporal_compression_ratio=8,
                **enc, **dec)


def audio_vae_diffusers_config():
    a = C.audio_vae_config()
    dd = a["model"]["params"]["ddconfig"]
    return dict(base_channels=dd["ch"], output_channels=dd["out_ch"], ch_mult=tuple(dd["ch_mult"]),
                num_res_blocks=dd["num_res_blocks"], attn_resolutions=None, in_channels=dd["in_channels"],
                resolution=dd["resolution"], latent_channels=dd["z_channels"], norm_type=dd["norm_type"],
                causality_axis=dd["causality_axis"], dropout=dd["dropout"],
                mid_block_add_attention=dd["mid_block_add_attention"],
                sample_rate=a["model"]["params"]["sampling_rate"], mel_hop_length=a["preprocessing"]["stft"]["hop_length"],
                is_causal=True, mel_bins=dd["mel_bins"], double_z=dd["double_z"])


def _gen_kwargs(g, in_channels, prefix=""):
    amp = g["resblock"] == "AMP1"
    tanh = g.get("use_tanh_at_final", True)
    final = ("tanh" if tanh else "clamp") if g.get("apply_final_activation", True) else None
    return {prefix + "in_channels": in_channels, prefix + "hidden_channels": g["upsample_initial_channel"],
            prefix + "out_channels": 2 if g.get("stereo", True) else 1,
            prefix + "upsample_kernel_sizes": g["upsample_kernel_sizes"], prefix + "upsample_factors": g["upsample_rates"],
            prefix + "resnet_kernel_sizes": g["resblock_kernel_sizes"],
            prefix + "resnet_dilations": g["resblock_dilation_sizes"],
            prefix + "act_fn": g.get("activation", "snakebeta") if amp else "leaky_relu", prefix + "antialias": amp,
            prefix + "final_act_fn": final, prefix + "final_bias": g.get("use_bias_at_final", True)}


def vocoder_diffusers(version):
    """(class, config) of the tiny vocoder: mel input is stereo x mel bins wide."""
    v = C.vocoder_config(version)
    mel_in = 2 * C.audio_vae_config()["model"]["params"]["ddconfig"]["mel_bins"]
    if version == "2.0":
        return LTX2Vocoder, dict(_gen_kwargs(v, mel_in), output_sampling_rate=v["output_sampling_rate"])
    b = v["bwe"]
    cfg = dict(_gen_kwargs(v["vocoder"], mel_in), **_gen_kwargs(b, 2 * b["num_mels"], "bwe_"),
               filter_length=b["n_fft"], hop_length=b["hop_length"], window_length=b["win_size"],
               num_mel_channels=b["num_mels"], input_sampling_rate=b["input_sampling_rate"],
               output_sampling_rate=b["output_sampling_rate"])
    return LTX2VocoderWithBWE, cfg


def rename_vae(ck):
    """vae.* -> diffusers AutoencoderKLLTX2Video names (diffusers' converter + the 2.3 fourth stage)."""
    out = convert_ltx2_vae_to_diffusers(dict(ck))
    fixed = {}
    for k, t in out.items():
        k = re.sub(r"^decoder\.up_blocks\.7\.", "decoder.up_blocks.3.upsamplers.0.", k)
        k = re.sub(r"^decoder\.up_blocks\.8\.", "decoder.up_blocks.3.", k)
        fixed[k] = t
    return fixed


VOCODER_PARTS = {"conv_pre": "conv_in", "conv_post": "conv_out", "ups": "upsamplers", "resblocks": "resnets",
                 "act_post": "act_out"}


def rename_vocoder_key(k):
    """vocoder.* (Lightricks) -> diffusers LTX2Vocoder / LTX2VocoderWithBWE name."""
    k = k[len("vocoder."):].replace(".downsample.lowpass.filter", ".downsample.filter")
    return ".".join(VOCODER_PARTS.get(p, p) for p in k.split("."))


def load_strict(model, sd, what):
    own = model.state_dict()
    missing = sorted(set(own) - set(sd))
    unexpected = sorted(set(sd) - set(own))
    if missing or unexpected:
        raise RuntimeError(f"{what}: missing {missing[:8]} unexpected {unexpected[:8]}")
    for k, v in sd.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise RuntimeError(f"{what}: {k} shape {tuple(v.shape)} vs diffusers {tuple(own[k].shape)}")
    model.load_state_dict(sd, strict=True)


def main():
    torch.manual_seed(0)
    for version in ("2.0", "2.3"):
        src = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.safetensors")
        with safe_open(src, framework="pt") as f:
            ckpt = {k: f.get_tensor(k) for k in f.keys()}
        out_dir = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-diffusers-{version}")
        shutil.rmtree(out_dir, ignore_errors=True)  # no stale shards when the shard count changes

        dit_sd, conn_sd = {}, {}
        for k, v in ckpt.items():
            if k.startswith(("model.diffusion_model.video_embeddings_connector.",
                             "model.diffusion_model.audio_embeddings_connector.", "text_embedding_projection.")):
                conn_sd[rename_connector(k)] = v
            elif k.startswith("model.diffusion_model."):
                dit_sd[rename_dit(k[len("model.diffusion_model."):])] = v

        dit = LTX2VideoTransformer3DModel(**transformer_diffusers_config(version)).to(torch.bfloat16)
        load_strict(dit, dit_sd, f"{version} transformer")
        dit.save_pretrained(os.path.join(out_dir, "transformer"), max_shard_size=SHARD_SIZE, safe_serialization=True)

        conn = LTX2TextConnectors(**connectors_diffusers_config(version)).to(torch.bfloat16)
        load_strict(conn, conn_sd, f"{version} connectors")
        conn.save_pretrained(os.path.join(out_dir, "connectors"), safe_serialization=True)

        # video VAE, audio VAE, vocoder: the same weights, renamed, strict-loaded, saved
        comp_src = {}  # diffusers "folder/name" -> Lightricks key
        vae_in = {k: v for k, v in ckpt.items() if k.startswith("vae.")}
        vae_sd = rename_vae(vae_in)
        vae_names = rename_vae({k: torch.tensor(i) for i, k in enumerate(vae_in)})  # which source each came from
        src_of = {n: list(vae_in)[int(t)] for n, t in vae_names.items()}
        vae = AutoencoderKLLTX2Video(**vae_diffusers_config(version)).to(torch.bfloat16)
        load_strict(vae, vae_sd, f"{version} vae")
        vae.save_pretrained(os.path.join(out_dir, "vae"), safe_serialization=True)
        comp_src.update({"vae/" + n: s for n, s in src_of.items()})

        a_in = {k: v for k, v in ckpt.items() if k.startswith("audio_vae.")}
        a_sd = convert_ltx2_audio_vae_to_diffusers(dict(a_in))
        a_names = convert_ltx2_audio_vae_to_diffusers({k: torch.tensor(i) for i, k in enumerate(a_in)})
        comp_src.update({"audio_vae/" + n: list(a_in)[int(t)] for n, t in a_names.items()})
        avae = AutoencoderKLLTX2Audio(**audio_vae_diffusers_config()).to(torch.bfloat16)
        load_strict(avae, a_sd, f"{version} audio_vae")
        avae.save_pretrained(os.path.join(out_dir, "audio_vae"), safe_serialization=True)

        voc_sd = {rename_vocoder_key(k): v for k, v in ckpt.items() if k.startswith("vocoder.")}
        comp_src.update({"vocoder/" + rename_vocoder_key(k): k for k in ckpt if k.startswith("vocoder.")})
        cls, vcfg = vocoder_diffusers(version)
        voc = cls(**vcfg).to(torch.bfloat16)
        load_strict(voc, voc_sd, f"{version} vocoder")
        voc.save_pretrained(os.path.join(out_dir, "vocoder"), safe_serialization=True)

        ups_file = os.path.join(WEIGHTS_DIR, "ltx2-tiny-upsampler-spatial-x2.safetensors")
        with safe_open(ups_file, framework="pt") as f:
            ucfg = json.loads(f.metadata()["config"])
            ups_sd = {k: f.get_tensor(k) for k in f.keys()}
        ups = LTX2LatentUpsamplerModel(
            in_channels=ucfg["in_channels"], mid_channels=ucfg["mid_channels"],
            num_blocks_per_stage=ucfg["num_blocks_per_stage"], dims=ucfg["dims"],
            spatial_upsample=ucfg["spatial_upsample"], temporal_upsample=ucfg["temporal_upsample"],
            rational_spatial_scale=ucfg["spatial_scale"], use_rational_resampler=ucfg["rational_resampler"],
        ).to(next(iter(ups_sd.values())).dtype)
        load_strict(ups, ups_sd, f"{version} latent_upsampler")
        ups.save_pretrained(os.path.join(out_dir, "latent_upsampler"), safe_serialization=True)

        with open(os.path.join(WEIGHTS_DIR, f"ltx2-tiny-diffusers-{version}.keys.txt"), "w") as f:
            f.write(f"# ltx2-tiny-diffusers-{version}: subfolder/name dtype shape  <-  Lightricks key\n")
            inv = {}
            for k in ckpt:
                if k.startswith(("model.diffusion_model.video_embeddings_connector.",
                                 "model.diffusion_model.audio_embeddings_connector.",
                                 "text_embedding_projection.")):
                    inv["connectors/" + rename_connector(k)] = k
                elif k.startswith("model.diffusion_model."):
                    inv["transformer/" + rename_dit(k[len("model.diffusion_model."):])] = k
            inv.update(comp_src)
            src_t = dict(ckpt)
            for k, t in ups_sd.items():
                inv["latent_upsampler/" + k] = "ltx2-tiny-upsampler-spatial-x2:" + k
                src_t["ltx2-tiny-upsampler-spatial-x2:" + k] = t
            for name in sorted(inv):
                t = src_t[inv[name]]
                f.write(f"{name} {str(t.dtype).replace('torch.', '')} {list(t.shape)}  <-  {inv[name]}\n")
        shards = sorted(os.listdir(os.path.join(out_dir, "transformer")))
        print(f"{out_dir}: transformer files {shards}")


if __name__ == "__main__":
    main()
