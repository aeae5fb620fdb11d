#!/usr/bin/env python3
"""Audio goldens (audio VAE decoder per block, vocoder per stage, 2.3 bandwidth extension) for the
tiny LTX-2.0 / 2.3 checkpoints.

For each version it builds ltx-core 1.0.0's AudioDecoder and Vocoder / VocoderWithBWE through the
real SingleGPUModelBuilder + SDOps from weights/tiny/ltx2-tiny-<v>.safetensors (bf16 in the file,
cast exactly to fp32 here), runs them in fp32 on the CPU on a seeded latent, and records with
forward hooks every stage. The vocoder is fed the decoder's own output (the pipeline chain).
Written to tests/golden/data/audio_<v>.safetensors (all fp32).

Names (PyTorch layouts: decoder [B, C, T, F], vocoder [B, C, L]):
  decoder.in                         normalized latent [B, z, T', F'] fed to AudioDecoder.forward
  decoder.un_normalize.out           after patchify -> per-channel un-normalize -> unpatchify
  decoder.conv_in.out, decoder.mid.block_1.out, decoder.mid.block_2.out,
  decoder.up.<l>.block.<b>.out, decoder.up.<l>.upsample.out, decoder.conv_out.out
  decoder.out                        mel [B, 2, 4T'-3, mel_bins] after the crop / pad
  2.0:  vocoder.in (= decoder.out), vocoder.conv_pre.out, vocoder.ups.<i>.out,
        vocoder.resblocks.<j>.out, vocoder.act_post.out, vocoder.conv_post.out, vocoder.out
  2.3:  vocoder.vocoder.<same as 2.0 stages>   (BigVGAN-v2, 16 kHz, clamped)
        vocoder.mel_stft.magnitude          |STFT| of the (padded) 16 kHz waveform [B*2, F, Tm]
        vocoder.bwe_generator.in            log-mel fed to the BWE generator [B, 2, Tm, mels]
        vocoder.bwe_generator.<stages>      (no final activation)
        vocoder.resampler.out               x3 Hann-sinc upsampled skip
        vocoder.out                         final 48 kHz waveform
Deterministic: seeded inputs, torch.use_deterministic_algorithms, one thread.
Run: /work/venv/bin/python tests/golden/gen_audio_goldens.py
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
from ltx_core.model.audio_vae import (  # noqa: E402
    AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, VOCODER_COMFY_KEYS_FILTER, AudioDecoderConfigurator,
    VocoderConfigurator, VocoderWithBWE,
)

SEED = 20260318
DATA_DIR = os.path.join(HERE, "data")
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
# Latent [B, z_channels, T', latent mel bins]: T'=6 -> 21 mel frames (the causal upsample drops
# its first row twice: 6 -> 11 -> 21). B=1 keeps each file under 2 MB.
LATENT = (1, 2, 6, 16)


def build(version, configurator, sd_ops):
    path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.safetensors")
    builder = SingleGPUModelBuilder(model_class_configurator=configurator, model_path=path, model_sd_ops=sd_ops)
    model = builder.build(device=torch.device("cpu"), dtype=torch.float32)
    for k, v in list(model.state_dict().items()) + list(model.named_buffers()):
        if v.device.type == "meta":
            raise RuntimeError(f"{version}: {k} left uninitialised by ltx-core")
    return model.eval()


def hook(mod, name, store):
    def fn(_m, _inp, out):
        store[name] = out.detach().clone().float().contiguous()
    return mod.register_forward_hook(fn)


def generator_hooks(voc, prefix, store):
    hs = [hook(voc.conv_pre, f"{prefix}.conv_pre.out", store)]
    for i, u in enumerate(voc.ups):
        hs.append(hook(u, f"{prefix}.ups.{i}.out", store))
    for j, r in enumerate(voc.resblocks):
        hs.append(hook(r, f"{prefix}.resblocks.{j}.out", store))
    hs.append(hook(voc.act_post, f"{prefix}.act_post.out", store))
    hs.append(hook(voc.conv_post, f"{prefix}.conv_post.out", store))
    hs.append(hook(voc, f"{prefix}.out", store))
    return hs


def run(version):
    store = {}
    dec = build(version, AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER)
    hs = [hook(dec.conv_in, "decoder.conv_in.out", store),
          hook(dec.mid.block_1, "decoder.mid.block_1.out", store),
          hook(dec.mid.block_2, "decoder.mid.block_2.out", store),
          hook(dec.conv_out, "decoder.conv_out.out", store)]
    for lvl, stage in enumerate(dec.up):
        for b, blk in enumerate(stage.block):
            hs.append(hook(blk, f"decoder.up.{lvl}.block.{b}.out", store))
        if hasattr(stage, "upsample"):
            hs.append(hook(stage.upsample, f"decoder.up.{lvl}.upsample.out", store))

    def pre(_m, args):
        store["decoder.un_normalize.out"] = args[0].detach().clone().contiguous()
    hs.append(dec.conv_in.register_forward_pre_hook(pre))

    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    z = torch.randn(LATENT, generator=g)
    voc = build(version, VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER)
    bwe = isinstance(voc, VocoderWithBWE)
    if bwe != (version == "2.3"):
        raise RuntimeError(f"{version}: unexpected vocoder class {type(voc).__name__}")
    if bwe:
        hs += generator_hooks(voc.vocoder, "vocoder.vocoder", store)
        hs += generator_hooks(voc.bwe_generator, "vocoder.bwe_generator", store)

        def stft_hook(_m, _inp, out):
            store["vocoder.mel_stft.magnitude"] = out[0].detach().clone().contiguous()
        hs.append(voc.mel_stft.stft_fn.register_forward_hook(stft_hook))

        def bwe_pre(_m, args):
            store["vocoder.bwe_generator.in"] = args[0].detach().clone().contiguous()
        hs.append(voc.bwe_generator.register_forward_pre_hook(bwe_pre))
        hs.append(hook(voc.resampler, "vocoder.resampler.out", store))
        hs.append(hook(voc, "vocoder.out", store))
    else:
        hs += generator_hooks(voc, "vocoder", store)
    with torch.no_grad():
        mel = dec(z)
        wav = voc(mel)
    for h in hs:
        h.remove()
    tensors = {"decoder.in": z, "decoder.out": mel.contiguous(), "vocoder.in": mel.contiguous()}
    tensors.update(store)
    if not torch.equal(tensors["vocoder.out"], wav):
        raise RuntimeError("vocoder.out hook mismatch")
    return tensors, dec, voc


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(DATA_DIR, exist_ok=True)
    for version in ("2.0", "2.3"):
        tensors, dec, voc = run(version)
        for k, v in tensors.items():
            if v.dtype != torch.float32:
                raise RuntimeError(f"{k}: not fp32")
        meta = {
            "audio_goldens": json.dumps({
                "version": version,
                "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
                "layout": "PyTorch: decoder [B, C, T, F]; vocoder [B, C, L]; mel_stft.magnitude [B*2, F, Tm]",
                "dtype": "float32 weights (exact cast of the bf16 file), float32 compute on CPU",
                "reference": "ltx-core 1.0.0 AudioDecoder + Vocoder/VocoderWithBWE via SingleGPUModelBuilder",
                "seed": SEED,
                "output_sampling_rate": voc.output_sampling_rate,
                "shapes": {k: list(v.shape) for k, v in tensors.items()},
            }, sort_keys=True),
            "torch": torch.__version__,
        }
        path = os.path.join(DATA_DIR, f"audio_{version}.safetensors")
        save(tensors, path, metadata=meta)
        w = tensors["vocoder.out"]
        print(f"{path}: {os.path.getsize(path)} bytes, {len(tensors)} tensors, mel "
              f"{tuple(tensors['decoder.out'].shape)} wav {tuple(w.shape)} |w| {w.abs().mean():.4f} "
              f"clipped {(w.abs() >= 1).float().mean():.3f}")


if __name__ == "__main__":
    main()
