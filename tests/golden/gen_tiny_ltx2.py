#!/usr/bin/env python3
"""Tiny LTX-2.0 / LTX-2.3 checkpoints in the real Lightricks single-file layout, made by ltx-core.

For each version it instantiates ltx-core 1.0.0's own configurators (the code paths the real
ModelLedger uses) from the tiny metadata config in ltx_tiny_configs.py, fills every parameter and
uninitialised buffer with seeded pseudo-random values, maps module keys to checkpoint keys with
the inverse of ltx-core's SDOps (model.diffusion_model.*, text_embedding_projection.*, vae.*,
audio_vae.*, vocoder.*), and writes weights/tiny/ltx2-tiny-<version>.safetensors (bf16, like the
real files) with __metadata__["config"] = the JSON config. It then reloads every component through
ltx-core's SingleGPUModelBuilder + the real SDOps and checks that every parameter is populated and
bit-identical (so the layout is exactly what ltx-core expects from a real file).

Also writes standalone latent-upsampler files, weights/tiny/*.keys.txt, and a seeded DiT forward
(inputs + outputs) to tests/golden/data/dit_tiny_<version>.safetensors.
"""
import json
import os
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402

import ltx_tiny_configs as C  # noqa: E402
from st_write import save  # noqa: E402

from ltx_core.text_encoders.gemma import config as gemma_config  # noqa: E402

# Shrink ltx-core's hard-coded Gemma dims before any configurator reads them.
gemma_config.GEMMA3_CONFIG_FOR_LTX.text_config.hidden_size = C.TINY_GEMMA_HIDDEN
gemma_config.GEMMA3_CONFIG_FOR_LTX.text_config.num_hidden_layers = C.TINY_GEMMA_LAYERS

from ltx_core.guidance.perturbations import BatchedPerturbationConfig  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.transformer.modality import Modality  # noqa: E402
from ltx_core.model.upsampler import LatentUpsamplerConfigurator  # noqa: E402
from ltx_checkpoint_keys import build_components  # noqa: E402  (after the Gemma dims are shrunk)
from ltx_core.components.patchifiers import AudioPatchifier, VideoLatentPatchifier  # noqa: E402
from ltx_core.tools import AudioLatentTools, VideoLatentTools  # noqa: E402
from ltx_core.types import AudioLatentShape, VideoLatentShape  # noqa: E402

SEED = 20260202
WEIGHTS_DIR = os.path.join(ROOT, "weights", "tiny")
DATA_DIR = os.path.join(HERE, "data")
CKPT_DTYPE = torch.bfloat16  # the real single files are bf16 throughout

# Buffers that the constructors compute deterministically (anti-alias Kaiser filters, resampler
# filter) keep their computed values, as in the real files; everything else is pseudo-random.
COMPUTED_BUFFER_SUFFIXES = ("upsample.filter", "downsample.lowpass.filter", "blur_down.kernel")


def _gen(name: str) -> torch.Generator:
    # Per-tensor seed from the checkpoint key: values do not depend on construction order.
    return torch.Generator().manual_seed(SEED ^ zlib.crc32(name.encode()))


def random_value(name: str, t: torch.Tensor) -> torch.Tensor:
    g = _gen(name)
    shape = tuple(t.shape)
    leaf = name.rsplit(".", 1)[-1]
    if "std-of-means" in name:
        return torch.rand(shape, generator=g) + 0.5
    if "mean-of-means" in name:
        return torch.randn(shape, generator=g) * 0.1
    if leaf == "learnable_registers":
        return torch.rand(shape, generator=g) * 2 - 1
    if "scale_shift_table" in leaf:
        return torch.randn(shape, generator=g) * 0.5
    if leaf in ("alpha", "beta"):  # SnakeBeta log-scale parameters
        return torch.randn(shape, generator=g) * 0.1
    if "mel_basis" in name or "forward_basis" in name or "inverse_basis" in name:
        return torch.rand(shape, generator=g) * 0.2
    if len(shape) <= 1:
        if name.endswith("norm.weight") or leaf == "weight":  # RMSNorm / GroupNorm scales
            return 1.0 + 0.1 * torch.randn(shape, generator=g)
        return 0.05 * torch.randn(shape, generator=g)  # biases
    fan_in = 1
    for d in shape[1:]:
        fan_in *= d
    return torch.randn(shape, generator=g) / fan_in ** 0.5


def fill_state(module, key_map, ckpt):
    """Assign checkpoint values for every state_dict entry of `module` (shared keys reuse values)."""
    for k, v in module.state_dict().items():
        ck = key_map(k)
        if ck in ckpt:
            if tuple(ckpt[ck].shape) != tuple(v.shape):
                raise RuntimeError(f"{ck}: shape clash {tuple(ckpt[ck].shape)} vs {tuple(v.shape)}")
            continue
        if k.endswith(COMPUTED_BUFFER_SUFFIXES) and float(v.float().abs().sum()) > 0:
            val = v.detach().float().clone()
        else:
            val = random_value(ck, v)
        ckpt[ck] = val.to(CKPT_DTYPE)


def verify_component(path, name, sd_ops, configurator, ckpt, key_map, module):
    """Reload through ltx-core's builder and real SDOps; every tensor must be populated and equal."""
    builder = SingleGPUModelBuilder(model_class_configurator=configurator, model_path=path, model_sd_ops=sd_ops)
    model = builder.build(device=torch.device("cpu"))
    sd = model.state_dict()
    missing = [k for k, v in sd.items() if v.device.type == "meta"]
    if missing:
        raise RuntimeError(f"{name}: ltx-core left {len(missing)} tensors uninitialised, e.g. {missing[:3]}")
    expected = module.state_dict().keys()
    if set(sd.keys()) != set(expected):
        raise RuntimeError(f"{name}: key set differs after reload")
    for k, v in sd.items():
        ref = ckpt[key_map(k)]
        if v.dtype != ref.dtype or not torch.equal(v, ref):
            raise RuntimeError(f"{name}: {k} differs after reload")
    return model


def write_keys_txt(path, tensors):
    with open(path, "w") as f:
        f.write(f"# {os.path.basename(path.replace('.keys.txt', ''))}: name dtype shape (generated by "
                "tests/golden/gen_tiny_ltx2.py)\n")
        for k in sorted(tensors):
            t = tensors[k]
            f.write(f"{k} {str(t.dtype).replace('torch.', '')} {list(t.shape)}\n")


def make_checkpoint(version):
    config = C.full_config(version)
    comps = build_components(config)
    ckpt = {}
    for name, module, key_map, _, _ in comps:
        fill_state(module, key_map, ckpt)
    ckpt = dict(sorted(ckpt.items()))
    meta = {
        "config": json.dumps(config),
        "ltx2c_tiny": json.dumps({"version": version, "gemma_hidden": C.TINY_GEMMA_HIDDEN,
                                  "gemma_layers": C.TINY_GEMMA_LAYERS, "deviations": C.TINY_DEVIATIONS,
                                  "generator": "tests/golden/gen_tiny_ltx2.py", "torch": torch.__version__,
                                  "seed": SEED}),
    }
    path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.safetensors")
    save(ckpt, path, metadata=meta)
    models = {}
    for name, module, key_map, sd_ops, configurator in comps:
        models[name] = verify_component(path, name, sd_ops, configurator, ckpt, key_map, module)
    write_keys_txt(os.path.join(WEIGHTS_DIR, f"ltx2-tiny-{version}.keys.txt"), ckpt)
    n_params = {name: sum(t.numel() for t in m.state_dict().values()) for name, m in models.items()}
    print(f"{path}: {len(ckpt)} tensors, {os.path.getsize(path)} bytes, elements per component {n_params}")
    return path, models


def make_upsamplers():
    for name, cfg in C.upsampler_configs().items():
        module = LatentUpsamplerConfigurator.from_config(cfg)
        ckpt = {}
        fill_state(module, lambda k: k, ckpt)
        ckpt = dict(sorted(ckpt.items()))
        path = os.path.join(WEIGHTS_DIR, f"ltx2-tiny-upsampler-{name}.safetensors")
        save(ckpt, path, metadata={"config": json.dumps(cfg)})
        verify_component(path, f"upsampler {name}", None, LatentUpsamplerConfigurator, ckpt, lambda k: k, module)
        write_keys_txt(path.replace(".safetensors", ".keys.txt"), ckpt)
        print(f"{path}: {len(ckpt)} tensors, {os.path.getsize(path)} bytes")


def dit_forward_golden(version, dit_model):
    """One seeded forward of the tiny DiT in fp32 (weights are the bf16 checkpoint values upcast)."""
    torch.manual_seed(SEED + 1)
    g = torch.Generator().manual_seed(SEED + (1 if version == "2.0" else 2))
    model = dit_model.float().eval()
    cfg = C.transformer_config(version)
    batch, frames, height, width, fps = 2, 3, 2, 3, 24.0
    vshape = VideoLatentShape(batch=batch, channels=cfg["in_channels"], frames=frames, height=height, width=width)
    vtools = VideoLatentTools(patchifier=VideoLatentPatchifier(patch_size=1), target_shape=vshape, fps=fps)
    vlat = torch.randn(vshape.to_torch_shape(), generator=g)
    vstate = vtools.create_initial_state(device="cpu", dtype=torch.float32, initial_latent=vlat)
    ashape = AudioLatentShape(batch=batch, channels=C.AUDIO_Z_CHANNELS, frames=5, mel_bins=C.AUDIO_MEL_BINS // 4)
    atools = AudioLatentTools(patchifier=AudioPatchifier(patch_size=1), target_shape=ashape)
    alat = torch.randn(ashape.to_torch_shape(), generator=g)
    astate = atools.create_initial_state(device="cpu", dtype=torch.float32, initial_latent=alat)

    sigma_v = torch.tensor([0.8, 0.35])
    sigma_a = torch.tensor([0.6, 0.9])
    vmask = torch.ones(batch, vstate.latent.shape[1])
    vmask[:, : height * width] = 0.0  # first latent frame is conditioning (denoise mask 0)
    v_timesteps = sigma_v[:, None] * vmask
    a_timesteps = sigma_a[:, None] * torch.ones(batch, astate.latent.shape[1])
    if cfg.get("caption_proj_before_connector"):
        v_ctx_dim, a_ctx_dim = cfg["cross_attention_dim"], cfg["audio_cross_attention_dim"]
    else:
        v_ctx_dim = a_ctx_dim = cfg["caption_channels"]
    seq = 16
    v_ctx = torch.randn(batch, seq, v_ctx_dim, generator=g)
    a_ctx = torch.randn(batch, seq, a_ctx_dim, generator=g)
    ctx_mask = torch.ones(batch, seq, dtype=torch.int64)
    ctx_mask[1, :5] = 0  # left padding in the second prompt
    video = Modality(latent=vstate.latent, sigma=sigma_v, timesteps=v_timesteps, positions=vstate.positions,
                     context=v_ctx, context_mask=ctx_mask)
    audio = Modality(latent=astate.latent, sigma=sigma_a, timesteps=a_timesteps, positions=astate.positions,
                     context=a_ctx, context_mask=ctx_mask)
    with torch.no_grad():
        vx, ax = model(video, audio, BatchedPerturbationConfig.empty(batch))
    tensors = {
        "video.latent": vstate.latent, "video.positions": vstate.positions.float(), "video.sigma": sigma_v,
        "video.timesteps": v_timesteps, "video.context": v_ctx, "audio.latent": astate.latent,
        "audio.positions": astate.positions.float(), "audio.sigma": sigma_a, "audio.timesteps": a_timesteps,
        "audio.context": a_ctx, "context_mask": ctx_mask, "video.velocity": vx, "audio.velocity": ax,
    }
    tensors = {k: v.detach().contiguous().float() if v.is_floating_point() else v.contiguous()
               for k, v in tensors.items()}
    meta = {"checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "description": json.dumps({
                "what": "LTXModel.forward (velocity), fp32 compute on the bf16 checkpoint weights, CPU",
                "video_latent_shape_bcfhw": list(vshape.to_torch_shape()), "fps": fps,
                "audio_latent_shape_bctm": list(ashape.to_torch_shape()),
                "positions": "ltx-core VideoLatentTools/AudioLatentTools (pixel bounds [B,3,T,2] with "
                             "causal fix, time in s; audio [B,1,T,2] in s)",
                "timesteps": "sigma * denoise_mask per token; first video latent frame masked to 0",
                "context_mask": "int 1 = keep, 0 = pad (left padded prompt in batch 1)",
                "perturbations": "none"}),
            "torch": torch.__version__}
    path = os.path.join(DATA_DIR, f"dit_tiny_{version}.safetensors")
    save(tensors, path, metadata=meta)
    print(f"{path}: {os.path.getsize(path)} bytes; |v| {vx.abs().mean():.4f} |a| {ax.abs().mean():.4f}")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    os.makedirs(WEIGHTS_DIR, exist_ok=True)
    os.makedirs(DATA_DIR, exist_ok=True)
    for version in ("2.0", "2.3"):
        _, models = make_checkpoint(version)
        dit_forward_golden(version, models["transformer"])
    make_upsamplers()


if __name__ == "__main__":
    main()
