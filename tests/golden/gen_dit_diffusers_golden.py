#!/usr/bin/env python3
"""Golden of diffusers' own LTX-2 transformer (diffusers 0.42.1 LTX2VideoTransformer3DModel), fp32 CPU.

Loads weights/tiny/ltx2-tiny-diffusers-<v>/transformer with from_pretrained (bf16 weights upcast to
fp32, the same values as the single file), feeds it the inputs of gen_dit_goldens.py (batch 2,
per-token timesteps with masked tokens, sigma_video != sigma_audio, left-padded text) and records
the outputs for use_cross_timestep True (what LTX2Pipeline passes; ltx2c LTX2_DIT_AV_TS_CROSS_SIGMA,
the --semantics diffusers rule) and False (the transformer's default; LTX2_DIT_AV_TS_OWN).

Input conventions (ltx-core Modality -> diffusers forward arguments):
  latent [B,T,C]          -> hidden_states / audio_hidden_states (same token layout)
  timesteps (sigma*mask)  -> timestep / audio_timestep = timesteps * timestep_scale_multiplier
                             ([B,T]: diffusers' time_embed flattens and views per token)
  sigma [B]               -> sigma / audio_sigma = sigma * 1000 (diffusers expects the scaled value:
                             LTX2Pipeline passes sigma=timestep); with use_cross_timestep the video
                             A/V AdaLN reads audio_sigma and vice versa
  positions [B,n,T,2]     -> video_coords / audio_coords (the same [start, end) bounds)
  context                 -> encoder_hidden_states / audio_encoder_hidden_states (2.0: caption_channels
                             wide, projected inside by caption_projection, use_prompt_embeddings)
  context_mask (1 keep)   -> encoder_attention_mask (diffusers: (1-m) * -10000 additive; ltx-core:
                             (m-1) * finfo.max; both give exp() == 0 for masked keys here)
Written to tests/golden/data/dit_diffusers_<v>.safetensors: input.* (as dit_blocks_<v>),
output.cross.{video,audio}, output.own.{video,audio}. Also prints rel-L2 against ltx-core 1.0.0
(cross mode), which must agree to fp32 noise (PARITY.md).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402
from safetensors import safe_open  # noqa: E402

from st_write import save  # noqa: E402

import gen_dit_goldens as G  # noqa: E402
from ltx_core.guidance.perturbations import BatchedPerturbationConfig  # noqa: E402
from diffusers import LTX2VideoTransformer3DModel  # noqa: E402


def rel_l2(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def record(version):
    torch.manual_seed(G.SEED)
    with safe_open(os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-{version}.safetensors"), "pt") as f:
        cfg = json.loads(f.metadata()["config"])["transformer"]
    video, audio = G.make_inputs(version, cfg)
    tdir = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-diffusers-{version}", "transformer")
    model = LTX2VideoTransformer3DModel.from_pretrained(tdir, torch_dtype=torch.float32).eval()
    mult = float(model.config.timestep_scale_multiplier)
    out = {}
    for m, mod in (("video", video), ("audio", audio)):
        out[f"input.{m}.latent"] = mod.latent
        out[f"input.{m}.positions"] = mod.positions
        out[f"input.{m}.timesteps"] = mod.timesteps
        out[f"input.{m}.sigma"] = mod.sigma
        out[f"input.{m}.context"] = mod.context
    out["input.context_mask"] = video.context_mask.float()
    for mode, cross in (("cross", True), ("own", False)):
        with torch.no_grad():
            vx, ax = model(
                hidden_states=video.latent, audio_hidden_states=audio.latent,
                encoder_hidden_states=video.context, audio_encoder_hidden_states=audio.context,
                timestep=video.timesteps * mult, audio_timestep=audio.timesteps * mult,
                sigma=video.sigma * mult, audio_sigma=audio.sigma * mult,
                encoder_attention_mask=video.context_mask, audio_encoder_attention_mask=audio.context_mask,
                video_coords=video.positions, audio_coords=audio.positions,
                use_cross_timestep=cross, return_dict=False)
        out[f"output.{mode}.video"] = vx
        out[f"output.{mode}.audio"] = ax
    # diffusers vs ltx-core 1.0.0 on the same inputs (cross mode = ltx-core 1.0.0's rule)
    lc, _ = G.load_model(version)
    with torch.no_grad():
        lvx, lax = lc(video, audio, BatchedPerturbationConfig.empty(G.BATCH))
    ev, ea = rel_l2(out["output.cross.video"], lvx), rel_l2(out["output.cross.audio"], lax)
    tensors = {k: v.detach().contiguous().float() for k, v in sorted(out.items())}
    meta = {"generator": "tests/golden/gen_dit_diffusers_golden.py",
            "checkpoint": f"weights/tiny/ltx2-tiny-diffusers-{version}/transformer",
            "reference": "diffusers 0.42.1 LTX2VideoTransformer3DModel.forward, fp32 CPU",
            "torch": torch.__version__,
            "vs_ltx_core_rel_l2": json.dumps({"video": ev, "audio": ea})}
    path = os.path.join(HERE, "data", f"dit_diffusers_{version}.safetensors")
    save(tensors, path, metadata=meta)
    print(f"{path}: {os.path.getsize(path)} bytes; diffusers vs ltx-core rel-L2 video {ev:.3g} audio {ea:.3g}")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
