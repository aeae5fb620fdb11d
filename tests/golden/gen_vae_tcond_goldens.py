#!/usr/bin/env python3
"""Timestep-conditioned video-VAE decoder goldens (decode_timestep, decode_noise_scale, inject_noise).

No LTX-2 checkpoint has a timestep-conditioned decoder, so this builds one with ltx-core 1.0.0's
own VideoDecoderConfigurator (timestep_conditioning=True, two res_x blocks with inject_noise) from
a tiny config, fills every parameter from a seeded generator (rounded to bf16, so the bf16 file and
the fp32 reference hold the same numbers), and writes:

  tests/golden/data/vae_tcond_tiny.safetensors   the checkpoint, single-file layout: `vae.decoder.*`,
                                                 `vae.per_channel_statistics.*` (bf16) and the
                                                 metadata "config" JSON with its `vae` section
  tests/golden/data/vae_tcond.safetensors        goldens (fp32, NCDHW):
      decoder.in                  normalized latent
      decoder.un_normalize.out    noise-mixed, un-normalized latent (conv_in input)
      decoder.conv_in.out, decoder.up_blocks.<i>.out, decoder.up_blocks.<i>.res_blocks.<j>.out
      decoder.conv_norm_out.out   after the final PixelNorm (before the last scale/shift)
      decoder.out                 decoded video
      noise.<k>                   the k-th torch.randn draw of the forward, in draw order: noise.0
                                  is the latent noise [B, C, F', H', W'], then one [H, W] draw per
                                  inject_noise site (conv1 then conv2 of each res block, block order)

The noise is recorded by wrapping torch.randn during the forward, so the C test can feed exactly
the same values through the decoder's noise callback.
Run: /work/venv/bin/python tests/golden/gen_vae_tcond_goldens.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402

from st_write import save  # noqa: E402
from ltx_core.model.video_vae import VideoDecoderConfigurator  # noqa: E402

SEED = 20260318
DATA_DIR = os.path.join(HERE, "data")
# Batch 2 checks that the spatial noise and the timestep embedding broadcast over the batch;
# F'=2 (9 frames) and a 2x2 latent keep the files small (zeros padding allows any size).
LATENT = (2, 8, 2, 2, 2)
# Not ltx-core's defaults (0.05 / 0.025), so the test proves both are plumbed through.
DECODE_TIMESTEP = 0.07
DECODE_NOISE_SCALE = 0.04

CONFIG = {
    "vae": {
        "_class_name": "CausalVideoAutoencoder",
        "dims": 3,
        "in_channels": 3,
        "out_channels": 3,
        "latent_channels": 8,
        "decoder_blocks": [
            ["res_x", {"num_layers": 1, "inject_noise": True}],
            ["compress_all", {"residual": True, "multiplier": 2}],
            ["res_x", {"num_layers": 2, "inject_noise": True}],
            ["compress_all", {"residual": True, "multiplier": 2}],
            ["res_x", {"num_layers": 1, "inject_noise": False}],
            ["compress_all", {"multiplier": 2}],
            ["res_x", {"num_layers": 1, "inject_noise": True}],
        ],
        "norm_layer": "pixel_norm",
        "patch_size": 4,
        "causal_decoder": False,
        "timestep_conditioning": True,
        "spatial_padding_mode": "zeros",
        "decoder_base_channels": 4,
    }
}


def fill(model, g):
    """Seeded bf16-exact parameters: conv/linear ~ N(0, 1/fan_in), tables and noise scales ~ 0.3 N(0,1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name == "timestep_scale_multiplier":
                continue  # keep ltx-core's 1000
            if p.dim() >= 2 and "scale_shift_table" not in name and "per_channel_scale" not in name:
                fan_in = p[0].numel()
                v = torch.randn(p.shape, generator=g) / fan_in ** 0.5
            else:
                v = torch.randn(p.shape, generator=g) * 0.3
            p.copy_(v.to(torch.bfloat16).float())
        pcs = model.per_channel_statistics
        c = pcs.get_buffer("mean-of-means").numel()
        pcs.get_buffer("mean-of-means").copy_((torch.randn(c, generator=g) * 0.2).to(torch.bfloat16).float())
        pcs.get_buffer("std-of-means").copy_((torch.rand(c, generator=g) + 0.5).to(torch.bfloat16).float())


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(DATA_DIR, exist_ok=True)
    g = torch.Generator().manual_seed(SEED)
    dec = VideoDecoderConfigurator.from_config(CONFIG).float().eval()
    if not dec.timestep_conditioning:
        raise RuntimeError("expected a timestep-conditioned decoder")
    fill(dec, g)

    ckpt = {}
    for k, v in dec.state_dict().items():
        key = ("vae." + k) if k.startswith("per_channel_statistics.") else ("vae.decoder." + k)
        ckpt[key] = v.detach().to(torch.bfloat16).contiguous()
    ckpt_path = os.path.join(DATA_DIR, "vae_tcond_tiny.safetensors")
    save(ckpt, ckpt_path, metadata={"config": json.dumps(CONFIG)})

    names = ["conv_in"]
    for i, blk in enumerate(dec.up_blocks):
        if hasattr(blk, "res_blocks") and len(blk.res_blocks) > 1:
            names += [f"up_blocks.{i}.res_blocks.{j}" for j in range(len(blk.res_blocks))]
        names.append(f"up_blocks.{i}")
    names.append("conv_norm_out")
    store, handles = {}, []
    mods = dict(dec.named_modules())
    for n in names:
        def hook(_m, _inp, out, n=n):
            store[n] = out.detach().clone().contiguous()
        handles.append(mods[n].register_forward_hook(hook))

    def pre_hook(_m, args):
        store["un_normalize"] = args[0].detach().clone().contiguous()
    handles.append(dec.conv_in.register_forward_pre_hook(pre_hook))

    z = torch.randn(LATENT, generator=g)
    draws = []
    orig_randn = torch.randn

    def recording_randn(*args, **kwargs):
        t = orig_randn(*args, **kwargs)
        draws.append(t.detach().clone().contiguous())
        return t

    dec.decode_noise_scale = DECODE_NOISE_SCALE
    noise_gen = torch.Generator().manual_seed(SEED + 1)
    torch.randn = recording_randn
    try:
        with torch.no_grad():
            video = dec(z, timestep=torch.full((LATENT[0],), DECODE_TIMESTEP), generator=noise_gen)
    finally:
        torch.randn = orig_randn
    for h in handles:
        h.remove()

    tensors = {"decoder.in": z, "decoder.un_normalize.out": store["un_normalize"]}
    for n in names:
        tensors[f"decoder.{n}.out"] = store[n]
    tensors["decoder.out"] = video.contiguous()
    for k, d in enumerate(draws):
        tensors[f"noise.{k}"] = d
    meta = {
        "vae_tcond_goldens": json.dumps({
            "checkpoint": "tests/golden/data/vae_tcond_tiny.safetensors",
            "layout": "NCDHW for 5-D tensors; noise.<k> in torch.randn draw order ([H, W] for inject_noise)",
            "reference": "ltx-core 1.0.0 VideoDecoder (VideoDecoderConfigurator, timestep_conditioning)",
            "decode_timestep": DECODE_TIMESTEP,
            "decode_noise_scale": DECODE_NOISE_SCALE,
            "seed": SEED,
            "names": names,
            "n_noise": len(draws),
            "shapes": {k: list(v.shape) for k, v in tensors.items()},
        }, sort_keys=True),
        "torch": torch.__version__,
    }
    path = os.path.join(DATA_DIR, "vae_tcond.safetensors")
    save(tensors, path, metadata=meta)
    print(f"{ckpt_path}: {os.path.getsize(ckpt_path)} bytes, {len(ckpt)} tensors")
    print(f"{path}: {os.path.getsize(path)} bytes, {len(draws)} noise draws, video {tuple(video.shape)}")


if __name__ == "__main__":
    main()
