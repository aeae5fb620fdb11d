#!/usr/bin/env python3
"""Goldens of the DiT forward with scaled fp8 Linear weights (ltx-core's fp8_scaled_mm policy).

For each version it takes the tiny checkpoint's DiT (weights/tiny/ltx2-tiny-<v>.safetensors, through
gen_dit_goldens.load_model: ltx-core 1.0.0's LTXModel in fp32) and quantises every nn.Linear of
block 1 (attention q/k/v/out and gates, both FFs) the way a pre-quantised Lightricks file holds them;
block 0 stays bf16, as those files keep their first block, so the loader meets a mixed file:
  weight:       ltx-core's quantize_weight_to_fp8_per_tensor (scale = 448 / amax|w|, e4m3 of
                clamp(w * scale, +-448), weight_scale = 1 / scale)
  input_scale:  amax of the Linear's input over one calibration forward on the golden inputs, / 448;
                halved for the FFs' up-projections so that some of their inputs saturate (the clamp)
The forward then runs with those Linears computing FP8Linear.forward of Lightricks/LTX-2 at 400fd31
(packages/ltx-core/src/ltx_core/quantization/fp8_scaled_mm.py; the installed 1.0.0 calls TensorRT-LLM
ops that do not run on the CPU):
  q = e4m3(clamp(x * input_scale.reciprocal(), +-448))
  y = torch._scaled_mm(q, weight.t(), scale_a=input_scale, scale_b=weight_scale, out_dtype=x.dtype,
                       use_fast_accum=True) + bias
in fp32 on the CPU (x.dtype is fp32 here; torch's CPU _scaled_mm is exact in fp32).

Written to tests/golden/data/dit_fp8_<v>.safetensors: the checkpoint's `config` metadata; the DiT
as a pre-quantised checkpoint (model.diffusion_model.*: block 1's Linear weights F8_E4M3 with
.weight_scale and .input_scale, everything else the tiny file's bf16); the inputs of
gen_dit_goldens.make_inputs ("input.*"); "output.video|audio" from the fp8 forward, and
"dequant.video|audio" from the plain fp32 forward on the dequantised weights (no activation
quantisation), which the test uses to show that it checks the fp8 path and not just the weights;
"sensitivity" [video, audio]: how far the reference itself moves when its quantised inputs move by
float32 noise (see SENS_NOISE), the scale of the test's tolerance; "lora.<module>.weight" and
".weight_scale": block 1's fp8 weights with the tiny style (0.8) and distilled (0.5) LoRAs of
gen_lora_golden.py fused by ltx-core 1.0.0's apply_loras (dequantise, add the bf16 deltas,
re-quantise).
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
from ltx_core.loader.fuse_loras import apply_loras  # noqa: E402
from ltx_core.loader.primitives import LoraStateDictWithStrength, StateDict  # noqa: E402

FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max
QUANT_BLOCK = "transformer_blocks.1."
# Rounding to e4m3 is a step function: an input within float32 noise of a rounding boundary rounds
# either way, and on the tiny model one such flip moves the output by up to ~1e-2. The generator
# measures that sensitivity of its own reference (the largest output change over SENS_SEEDS runs
# with every quantised input scaled by 1 + SENS_NOISE * N(0, 1)) and stores it for the test's
# tolerance.
SENS_NOISE = 1e-6
SENS_SEEDS = 4
# the tiny LoRAs of gen_lora_golden.py, fused into the fp8 weights at its strengths
LORAS = (("style", 0.8), ("distilled", 0.5))
SATURATE = ("ff.net.0.proj", "audio_ff.net.0.proj")  # input_scale halved: their inputs clip


def quantize_weight(w):
    """ltx-core's quantize_weight_to_fp8_per_tensor (fp8_scaled_mm.py)."""
    w = w.to(torch.float32)
    scale = FP8_MAX / torch.amax(torch.abs(w))
    q = torch.clamp(w * scale, min=-FP8_MAX, max=FP8_MAX).to(FP8)
    return q, scale.reciprocal()


def fp8_linear_forward(layer, q_weight, weight_scale, input_scale, noise):
    """FP8Linear.forward at Lightricks/LTX-2 400fd31, for layer's bias; noise["gen"] (when set)
    perturbs x first, for the sensitivity runs."""
    def forward(x):
        if noise.get("gen") is not None:
            x = x * (1 + SENS_NOISE * torch.randn(x.shape, generator=noise["gen"]))
        shape = x.shape
        q = torch.clamp(x * input_scale.reciprocal(), -FP8_MAX, FP8_MAX).to(FP8)
        q = q.reshape(-1, shape[-1])
        y = torch._scaled_mm(q, q_weight.t(), scale_a=input_scale, scale_b=weight_scale, out_dtype=x.dtype,
                             use_fast_accum=True)
        if layer.bias is not None:
            y = y + layer.bias.to(y.dtype)
        return y.reshape(*shape[:-1], y.shape[-1])
    return forward


def fused_fp8(version, scales):
    """ltx-core 1.0.0's apply_loras on the scaled fp8 weights: deltas in bf16 (summed), added to the
    dequantised weight, re-quantised per tensor (_fuse_delta_with_scaled_fp8). 1.0.0 keeps fp8
    weights transposed in memory (FP8_TRANSPOSE_SD_OPS) and transposes back there, so it gets q.t()
    and gives [in, out] back. Every quantised Linear is in the distilled LoRA, so all are re-quantised."""
    sd = {}
    for mod, (q, ws, _) in scales.items():
        sd[f"{mod}.weight"] = q.t()
        sd[f"{mod}.weight_scale"] = ws
    loras = []
    for name, strength in LORAS:
        path = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-lora-{name}-{version}.safetensors")
        with safe_open(path, "pt") as f:
            lsd = {k[len("diffusion_model."):]: f.get_tensor(k) for k in f.keys()}
        loras.append(LoraStateDictWithStrength(StateDict(lsd, torch.device("cpu"), 0, {torch.bfloat16}), strength))
    out = apply_loras(StateDict(sd, torch.device("cpu"), 0, {FP8, torch.float32}), loras)
    # its quantize_weight_to_fp8_per_tensor returns the weight transposed again ([in, out])
    return {mod: (out.sd[f"{mod}.weight"].t(), out.sd[f"{mod}.weight_scale"]) for mod in scales}


def quantised_linears(model):
    return {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and n.startswith(QUANT_BLOCK)}


def record(version):
    torch.manual_seed(dg.SEED)
    model, cfg = dg.load_model(version)
    video, audio = dg.make_inputs(version, cfg)
    pert = BatchedPerturbationConfig.empty(dg.BATCH)
    linears = quantised_linears(model)
    if not linears:
        raise RuntimeError(f"{version}: no Linear under {QUANT_BLOCK}")

    # calibration: amax of each quantised Linear's input over one plain forward
    amax = {}
    hooks = [m.register_forward_pre_hook(lambda mod, args, _n=n: amax.__setitem__(
        _n, max(amax.get(_n, 0.0), args[0].abs().max().item()))) for n, m in linears.items()]
    with torch.no_grad():
        model(video, audio, pert)
    for h in hooks:
        h.remove()

    scales = {}
    for n, m in linears.items():
        q, ws = quantize_weight(m.weight.data)
        xs = torch.tensor(amax[n] / FP8_MAX, dtype=torch.float32)
        if n.endswith(SATURATE):
            xs = xs * 0.5
        scales[n] = (q, ws, xs)
        m.weight.data = q.to(torch.float32) * ws  # the dequantised weight, for the plain forward

    noise = {}
    sens = torch.zeros(2)
    with torch.no_grad():
        dv, da = model(video, audio, pert)
        for n, m in linears.items():
            m.forward = fp8_linear_forward(m, *scales[n], noise)
        vx, ax = model(video, audio, pert)
        for seed in range(SENS_SEEDS):
            noise["gen"] = torch.Generator().manual_seed(seed)
            nv, na = model(video, audio, pert)
            sens = torch.maximum(sens, torch.stack([(nv - vx).norm() / vx.norm(), (na - ax).norm() / ax.norm()]))
        noise["gen"] = None

    ckpt = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-{version}.safetensors")
    tensors = {}
    with safe_open(ckpt, "pt") as f:
        meta_config = f.metadata()["config"]
        for k in f.keys():
            rel = k[len(dg.PREFIX):]
            if not k.startswith(dg.PREFIX) or rel.startswith(dg.CONNECTORS):
                continue
            mod = rel[: -len(".weight")] if rel.endswith(".weight") else None
            if mod in scales:
                q, ws, xs = scales[mod]
                tensors[k] = q
                tensors[f"{dg.PREFIX}{mod}.weight_scale"] = ws.reshape(())
                tensors[f"{dg.PREFIX}{mod}.input_scale"] = xs.reshape(())
            else:
                tensors[k] = f.get_tensor(k)
    n_fp8 = sum(1 for t in tensors.values() if t.dtype == FP8)
    if n_fp8 != len(scales):
        raise RuntimeError(f"{version}: {n_fp8} fp8 tensors written, {len(scales)} quantised")
    tensors.update(dg.input_tensors(video, audio))
    tensors["output.video"], tensors["output.audio"] = vx, ax
    tensors["dequant.video"], tensors["dequant.audio"] = dv, da
    tensors["sensitivity"] = sens  # [video, audio] rel-L2 under SENS_NOISE input noise
    for mod, (q, ws) in fused_fp8(version, scales).items():
        if q.shape != scales[mod][0].shape:
            raise RuntimeError(f"{mod}: fused weight {tuple(q.shape)}, stored {tuple(scales[mod][0].shape)}")
        tensors[f"lora.{mod}.weight"] = q
        tensors[f"lora.{mod}.weight_scale"] = ws.reshape(())
    tensors = {k: (v.detach().contiguous() if v.dtype in (FP8, torch.bfloat16) else v.detach().contiguous().float())
               for k, v in tensors.items()}
    meta = {"config": meta_config, "generator": "tests/golden/gen_dit_fp8_goldens.py",
            "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "reference": "ltx-core 1.0.0 LTXModel.forward, fp32 CPU, block 1's Linears as FP8Linear (Lightricks/LTX-2 "
                         "400fd31 fp8_scaled_mm.py) with torch._scaled_mm",
            "quantised": json.dumps(sorted(scales)), "torch": torch.__version__}
    path = os.path.join(HERE, "data", f"dit_fp8_{version}.safetensors")
    save(tensors, path, metadata=meta)
    rel = ((vx - dv).norm() / vx.norm()).item()
    print(f"{path}: {len(scales)} fp8 Linears, {os.path.getsize(path)} bytes; fp8 vs dequantised forward rel-L2 "
          f"{rel:.3g} (video); rounding sensitivity video {sens[0]:.3g} audio {sens[1]:.3g}")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
