"""LoRA fusion golden: tiny LoRA files for the tiny DiTs, and the weights ltx-core 1.0.0 fuses from
them (SingleGPUModelBuilder with loras, i.e. ltx_core/loader/fuse_loras.py apply_loras, as
ltx-pipelines' ModelLedger builds its transformer), in fp32.

Writes, per version v in (2.0, 2.3):
  weights/tiny/ltx2-tiny-lora-style-<v>.safetensors: rank 4, bf16 (as Lightricks ships LoRAs),
      ltx-core / ComfyUI keys 'diffusion_model.<module>.lora_{A,B}.weight' on a subset of the
      blocks' Linears (video and audio self-attention, the feed-forward output, one cross-modal one)
  weights/tiny/ltx2-tiny-lora-style-diffusers-<v>.safetensors: the same tensors under diffusers /
      PEFT names 'transformer.<diffusers module>.lora_{A,B}.weight' (gen_tiny_diffusers.rename_dit)
  weights/tiny/ltx2-tiny-lora-distilled-<v>.safetensors: rank 8, bf16, every Linear of every block
      (what a distilled LoRA touches), for the two-stage pipeline
  tests/golden/data/lora_<v>.safetensors:
      "style.<module>.weight": the fused weight of each module the style LoRA touches, at strength
          STYLE_STRENGTH
      "both.<module>.weight": style at STYLE_STRENGTH then distilled at DISTILLED_STRENGTH (ltx-core sums
          the two products, then adds the weight)
      metadata "lora": the strengths and targets as JSON.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402

from st_write import save  # noqa: E402
import gen_dit_goldens  # noqa: E402
from gen_tiny_diffusers import rename_dit  # noqa: E402

from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP  # noqa: E402
from ltx_core.loader.primitives import LoraPathStrengthAndSDOps  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.transformer.model_configurator import (  # noqa: E402
    LTXV_MODEL_COMFY_RENAMING_MAP, LTXModelConfigurator,
)

SEED = 20261128
WEIGHTS = os.path.join(ROOT, "weights", "tiny")
STYLE_RANK, DISTILLED_RANK = 4, 8
STYLE_STRENGTH, DISTILLED_STRENGTH = 0.8, 0.5
# module-name endings the style LoRA adapts (in every block that has them)
STYLE_TARGETS = ("attn1.to_q", "attn1.to_v", "ff.net.2", "audio_attn1.to_out.0", "audio_to_video_attn.to_k")
LORA_INIT_SCALE = 0.1  # products of this size move the tiny weights by a few percent


def block_linears(model):
    return [(n, m) for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and n.startswith("transformer_blocks.")]


def make_lora(linears, rank, g):
    sd = {}
    for name, lin in linears:
        sd[f"diffusion_model.{name}.lora_A.weight"] = (torch.randn(rank, lin.in_features, generator=g)
                                                       * LORA_INIT_SCALE).to(torch.bfloat16)
        sd[f"diffusion_model.{name}.lora_B.weight"] = (torch.randn(lin.out_features, rank, generator=g)
                                                       * LORA_INIT_SCALE).to(torch.bfloat16)
    return sd


def diffusers_names(sd):
    out = {}
    for k, v in sd.items():
        module, half = k[len("diffusion_model."):].rsplit(".lora_", 1)
        df = rename_dit(module + ".weight")[:-len(".weight")]
        out[f"transformer.{df}.lora_{half}"] = v
    return out


def lora_path(name, version):
    return os.path.join(WEIGHTS, f"ltx2-tiny-lora-{name}-{version}.safetensors")


def fused(version, loras):
    path = os.path.join(WEIGHTS, f"ltx2-tiny-{version}.safetensors")
    builder = SingleGPUModelBuilder(model_class_configurator=LTXModelConfigurator, model_path=path,
                                    model_sd_ops=LTXV_MODEL_COMFY_RENAMING_MAP,
                                    loras=tuple(LoraPathStrengthAndSDOps(p, s, LTXV_LORA_COMFY_RENAMING_MAP)
                                                for p, s in loras))
    return builder.build(device=torch.device("cpu"), dtype=torch.float32).eval()


def run(version):
    model, _ = gen_dit_goldens.load_model(version)
    linears = block_linears(model)
    style_lin = [(n, m) for n, m in linears if n.endswith(STYLE_TARGETS)]
    if not style_lin:
        raise RuntimeError(f"{version}: no style targets")
    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    style, distilled = make_lora(style_lin, STYLE_RANK, g), make_lora(linears, DISTILLED_RANK, g)
    paths = {name: lora_path(name, version) for name in ("style", "style-diffusers", "distilled")}
    meta = {"generator": "tests/golden/gen_lora_golden.py"}
    save(style, paths["style"], metadata=meta)
    save(diffusers_names(style), paths["style-diffusers"], metadata=meta)
    save(distilled, paths["distilled"], metadata=meta)

    tensors = {}
    with torch.no_grad():
        one = dict(fused(version, [(paths["style"], STYLE_STRENGTH)]).named_parameters())
        two = dict(fused(version, [(paths["style"], STYLE_STRENGTH),
                                   (paths["distilled"], DISTILLED_STRENGTH)]).named_parameters())
    base = dict(model.named_parameters())
    for name, _ in style_lin:
        tensors[f"style.{name}.weight"] = one[f"{name}.weight"]
        if torch.equal(one[f"{name}.weight"], base[f"{name}.weight"]):
            raise RuntimeError(f"{version}: {name} was not changed by the style LoRA")
    for name, _ in linears:
        tensors[f"both.{name}.weight"] = two[f"{name}.weight"]
    tensors = {k: v.detach().float().contiguous() for k, v in tensors.items()}
    gmeta = {"lora": json.dumps({"version": version, "style_strength": STYLE_STRENGTH,
                                 "distilled_strength": DISTILLED_STRENGTH, "style_rank": STYLE_RANK,
                                 "distilled_rank": DISTILLED_RANK, "style_targets": [n for n, _ in style_lin]}),
             "generator": "tests/golden/gen_lora_golden.py",
             "reference": "ltx-core 1.0.0 SingleGPUModelBuilder(loras=...) -> apply_loras, fp32 CPU"}
    out = os.path.join(HERE, "data", f"lora_{version}.safetensors")
    save(tensors, out, metadata=gmeta)
    print(f"{out}: {len(tensors)} fused weights; {len(style_lin)} style / {len(linears)} distilled targets")


def main():
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        run(version)


if __name__ == "__main__":
    main()
