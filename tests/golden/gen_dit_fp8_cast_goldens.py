#!/usr/bin/env python3
"""Goldens of the DiT forward under ltx-core's fp8_cast quantisation policy (ltx-pipelines' --quantization
fp8-cast).

For each version it takes the tiny checkpoint's DiT (gen_dit_goldens.load_model: ltx-core 1.0.0's LTXModel,
fp32, the file's bf16 values) and applies ltx-core's own policy pieces (ltx_core/quantization/fp8_cast.py,
QuantizationPolicy.fp8_cast()):
  TRANSFORMER_LINEAR_DOWNCAST_MAP (SDOps) on the model's state dict: the weight and bias of every
    transformer_blocks.*.to_q / to_k / to_v / to_out.0 / ff.net.0.proj / ff.net.2 (audio_ff's too) become
    float8_e4m3fn (`value.to(torch.float8_e4m3fn)`), stored as the module's parameters;
  UPCAST_DURING_INFERENCE (ModuleOps): every nn.Linear's forward upcasts its weight and bias to the input's
    dtype (fp32 here) before F.linear, without stochastic rounding.
Then one forward on gen_dit_goldens.make_inputs.

Written to tests/golden/data/dit_fp8_cast_<v>.safetensors: the inputs ("input.*", as dit_fp8_<v>), "output.video|
audio" (the fp8_cast forward), "plain.video|audio" (the same model without the policy: the test shows it checks
the cast), and the names of the cast tensors in the metadata ("cast"). The weights are the tiny checkpoint's.
Deterministic.
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

import gen_dit_goldens as dg  # noqa: E402
from st_write import save  # noqa: E402

from ltx_core.guidance.perturbations import BatchedPerturbationConfig  # noqa: E402
from ltx_core.quantization.fp8_cast import TRANSFORMER_LINEAR_DOWNCAST_MAP, UPCAST_DURING_INFERENCE  # noqa: E402

FP8 = torch.float8_e4m3fn


def apply_policy(model):
    """The policy's state-dict op on the model's parameters, then its module op. Returns the cast names."""
    cast = []
    modules = dict(model.named_modules())
    for name, value in list(model.state_dict().items()):
        results = TRANSFORMER_LINEAR_DOWNCAST_MAP.apply_to_key_value(name, value)
        if len(results) != 1 or results[0].new_key != name:
            raise RuntimeError(f"{name}: unexpected sd op result {results}")
        new = results[0].new_value
        if new.dtype != FP8:
            continue
        mod_name, attr = name.rsplit(".", 1)
        setattr(modules[mod_name], attr, torch.nn.Parameter(new, requires_grad=False))
        cast.append(name)
    UPCAST_DURING_INFERENCE.mutator(model)
    return cast


def record(version):
    torch.manual_seed(dg.SEED)
    model, cfg = dg.load_model(version)
    video, audio = dg.make_inputs(version, cfg)
    pert = BatchedPerturbationConfig.empty(dg.BATCH)
    with torch.no_grad():
        pv, pa = model(video, audio, pert)
        cast = apply_policy(model)
        vx, ax = model(video, audio, pert)
    if not cast:
        raise RuntimeError(f"{version}: the policy cast nothing")
    tensors = dg.input_tensors(video, audio)
    tensors["output.video"], tensors["output.audio"] = vx, ax
    tensors["plain.video"], tensors["plain.audio"] = pv, pa
    tensors = {k: v.detach().contiguous().float() for k, v in tensors.items()}
    ckpt = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-{version}.safetensors")
    with safe_open(ckpt, "pt") as f:
        meta_config = f.metadata()["config"]
    meta = {"config": meta_config, "generator": "tests/golden/gen_dit_fp8_cast_goldens.py",
            "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "reference": "ltx-core 1.0.0 LTXModel.forward, fp32 CPU, under QuantizationPolicy.fp8_cast() "
                         "(TRANSFORMER_LINEAR_DOWNCAST_MAP + UPCAST_DURING_INFERENCE)",
            "cast": json.dumps(sorted(cast)), "torch": torch.__version__}
    path = os.path.join(HERE, "data", f"dit_fp8_cast_{version}.safetensors")
    save(tensors, path, metadata=meta)
    rel = ((vx - pv).norm() / vx.norm()).item()
    print(f"{path}: {len(cast)} tensors cast, {os.path.getsize(path)} bytes; fp8-cast vs plain forward rel-L2 "
          f"{rel:.3g} (video)")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
