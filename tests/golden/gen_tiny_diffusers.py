#!/usr/bin/env python3
"""diffusers-format tiny LTX-2 directories holding the SAME weights as weights/tiny/ltx2-tiny-*.safetensors.

Reads the Lightricks-layout tiny checkpoints written by gen_tiny_ltx2.py, renames the DiT and the
text-connector keys to diffusers names (the rename rules of diffusers'
scripts/convert_ltx2_to_diffusers.py, as summarised in the DiT spec section 2.3/2.4), loads them
with strict=True into diffusers' own LTX2VideoTransformer3DModel / LTX2TextConnectors built from
the equivalent tiny diffusers config, and saves with save_pretrained:
  weights/tiny/ltx2-tiny-diffusers-<version>/transformer/  (sharded: index.json + 2+ shards)
  weights/tiny/ltx2-tiny-diffusers-<version>/connectors/
A strict load is the check: every diffusers parameter must be provided by exactly one renamed key.
(VAE / audio VAE / vocoder subfolders are not produced yet; see README.)
"""
import os
import shutil
import sys

import torch
from safetensors import safe_open

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ltx_tiny_configs as C  # noqa: E402
import torchaudio_stub  # noqa: E402,F401  (before diffusers)

from diffusers import LTX2VideoTransformer3DModel  # noqa: E402
from diffusers.pipelines.ltx2.connectors import LTX2TextConnectors  # noqa: E402

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
            for name in sorted(inv):
                t = ckpt[inv[name]]
                f.write(f"{name} {str(t.dtype).replace('torch.', '')} {list(t.shape)}  <-  {inv[name]}\n")
        shards = sorted(os.listdir(os.path.join(out_dir, "transformer")))
        print(f"{out_dir}: transformer files {shards}")


if __name__ == "__main__":
    main()
