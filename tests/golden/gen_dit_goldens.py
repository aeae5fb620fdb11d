#!/usr/bin/env python3
"""Step-by-step goldens of the LTX-2 / LTX-2.3 transformer (DiT) forward, made by ltx-core 1.0.0.

For each version it builds ltx-core's LTXModel from the tiny single-file checkpoint
(weights/tiny/ltx2-tiny-<v>.safetensors: its metadata `config` through LTXModelConfigurator, its
`model.diffusion_model.*` tensors upcast from bf16 to fp32), runs one seeded forward in fp32 on
the CPU and records, with forward hooks, the inputs and outputs of every submodule ltx2c must
match step by step. Names are the reference module paths plus a suffix:
  "<path>.out"      the module output (tuple outputs: element 0; AdaLN "<path>.emb.out" is the
                    embedded timestep)
  "<path>.in"       the first positional input (attention query-side input x, FFN input)
  "<path>.context"  an attention's key/value-side input (text or the other modality)
  "transformer_blocks.<i>.out.video|audio"  the block's residual streams
  "<video|audio>_args.pe.cos|sin", "...cross_pe.cos|sin"  RoPE tables from the preprocessors
  "input.*"         the forward's inputs (latents, positions [B,n,T,2], timesteps = sigma * mask,
                    sigma, contexts, context_mask (1 = keep) as f32)
Written to tests/golden/data/dit_blocks_<v>.safetensors (fp32). Deterministic.

Inputs deliberately exercise every branch: batch 2, per-token timesteps with a zero first latent
frame, sigma_video != sigma_audio, left-padded prompts of different lengths (real padding masks).
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

from ltx_core.components.patchifiers import AudioPatchifier, VideoLatentPatchifier  # noqa: E402
from ltx_core.guidance.perturbations import BatchedPerturbationConfig  # noqa: E402
from ltx_core.model.transformer import LTXModelConfigurator  # noqa: E402
from ltx_core.model.transformer.modality import Modality  # noqa: E402
from ltx_core.tools import AudioLatentTools, VideoLatentTools  # noqa: E402
from ltx_core.types import AudioLatentShape, VideoLatentShape  # noqa: E402

SEED = 7243
PREFIX = "model.diffusion_model."
CONNECTORS = ("video_embeddings_connector.", "audio_embeddings_connector.")
ATTNS = ("attn1", "attn2", "audio_attn1", "audio_attn2", "audio_to_video_attn", "video_to_audio_attn")
ADALNS = ("adaln_single", "audio_adaln_single", "prompt_adaln_single", "audio_prompt_adaln_single",
          "av_ca_video_scale_shift_adaln_single", "av_ca_audio_scale_shift_adaln_single",
          "av_ca_a2v_gate_adaln_single", "av_ca_v2a_gate_adaln_single")

# Geometry: F'=3, H'=2, W'=3 video tokens (18), 5 audio tokens, 16 text tokens, fps 24.
BATCH, FRAMES, HEIGHT, WIDTH, FPS = 2, 3, 2, 3, 24.0
AUDIO_FRAMES, TEXT_LEN = 5, 16
PAD = (3, 7)  # left padding of each prompt


def load_model(version):
    path = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-{version}.safetensors")
    with safe_open(path, "pt") as f:
        config = json.loads(f.metadata()["config"])
        sd = {k[len(PREFIX):]: f.get_tensor(k).float() for k in f.keys()
              if k.startswith(PREFIX) and not k[len(PREFIX):].startswith(CONNECTORS)}
    model = LTXModelConfigurator.from_config(config)
    model = model.to_empty(device="cpu").float()
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"{version}: missing {missing[:3]} unexpected {unexpected[:3]}")
    return model.eval(), config["transformer"]


def make_inputs(version, cfg):
    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    vshape = VideoLatentShape(batch=BATCH, channels=cfg["in_channels"], frames=FRAMES, height=HEIGHT, width=WIDTH)
    vtools = VideoLatentTools(patchifier=VideoLatentPatchifier(patch_size=1), target_shape=vshape, fps=FPS)
    vstate = vtools.create_initial_state(device="cpu", dtype=torch.float32,
                                         initial_latent=torch.randn(vshape.to_torch_shape(), generator=g))
    a_feat = cfg["audio_in_channels"]
    ashape = AudioLatentShape(batch=BATCH, channels=2, frames=AUDIO_FRAMES, mel_bins=a_feat // 2)
    atools = AudioLatentTools(patchifier=AudioPatchifier(patch_size=1), target_shape=ashape)
    astate = atools.create_initial_state(device="cpu", dtype=torch.float32,
                                         initial_latent=torch.randn(ashape.to_torch_shape(), generator=g))
    sigma_v = torch.tensor([0.7, 0.55])
    sigma_a = torch.tensor([0.4, 0.9])
    vmask = torch.ones(BATCH, vstate.latent.shape[1])
    vmask[0, : HEIGHT * WIDTH] = 0.0  # first latent frame of sample 0 is conditioning
    amask = torch.ones(BATCH, astate.latent.shape[1])
    amask[1, 0] = 0.0
    if cfg.get("caption_proj_before_connector"):
        v_ctx_dim, a_ctx_dim = cfg["cross_attention_dim"], cfg["audio_cross_attention_dim"]
    else:
        v_ctx_dim = a_ctx_dim = cfg["caption_channels"]
    v_ctx = torch.randn(BATCH, TEXT_LEN, v_ctx_dim, generator=g)
    a_ctx = torch.randn(BATCH, TEXT_LEN, a_ctx_dim, generator=g)
    ctx_mask = torch.ones(BATCH, TEXT_LEN, dtype=torch.int64)
    for b, p in enumerate(PAD):
        ctx_mask[b, :p] = 0
    video = Modality(latent=vstate.latent, sigma=sigma_v, timesteps=sigma_v[:, None] * vmask,
                     positions=vstate.positions.float(), context=v_ctx, context_mask=ctx_mask)
    audio = Modality(latent=astate.latent, sigma=sigma_a, timesteps=sigma_a[:, None] * amask,
                     positions=astate.positions.float(), context=a_ctx, context_mask=ctx_mask)
    return video, audio


def input_tensors(video, audio):
    """The forward's inputs under the "input.*" names every DiT golden uses (the C side's dit_inputs.h)."""
    out = {}
    for m, mod in (("video", video), ("audio", audio)):
        out[f"input.{m}.latent"] = mod.latent
        out[f"input.{m}.positions"] = mod.positions
        out[f"input.{m}.timesteps"] = mod.timesteps
        out[f"input.{m}.sigma"] = mod.sigma
        out[f"input.{m}.context"] = mod.context
    out["input.context_mask"] = video.context_mask.float()
    return out


def record(version):
    torch.manual_seed(SEED)
    model, cfg = load_model(version)
    video, audio = make_inputs(version, cfg)
    out = input_tensors(video, audio)

    def put(name, t):
        if name in out:
            raise RuntimeError(f"{name} recorded twice (module called more than once?)")
        out[name] = t

    modules = dict(model.named_modules())
    hooks = []

    def add(path, kind):
        if path not in modules:
            return

        def hook(mod, args, kwargs, output):
            if kind == "attn":
                put(f"{path}.in", args[0])
                if kwargs.get("context") is not None:
                    put(f"{path}.context", kwargs["context"])
                put(f"{path}.out", output)
            elif kind == "ff":
                put(f"{path}.in", args[0])
                put(f"{path}.out", output)
            elif kind == "adaln":
                put(f"{path}.in", args[0])
                put(f"{path}.out", output[0])
                put(f"{path}.emb.out", output[1])
            elif kind == "block":
                put(f"{path}.out.video", output[0].x)
                put(f"{path}.out.audio", output[1].x)
            else:
                put(f"{path}.out", output[0] if isinstance(output, tuple) else output)
        hooks.append(modules[path].register_forward_hook(hook, with_kwargs=True))

    for p in ("patchify_proj", "audio_patchify_proj", "caption_projection", "audio_caption_projection",
              "norm_out", "audio_norm_out", "proj_out", "audio_proj_out"):
        add(p, "plain")
    for p in ADALNS:
        add(p, "adaln")
        add(p + ".emb.time_proj", "plain")
    for i in range(len(model.transformer_blocks)):
        blk = f"transformer_blocks.{i}"
        add(blk, "block")
        for a in ATTNS:
            add(f"{blk}.{a}", "attn")
        add(f"{blk}.ff", "ff")
        add(f"{blk}.audio_ff", "ff")

    for m in ("video", "audio"):
        pre = getattr(model, f"{m}_args_preprocessor")
        orig = pre.prepare

        def wrapped(modality, cross=None, _orig=orig, _m=m):
            args = _orig(modality, cross)
            put(f"{_m}_args.pe.cos", args.positional_embeddings[0])
            put(f"{_m}_args.pe.sin", args.positional_embeddings[1])
            put(f"{_m}_args.cross_pe.cos", args.cross_positional_embeddings[0])
            put(f"{_m}_args.cross_pe.sin", args.cross_positional_embeddings[1])
            put(f"{_m}_args.context", args.context)
            return args
        pre.prepare = wrapped

    with torch.no_grad():
        vx, ax = model(video, audio, BatchedPerturbationConfig.empty(BATCH))
    for h in hooks:
        h.remove()
    put("output.video", vx)
    put("output.audio", ax)

    tensors = {k: v.detach().contiguous().float() for k, v in sorted(out.items())}
    meta = {"generator": "tests/golden/gen_dit_goldens.py", "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "reference": "ltx-core 1.0.0 LTXModel.forward, fp32 CPU, weights upcast from the bf16 checkpoint",
            "fps": str(FPS), "torch": torch.__version__,
            "description": json.dumps({
                "video_latent_bcfhw": [BATCH, cfg["in_channels"], FRAMES, HEIGHT, WIDTH],
                "audio_tokens": AUDIO_FRAMES, "text_len": TEXT_LEN, "left_padding": list(PAD),
                "timesteps": "sigma * denoise mask; video sample 0 frame 0 and audio sample 1 token 0 masked",
                "perturbations": "none"})}
    path = os.path.join(HERE, "data", f"dit_blocks_{version}.safetensors")
    save(tensors, path, metadata=meta)
    n_bytes = os.path.getsize(path)
    print(f"{path}: {len(tensors)} tensors, {n_bytes} bytes; |v| {vx.abs().mean():.4f} |a| {ax.abs().mean():.4f}")
    if n_bytes > 2 << 20:
        raise RuntimeError(f"{path} is larger than 2 MB")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
