#!/usr/bin/env python3
"""Split-file tiny LTX-2.3 checkpoint: the SAME weights as weights/tiny/ltx2-tiny-2.3.safetensors,
cut into one file per component the way users download them, in weights/tiny/split-2.3/:

  transformer.safetensors  the DiT, `model.diffusion_model.*` (connectors excluded), metadata config
                           with the "transformer" section only
  connectors.safetensors   `model.diffusion_model.{video,audio}_embeddings_connector.*` and
                           `text_embedding_projection.*`, no metadata (its config is the
                           transformer section, which the engine takes from transformer.safetensors)
  video_vae.safetensors    the video VAE with bare `encoder.*` / `decoder.*` /
                           `per_channel_statistics.*` keys, metadata config {"vae": ...}
  audio_vae.safetensors    `audio_vae.*` and `vocoder.*` in one file, metadata config
                           {"audio_vae": ..., "vocoder": ...}

Why these layouts (public sources, read for facts only):
- Kijai/LTXV2_comfy publishes `diffusion_models/*transformer_only*`, `text_encoders/*embeddings_connector*`,
  `VAE/LTX2_video_vae_bf16.safetensors` and `VAE/LTX2_audio_vae_bf16.safetensors` as separate files
  (file names as listed in public ComfyUI setups, e.g. typedrat/nix-config comfyui/models/ltx2/vae.nix).
- ComfyUI's LTXVAudioVAELoader (comfy/ldm/lightricks/vae/audio_vae.py) builds the audio VAE AND the
  vocoder from one file and asserts metadata config has both "audio_vae" and "vocoder" sections.
- spec/ltx2_vae_audio_spec.md 2.1: newer split VAE files use bare encoder.* / decoder.* /
  per_channel_statistics.* keys (ltx-core accepts both).
- ltx-pipelines documents split --transformer-path / --video-vae-path / --audio-vae-path files
  (spec/ecosystem_users.md, CLI table).
Exact key prefixes of those third-party files could not be checked here (no downloads); the engine
accepts each component prefixed or bare, so this set mixes both.
"""
import json
import os
import sys

from safetensors import safe_open
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
VERSION = "2.3"
CONNECTOR_PREFIXES = ("model.diffusion_model.video_embeddings_connector.",
                      "model.diffusion_model.audio_embeddings_connector.", "text_embedding_projection.")


def main():
    src = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{VERSION}.safetensors")
    with safe_open(src, framework="pt") as f:
        ck = {k: f.get_tensor(k) for k in f.keys()}
        cfg = json.loads(f.metadata()["config"])
    out = os.path.join(WEIGHTS_DIR, f"split-{VERSION}")
    os.makedirs(out, exist_ok=True)
    parts = {
        "transformer": ({k: v for k, v in ck.items()
                         if k.startswith("model.diffusion_model.") and not k.startswith(CONNECTOR_PREFIXES)},
                        {"transformer": cfg["transformer"]}),
        "connectors": ({k: v for k, v in ck.items() if k.startswith(CONNECTOR_PREFIXES)}, None),
        "video_vae": ({k[len("vae."):]: v for k, v in ck.items() if k.startswith("vae.")}, {"vae": cfg["vae"]}),
        "audio_vae": ({k: v for k, v in ck.items() if k.startswith(("audio_vae.", "vocoder."))},
                      {"audio_vae": cfg["audio_vae"], "vocoder": cfg["vocoder"]}),
    }
    n = 0
    for name, (sd, conf) in parts.items():
        meta = {"config": json.dumps(conf)} if conf else None
        save_file({k: v.contiguous() for k, v in sd.items()}, os.path.join(out, f"{name}.safetensors"), metadata=meta)
        n += len(sd)
    if n != len(ck):
        raise RuntimeError(f"split files hold {n} tensors, the single file {len(ck)}")
    print(f"{out}: {', '.join(parts)} ({n} tensors)")


if __name__ == "__main__":
    main()
