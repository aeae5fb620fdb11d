#!/usr/bin/env python3
"""Writes weights/tiny/README.md: what each tiny file is, the exact configs, sizes and sha256.

Run after gen_tiny_ltx2.py and gen_tiny_diffusers.py (regen.sh does), so the table always matches
the committed bytes.
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ltx_tiny_configs as C  # noqa: E402

WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")

HEADER = """# Tiny LTX-2 checkpoints (generated — do not edit)

Seeded random weights in the **real** checkpoint layouts, produced by the reference implementation
(Lightricks `ltx-core` 1.0.0 / `diffusers` 0.42.1, versions pinned in `tests/golden/requirements.txt`).
Regenerate with `tests/golden/regen.sh` (or `python tests/golden/gen_tiny_ltx2.py &&
python tests/golden/gen_tiny_diffusers.py && python tests/golden/gen_tiny_split.py &&
python tests/golden/gen_tiny_readme.py`).
Layout facts and their sources: `tests/golden/LAYOUT_NOTES.md`.

| file | what |
|---|---|
| `ltx2-tiny-2.0.safetensors` | LTX-2.0 single file: DiT + connectors (`model.diffusion_model.*`), `text_embedding_projection.aggregate_embed`, video VAE (`vae.*`, 2.0-style decoder, reflect padding), audio VAE (`audio_vae.*`), HiFi-GAN vocoder (`vocoder.*`); bf16; `__metadata__["config"]` |
| `ltx2-tiny-2.3.safetensors` | LTX-2.3 single file: gated attention, cross-attention AdaLN + prompt AdaLN, V2 text projection (`video_/audio_aggregate_embed`), 2.3-style VAE decoder (zeros padding), BigVGAN vocoder + BWE (`vocoder.vocoder.*`, `vocoder.bwe_generator.*`, `vocoder.mel_stft.*`) |
| `ltx2-tiny-upsampler-*.safetensors` | standalone latent upsamplers (unprefixed keys, own `config`): `spatial-x2` (plain pixel shuffle, like 2.3 x2), `spatial-x2-rational` (rational resampler at scale 2, like 2.0 x2), `spatial-x1.5`, `temporal-x2` |
| `ltx2-tiny-diffusers-<v>/transformer/` | the same DiT weights in diffusers names/config, `save_pretrained` with small shards (`diffusion_pytorch_model.safetensors.index.json` + N shards) |
| `ltx2-tiny-diffusers-<v>/connectors/` | the same text projection + connectors as diffusers `LTX2TextConnectors` |
| `ltx2-tiny-diffusers-<v>/vae/`, `audio_vae/`, `vocoder/` | the same video VAE (`AutoencoderKLLTX2Video`), audio VAE (`AutoencoderKLLTX2Audio`) and vocoder (`LTX2Vocoder`; 2.3: `LTX2VocoderWithBWE`), renamed by diffusers' conversion rules (the 2.3 decoder's fourth stage and the BigVGAN/BWE parts by their pattern, see `gen_tiny_diffusers.py`); no `latent_upsampler/` |
| `split-2.3/*.safetensors` | the 2.3 single file cut into per-component files as users download them (`gen_tiny_split.py` says which layout and why): transformer, connectors (no config), bare-key video VAE, audio VAE + vocoder |
| `*.keys.txt` | every tensor: `name dtype shape` (diffusers ones also give the Lightricks source key) |

Checks done by the generators: every ltx-core component reloads from the single file through
`SingleGPUModelBuilder` + the real key SDOps with no uninitialised tensor and bit-identical values;
the diffusers models accept the renamed weights with `strict=True`.

Tiny channel plumbing is consistent end to end (text features 96 -> connectors -> DiT; video latent 8
channels; audio latent 2 ch x 16 mel = 32 features; audio VAE mel 64 -> vocoder 128 input channels).
Deviations from real metadata forced by the tiny sizes:
"""


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    lines = [HEADER]
    for d in C.TINY_DEVIATIONS:
        lines.append(f"- {d}\n")
    lines.append("\n## Configs (`__metadata__[\"config\"]`, exactly as stored)\n")
    for version in ("2.0", "2.3"):
        lines.append(f"\n### ltx2-tiny-{version}.safetensors\n\n```json\n")
        lines.append(json.dumps(C.full_config(version), indent=1))
        lines.append("\n```\n")
    lines.append("\n### Upsamplers\n\n```json\n" + json.dumps(C.upsampler_configs(), indent=1) + "\n```\n")
    lines.append("\n## Files\n\n| file | bytes | sha256 |\n|---|---:|---|\n")
    total = 0
    for dirpath, _, files in sorted(os.walk(WEIGHTS_DIR)):
        for name in sorted(files):
            if name == "README.md":
                continue
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, WEIGHTS_DIR)
            size = os.path.getsize(p)
            total += size
            lines.append(f"| `{rel}` | {size} | `{sha256(p)}` |\n")
    lines.append(f"\nTotal: {total} bytes.\n")
    with open(os.path.join(WEIGHTS_DIR, "README.md"), "w") as f:
        f.write("".join(lines))
    print(f"wrote weights/tiny/README.md (total {total} bytes)")


if __name__ == "__main__":
    main()
