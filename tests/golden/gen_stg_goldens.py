#!/usr/bin/env python3
"""Goldens of the DiT forward with attention perturbations (STG and modality isolation), made by
ltx-core 1.0.0 with BatchedPerturbationConfig, on the inputs and tiny checkpoints of
gen_dit_goldens.py (batch 2). Two runs:
  "mixed": sample 0 skips video + audio self-attention in block 1 (STG), sample 1 skips a2v + v2a
           in every block (modality isolation): the per-sample blend paths of Attention.forward
           and the `* mask` of the A/V exchange
  "all":   both samples skip video and audio self-attention in block 0 and a2v in block 1: the
           all_perturbed path (value projection only) and a skipped a2v
Names: input.* as in dit_blocks_<v>; <run>.transformer_blocks.<i>.out.video|audio and
<run>.output.video|audio. Written to tests/golden/data/dit_stg_<v>.safetensors. Deterministic.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_dit_goldens as dit  # noqa: E402  (imports torchaudio_stub before ltx_core)

import torch  # noqa: E402

from st_write import save  # noqa: E402

from ltx_core.guidance.perturbations import (  # noqa: E402
    BatchedPerturbationConfig,
    Perturbation,
    PerturbationConfig,
    PerturbationType as PT,
)

RUNS = {
    "mixed": [[(PT.SKIP_VIDEO_SELF_ATTN, [1]), (PT.SKIP_AUDIO_SELF_ATTN, [1])],
              [(PT.SKIP_A2V_CROSS_ATTN, None), (PT.SKIP_V2A_CROSS_ATTN, None)]],
    "all": [[(PT.SKIP_VIDEO_SELF_ATTN, [0]), (PT.SKIP_AUDIO_SELF_ATTN, [0]), (PT.SKIP_A2V_CROSS_ATTN, [1])]] * 2,
}


def config(spec):
    return BatchedPerturbationConfig([PerturbationConfig([Perturbation(t, b) for t, b in sample]) for sample in spec])


def record(version):
    torch.manual_seed(dit.SEED)
    model, cfg = dit.load_model(version)
    video, audio = dit.make_inputs(version, cfg)
    out = {}
    for m, mod in (("video", video), ("audio", audio)):
        out[f"input.{m}.latent"] = mod.latent
        out[f"input.{m}.positions"] = mod.positions
        out[f"input.{m}.timesteps"] = mod.timesteps
        out[f"input.{m}.sigma"] = mod.sigma
        out[f"input.{m}.context"] = mod.context
    out["input.context_mask"] = video.context_mask.float()
    for run, spec in RUNS.items():
        hooks = []
        for i, blk in enumerate(model.transformer_blocks):
            def hook(mod, args, kwargs, output, _i=i, _run=run):
                out[f"{_run}.transformer_blocks.{_i}.out.video"] = output[0].x
                out[f"{_run}.transformer_blocks.{_i}.out.audio"] = output[1].x
            hooks.append(blk.register_forward_hook(hook, with_kwargs=True))
        with torch.no_grad():
            vx, ax = model(video, audio, config(spec))
        for h in hooks:
            h.remove()
        out[f"{run}.output.video"] = vx
        out[f"{run}.output.audio"] = ax
    tensors = {k: v.detach().contiguous().float() for k, v in sorted(out.items())}
    meta = {"generator": "tests/golden/gen_stg_goldens.py",
            "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "reference": "ltx-core 1.0.0 LTXModel.forward with BatchedPerturbationConfig, fp32 CPU",
            "torch": torch.__version__,
            "description": json.dumps({r: [[(t.value, b) for t, b in s] for s in spec] for r, spec in RUNS.items()})}
    path = os.path.join(HERE, "data", f"dit_stg_{version}.safetensors")
    save(tensors, path, metadata=meta)
    n_bytes = os.path.getsize(path)
    print(f"{path}: {len(tensors)} tensors, {n_bytes} bytes")
    if n_bytes > 1 << 20:
        raise RuntimeError(f"{path} is larger than 1 MB")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
