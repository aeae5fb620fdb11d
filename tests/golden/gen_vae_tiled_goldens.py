#!/usr/bin/env python3
"""Tiled video-VAE decode / encode and latent-upsampler goldens from ltx-core 1.0.0.

Tiled decode (tiny LTX-2.0 and 2.3 VAEs, weights/tiny/ltx2-tiny-<v>.safetensors): a normalized
latent [1, 8, 5, 3, 6] (NCDHW) decoded with VideoDecoder.tiled_decode and
TilingConfig(SpatialTilingConfig(96, 32), TemporalTilingConfig(24, 8)): 2 temporal tiles
(latent frames [0,3) and [1,5), causal shift) x 2 H tiles x 3 W tiles = 12 tiles in 4 tile shapes.
To stay small the video is stored subsampled: every frame, every DEC_STRIDE-th row and column
(offset 0), i.e. video[:, :, :, ::4, ::4] -> "tiled_decode.out_sub".
Tiled encode (same VAEs): the video v[c,f,h,w] = ((7f + 3h + 5w + 11c) mod 17) / 8 - 1 (exact in
fp32, rebuilt by the C test, so it is not stored) of 33 x 128 x 160 pixels, encoded with
VideoEncoder.tiled_encode and TilingConfig(SpatialTilingConfig(96, 64), TemporalTilingConfig(24, 16))
-> "tiled_encode.out" [1, 8, 5, 4, 5].
Latent upsampler (weights/tiny/ltx2-tiny-upsampler-<kind>.safetensors, all four kinds):
upsample_video(latent, encoder-of-tiny-2.3, upsampler) on a seeded latent [1, 8, 3, 4, 5]:
"upsampler.<kind>.in" / ".out" (normalized latents, as the two-stage pipeline uses it).
CLI input: tests/data/decode/latent_tiny.npy, a seeded fp32 [8, 3, 2, 3] latent (C, F', H', W')
for tests/cli_decode.sh.
All tensors fp32 NCDHW. Files: tests/golden/data/vae_tiled_<v>.safetensors, upsampler.safetensors.
Deterministic: seeded inputs, torch.use_deterministic_algorithms, one thread.
Run: /work/venv/bin/python tests/golden/gen_vae_tiled_goldens.py
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402

from st_write import save  # noqa: E402
from gen_vae_goldens import build  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.upsampler import LatentUpsamplerConfigurator, upsample_video  # noqa: E402
from ltx_core.model.video_vae import (  # noqa: E402
    VAE_DECODER_COMFY_KEYS_FILTER, VAE_ENCODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator,
    VideoEncoderConfigurator,
)
from ltx_core.model.video_vae.tiling import (  # noqa: E402
    SpatialTilingConfig, TemporalTilingConfig, TilingConfig,
)

SEED = 20260402
DATA_DIR = os.path.join(HERE, "data")
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
DEC_LATENT = (1, 8, 5, 3, 6)
DEC_TILING = (96, 32, 24, 8)  # tile px, overlap px, tile frames, overlap frames
DEC_STRIDE = 4
ENC_VIDEO = (1, 3, 33, 128, 160)
ENC_TILING = (96, 64, 24, 16)
UPS_LATENT = (1, 8, 3, 4, 5)
UPS_KINDS = ("spatial-x2", "spatial-x2-rational", "spatial-x1.5", "temporal-x2")


def tiling(t):
    return TilingConfig(spatial_config=SpatialTilingConfig(t[0], t[1]),
                        temporal_config=TemporalTilingConfig(t[2], t[3]))


def enc_video():
    c = torch.arange(ENC_VIDEO[1]).view(1, -1, 1, 1, 1)
    f = torch.arange(ENC_VIDEO[2]).view(1, 1, -1, 1, 1)
    h = torch.arange(ENC_VIDEO[3]).view(1, 1, 1, -1, 1)
    w = torch.arange(ENC_VIDEO[4]).view(1, 1, 1, 1, -1)
    return (((7 * f + 3 * h + 5 * w + 11 * c) % 17).float() / 8.0 - 1.0).contiguous()


def vae_case(version):
    dec = build(version, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
    enc = build(version, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    z = torch.randn(DEC_LATENT, generator=g)
    with torch.no_grad():
        video = torch.cat(list(dec.tiled_decode(z, tiling(DEC_TILING))), dim=2)
        lat = enc.tiled_encode(enc_video(), tiling(ENC_TILING))
    return {
        "tiled_decode.in": z,
        "tiled_decode.out_sub": video[:, :, :, ::DEC_STRIDE, ::DEC_STRIDE].contiguous(),
        "tiled_encode.out": lat.contiguous(),
    }, list(video.shape)


def upsampler_case(tensors):
    enc = build("2.3", VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    for i, kind in enumerate(UPS_KINDS):
        path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-upsampler-{kind}.safetensors")
        ups = SingleGPUModelBuilder(model_class_configurator=LatentUpsamplerConfigurator, model_path=path).build(
            device=torch.device("cpu"), dtype=torch.float32).eval()
        g = torch.Generator().manual_seed(SEED + 100 + i)
        z = torch.randn(UPS_LATENT, generator=g)
        with torch.no_grad():
            out = upsample_video(z, enc, ups)
        tensors[f"upsampler.{kind}.in"] = z
        tensors[f"upsampler.{kind}.out"] = out.contiguous()


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(DATA_DIR, exist_ok=True)
    common = {"reference": "ltx-core 1.0.0", "layout": "NCDHW", "seed": SEED,
              "decode_tiling": DEC_TILING, "decode_stride": DEC_STRIDE, "encode_tiling": ENC_TILING,
              "encode_video": "((7f + 3h + 5w + 11c) mod 17) / 8 - 1", "encode_video_shape": ENC_VIDEO}
    for version in ("2.0", "2.3"):
        tensors, full = vae_case(version)
        meta = dict(common, version=version, decode_full_shape=full,
                    shapes={k: list(v.shape) for k, v in tensors.items()})
        path = os.path.join(DATA_DIR, f"vae_tiled_{version}.safetensors")
        save(tensors, path, metadata={"vae_tiled_goldens": json.dumps(meta, sort_keys=True), "torch": torch.__version__})
        print(f"{path}: {os.path.getsize(path)} bytes, full video {full}")
    tensors = {}
    upsampler_case(tensors)
    meta = dict(reference="ltx-core 1.0.0 upsample_video (tiny 2.3 VAE statistics)", layout="NCDHW", seed=SEED,
                kinds=UPS_KINDS, shapes={k: list(v.shape) for k, v in tensors.items()})
    path = os.path.join(DATA_DIR, "upsampler.safetensors")
    save(tensors, path, metadata={"upsampler_goldens": json.dumps(meta, sort_keys=True), "torch": torch.__version__})
    print(f"{path}: {os.path.getsize(path)} bytes")
    import numpy as np
    cli_dir = os.path.join(ROOT, "tests", "data", "decode")
    os.makedirs(cli_dir, exist_ok=True)
    g = torch.Generator().manual_seed(SEED + 200)
    np.save(os.path.join(cli_dir, "latent_tiny.npy"), torch.randn((8, 3, 2, 3), generator=g).numpy())


if __name__ == "__main__":
    main()
