#!/usr/bin/env python3
"""Video-VAE goldens (decoder per block, encoder mean latent) for the tiny LTX-2.0 / 2.3 checkpoints.

For each version it builds ltx-core 1.0.0's VideoDecoder / VideoEncoder through the real
SingleGPUModelBuilder + SDOps from weights/tiny/ltx2-tiny-<v>.safetensors (bf16 in the file, cast
exactly to fp32 here), runs them in fp32 on the CPU on seeded inputs, and records with forward
hooks the output of every decoder block and the final video. Written to
tests/golden/data/vae_<v>.safetensors (all fp32).

Tensor names follow the ltx-core module paths of the VideoDecoder / VideoEncoder modules
(checkpoint prefix `vae.` stripped), with a suffix saying which value it is:
  decoder.in                          normalized latent fed to VideoDecoder.forward
  decoder.un_normalize.out            latent after per_channel_statistics.un_normalize (= conv_in input)
  decoder.conv_in.out, decoder.up_blocks.<i>.out, and decoder.up_blocks.<i>.res_blocks.<j>.out
                                      when a res_x block has more than one layer (else it equals the block's)
  decoder.conv_norm_out.out           after the final PixelNorm
  decoder.out                         the decoded video (after unpatchify)
  decoder_f1.in / decoder_f1.out      a second decode of a single latent frame (F'=1 -> 1 frame)
  encoder.in                          the pixel video fed to VideoEncoder.forward
  encoder.conv_in.out, encoder.down_blocks.<i>.out, encoder.conv_out.out (129 = 128 means + logvar
  in real files; latent_channels + 1 here)
  encoder.out                         the normalized mean latent VideoEncoder.forward returns
Layout: every tensor is PyTorch NCDHW ([B, C, T, H, W]); the C engine is channels-last (NDHWC) and
transposes when comparing. The metadata key "vae_goldens" (JSON) repeats this and lists shapes.

Deterministic: seeded inputs, torch.use_deterministic_algorithms, one thread.
Run: /work/venv/bin/python tests/golden/gen_vae_goldens.py
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
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.video_vae import (  # noqa: E402
    VAE_DECODER_COMFY_KEYS_FILTER, VAE_ENCODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator,
    VideoEncoderConfigurator,
)

SEED = 20260317
DATA_DIR = os.path.join(HERE, "data")
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
# Latent grid of the main decode: F'=3 (17 frames) exercises first/middle/last temporal padding,
# H' != W' catches H/W swaps in patch order and reflect padding. Small enough for < 3 MB of data.
DEC_LATENT = (1, 8, 3, 2, 3)
DEC_LATENT_F1 = (1, 8, 1, 2, 3)
# Encoder input: 9 frames (8k+1), 32 x 64 pixels -> latent [1, 8, 2, 1, 2].
ENC_VIDEO = (1, 3, 9, 32, 64)


def build(version, configurator, sd_ops):
    path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.safetensors")
    builder = SingleGPUModelBuilder(model_class_configurator=configurator, model_path=path, model_sd_ops=sd_ops)
    model = builder.build(device=torch.device("cpu"), dtype=torch.float32)
    for k, v in model.state_dict().items():
        if v.device.type == "meta":
            raise RuntimeError(f"{version}: {k} left uninitialised by ltx-core")
    return model.eval()


def hook_outputs(model, prefix, names, store):
    """Register forward hooks on the named submodules; outputs go to store[prefix + name + '.out']."""
    handles = []
    mods = dict(model.named_modules())
    for n in names:
        def hook(_m, _inp, out, n=n):
            store[f"{prefix}.{n}.out"] = out.detach().clone().float().contiguous()
        handles.append(mods[n].register_forward_hook(hook))
    return handles


def decoder_goldens(version, tensors, shapes):
    dec = build(version, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
    if dec.timestep_conditioning:
        raise RuntimeError("tiny decoders are expected without timestep conditioning")
    names = ["conv_in"]
    for i, blk in enumerate(dec.up_blocks):
        # With one layer a res block's output is the block's output: stored once, to stay small.
        if hasattr(blk, "res_blocks") and len(blk.res_blocks) > 1:
            names += [f"up_blocks.{i}.res_blocks.{j}" for j in range(len(blk.res_blocks))]
        names.append(f"up_blocks.{i}")
    names.append("conv_norm_out")
    store = {}
    handles = hook_outputs(dec, "decoder", names, store)

    def pre_hook(_m, args):
        store["decoder.un_normalize.out"] = args[0].detach().clone().contiguous()
    handles.append(dec.conv_in.register_forward_pre_hook(pre_hook))

    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    z = torch.randn(DEC_LATENT, generator=g)
    with torch.no_grad():
        video = dec(z)
    tensors["decoder.in"] = z
    tensors["decoder.un_normalize.out"] = store.pop("decoder.un_normalize.out")
    for n in names:
        tensors[f"decoder.{n}.out"] = store[f"decoder.{n}.out"]
    tensors["decoder.out"] = video.contiguous()
    store.clear()
    for h in handles:
        h.remove()

    z1 = torch.randn(DEC_LATENT_F1, generator=g)
    with torch.no_grad():
        v1 = dec(z1)
    tensors["decoder_f1.in"] = z1
    tensors["decoder_f1.out"] = v1.contiguous()
    shapes["decoder_names"] = names


def encoder_goldens(version, tensors, shapes):
    enc = build(version, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    names = ["conv_in"] + [f"down_blocks.{i}" for i in range(len(enc.down_blocks))] + ["conv_out"]
    store = {}
    handles = hook_outputs(enc, "encoder", names, store)
    g = torch.Generator().manual_seed(SEED + 10 + (0 if version == "2.0" else 1))
    x = torch.rand(ENC_VIDEO, generator=g) * 2 - 1
    with torch.no_grad():
        lat = enc(x)
    tensors["encoder.in"] = x
    for n in names:
        tensors[f"encoder.{n}.out"] = store[f"encoder.{n}.out"]
    tensors["encoder.out"] = lat.contiguous()
    for h in handles:
        h.remove()
    shapes["encoder_names"] = names


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(DATA_DIR, exist_ok=True)
    for version in ("2.0", "2.3"):
        tensors, info = {}, {}
        decoder_goldens(version, tensors, info)
        encoder_goldens(version, tensors, info)
        for k, v in tensors.items():
            if v.dtype != torch.float32:
                raise RuntimeError(f"{k}: not fp32")
        meta = {
            "vae_goldens": json.dumps({
                "version": version,
                "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
                "layout": "NCDHW (PyTorch [B, C, T, H, W]) for every tensor; video is RGB in channel order",
                "dtype": "float32 weights (exact cast of the bf16 file), float32 compute on CPU",
                "reference": "ltx-core 1.0.0 VideoDecoder/VideoEncoder via SingleGPUModelBuilder",
                "seed": SEED,
                "decoder_names": info["decoder_names"],
                "encoder_names": info["encoder_names"],
                "shapes": {k: list(v.shape) for k, v in tensors.items()},
            }, sort_keys=True),
            "torch": torch.__version__,
        }
        path = os.path.join(DATA_DIR, f"vae_{version}.safetensors")
        save(tensors, path, metadata=meta)
        print(f"{path}: {os.path.getsize(path)} bytes, {len(tensors)} tensors, "
              f"video {tuple(tensors['decoder.out'].shape)} |v| {tensors['decoder.out'].abs().mean():.4f}")


if __name__ == "__main__":
    main()
