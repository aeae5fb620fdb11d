#!/usr/bin/env python3
"""Audio VAE encoder goldens (waveform -> resample -> log-mel -> AudioEncoder -> normalised latent)
for the tiny LTX-2.0 / 2.3 checkpoints.

Runs ltx-core 1.0.0's `encode_audio` path: `AudioProcessor.waveform_to_mel` (torchaudio
`functional.resample` to the model rate, then `transforms.MelSpectrogram` centered/reflect, power 1,
slaney mel scale + norm, `log(clamp(., 1e-5))`, permuted to [B, C, T, mels]) and `AudioEncoder`
built by SingleGPUModelBuilder + AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER from
weights/tiny/ltx2-tiny-<v>.safetensors (bf16 in the file, cast exactly to fp32), fp32 on the CPU.
Forward hooks record every stage. Written to tests/golden/data/audio_enc_<v>.safetensors (fp32).

torchaudio's wheel refuses to import against this torch build (CUDA version check in its C++
extension); the two functions used here are pure PyTorch, so the extension is stubbed out.

Names (PyTorch layouts):
  wave.in                 [B, 2, N] at INPUT_RATE (44.1 kHz, so the resampler runs)
  wave.resampled          [B, 2, N'] at the model rate (16 kHz)
  mel.out                 [B, 2, T, mels] log-mel fed to the encoder, T = N'/hop + 1
  encoder.conv_in.out, encoder.down.<l>.block.<b>.out, encoder.down.<l>.downsample.out,
  encoder.mid.block_1.out, encoder.mid.block_2.out, encoder.conv_out.out ([B, 2z, T', F'])
  encoder.out             normalised mean latent [B, z, T', F']
Deterministic: seeded inputs, torch.use_deterministic_algorithms, one thread.
Run: /work/venv/bin/python tests/golden/gen_audio_encoder_goldens.py
"""
import importlib.machinery
import json
import math
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The real torchaudio, minus its C++ extension (resample and MelSpectrogram are pure PyTorch).
_ext = types.ModuleType("torchaudio._extension")
_ext.__spec__ = importlib.machinery.ModuleSpec("torchaudio._extension", None)
_ext._IS_TORCHAUDIO_EXT_AVAILABLE = False
_ext._IS_ALIGN_AVAILABLE = False
_ext.fail_if_no_align = lambda f: f
sys.modules["torchaudio._extension"] = _ext

import torch  # noqa: E402
import torchaudio  # noqa: E402,F401

from st_write import save  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.audio_vae import (  # noqa: E402
    AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, AudioEncoderConfigurator, AudioProcessor,
)
from ltx_core.types import Audio  # noqa: E402

SEED = 20260402
DATA_DIR = os.path.join(HERE, "data")
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
INPUT_RATE = 44100
# B=1 stereo, 0.3 s at 44.1 kHz -> 4800 samples at 16 kHz -> 31 mel frames -> latent T' 8.
BATCH, SAMPLES = 1, 13230


def build(version):
    path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.safetensors")
    builder = SingleGPUModelBuilder(model_class_configurator=AudioEncoderConfigurator, model_path=path,
                                    model_sd_ops=AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER)
    model = builder.build(device=torch.device("cpu"), dtype=torch.float32)
    for k, v in list(model.state_dict().items()) + list(model.named_buffers()):
        if v.device.type == "meta":
            raise RuntimeError(f"{version}: {k} left uninitialised by ltx-core")
    return model.eval()


def waveform(version):
    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    t = torch.arange(SAMPLES, dtype=torch.float64) / INPUT_RATE
    w = torch.zeros(BATCH, 2, SAMPLES, dtype=torch.float64)
    for b in range(BATCH):
        for c in range(2):
            for _ in range(4):
                f = float(torch.rand((), generator=g, dtype=torch.float64)) * 9000 + 60
                a = float(torch.rand((), generator=g, dtype=torch.float64)) * 0.2
                ph = float(torch.rand((), generator=g, dtype=torch.float64)) * 2 * math.pi
                w[b, c] += a * torch.sin(2 * math.pi * f * t + ph)
    # broadband noise keeps every mel bin well above the log floor (see PARITY.md)
    w += 0.05 * torch.randn(w.shape, generator=g, dtype=torch.float64)
    return w.float().contiguous()


def hook(mod, name, store):
    def fn(_m, _inp, out):
        store[name] = out.detach().clone().float().contiguous()
    return mod.register_forward_hook(fn)


def run(version):
    enc = build(version)
    store = {}
    hs = [hook(enc.conv_in, "encoder.conv_in.out", store),
          hook(enc.mid.block_1, "encoder.mid.block_1.out", store),
          hook(enc.mid.block_2, "encoder.mid.block_2.out", store),
          hook(enc.conv_out, "encoder.conv_out.out", store)]
    for lvl, stage in enumerate(enc.down):
        if len(stage.attn):
            raise RuntimeError(f"{version}: encoder level {lvl} has attention")
        for b, blk in enumerate(stage.block):
            hs.append(hook(blk, f"encoder.down.{lvl}.block.{b}.out", store))
        if hasattr(stage, "downsample"):
            hs.append(hook(stage.downsample, f"encoder.down.{lvl}.downsample.out", store))
    if not isinstance(enc.mid.attn_1, torch.nn.Identity):
        raise RuntimeError(f"{version}: mid attention present")
    wave = waveform(version)
    proc = AudioProcessor(target_sample_rate=enc.sample_rate, mel_bins=enc.mel_bins,
                          mel_hop_length=enc.mel_hop_length, n_fft=enc.n_fft)
    with torch.no_grad():
        resampled = proc.resample_audio(Audio(waveform=wave, sampling_rate=INPUT_RATE)).waveform
        mel = proc.waveform_to_mel(Audio(waveform=wave, sampling_rate=INPUT_RATE))
        lat = enc(mel.to(torch.float32))
    for h in hs:
        h.remove()
    tensors = {"wave.in": wave, "wave.resampled": resampled.contiguous(), "mel.out": mel.contiguous()}
    tensors.update(store)
    tensors["encoder.out"] = lat.contiguous()
    return tensors, enc


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(DATA_DIR, exist_ok=True)
    for version in ("2.0", "2.3"):
        tensors, enc = run(version)
        for k, v in tensors.items():
            if v.dtype != torch.float32:
                raise RuntimeError(f"{k}: not fp32")
        meta = {
            "audio_encoder_goldens": json.dumps({
                "version": version,
                "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
                "layout": "PyTorch: wave [B, C, N]; mel / encoder [B, C, T, F]",
                "dtype": "float32 weights (exact cast of the bf16 file), float32 compute on CPU",
                "reference": "ltx-core 1.0.0 AudioProcessor + AudioEncoder via SingleGPUModelBuilder; "
                             f"torchaudio {torchaudio.__version__} resample / MelSpectrogram",
                "seed": SEED,
                "input_sampling_rate": INPUT_RATE,
                "model_sampling_rate": enc.sample_rate,
                "n_fft": enc.n_fft, "hop_length": enc.mel_hop_length, "mel_bins": enc.mel_bins,
                "shapes": {k: list(v.shape) for k, v in tensors.items()},
            }, sort_keys=True),
            "torch": torch.__version__,
        }
        path = os.path.join(DATA_DIR, f"audio_enc_{version}.safetensors")
        save(tensors, path, metadata=meta)
        m = tensors["mel.out"]
        print(f"{path}: {os.path.getsize(path)} bytes, {len(tensors)} tensors, mel {tuple(m.shape)} "
              f"[{m.min():.2f}, {m.max():.2f}] latent {tuple(tensors['encoder.out'].shape)}")


if __name__ == "__main__":
    main()
