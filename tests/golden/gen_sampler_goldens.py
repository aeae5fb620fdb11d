#!/usr/bin/env python3
"""Sampler / guidance goldens computed by the references' own functions (CPU, deterministic).

Writes tests/golden/data/sampler.safetensors. Each case is "<kind>.<i>.*" with a float64
"<kind>.<i>.params" vector (layout per kind below) and fp32 data tensors:
  lc_sched  params [steps, tokens (0 = no latent: LTX2Scheduler default 4096), stretch, terminal]
            out: ltx_core LTX2Scheduler().execute(...)                         (ltx-core 1.0.0)
  df_sched  params [steps, tokens]  out: FlowMatchEulerDiscreteScheduler.sigmas after the
            LTX2Pipeline step-5 recipe (np.linspace(1, 1/N, N), calculate_shift(tokens))  (diffusers)
  distilled params [stage]          out: ltx_pipelines.utils.constants lists
  lc_euler  params [bf16, sigma_i]  x, x0, sigmas, out: EulerDiffusionStep().step(x, x0, sigmas, i)
  lc_x0     params [bf16, sigma]    x, v, out: ltx_core.utils.to_denoised(x, v, sigma)
  df_euler  params [steps, tokens, i]  x, v, out: scheduler.step(v, t_i, x)
  lc_guid   params [bf16, cfg, stg, rescale, mod, has_u, has_p, has_m]  c, u, p, m, out:
            MultiModalGuider(MultiModalGuiderParams(...)).calculate(c, u|0.0, p|0.0, m|0.0)
  df_guid   params [cfg, stg, rescale, mod, has_u, has_p, has_m, sigma]  x, vc, vu, vp, vm, out:
            the LTX2Pipeline.__call__ step-7 guidance lines (convert_velocity_to_x0, deltas,
            rescale_noise_cfg, convert_x0_to_velocity) with the pipeline's own functions; out is
            the guided velocity handed to scheduler.step
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_write import save  # noqa: E402
import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

from ltx_core.components.diffusion_steps import EulerDiffusionStep  # noqa: E402
from ltx_core.components.guiders import MultiModalGuider, MultiModalGuiderParams  # noqa: E402
from ltx_core.components.schedulers import LTX2Scheduler  # noqa: E402
from ltx_core.utils import to_denoised  # noqa: E402
from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES  # noqa: E402
from diffusers import FlowMatchEulerDiscreteScheduler  # noqa: E402
from diffusers.pipelines.ltx2.pipeline_ltx2 import LTX2Pipeline, calculate_shift, rescale_noise_cfg  # noqa: E402

SEED = 20260715
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sampler.safetensors")
T = {}
count = {}


def case(kind, params, **tensors):
    i = count.get(kind, 0)
    count[kind] = i + 1
    T[f"{kind}.{i}.params"] = torch.tensor(params, dtype=torch.float64)
    for k, v in tensors.items():
        T[f"{kind}.{i}.{k}"] = v.detach().to(torch.float32).contiguous()


def df_scheduler(steps, tokens):
    # Scheduler config as written by diffusers' scripts/convert_ltx2_to_diffusers.py (non-distilled).
    s = FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, use_dynamic_shifting=True, base_shift=0.95,
                                        max_shift=2.05, base_image_seq_len=1024, max_image_seq_len=4096,
                                        shift_terminal=0.1, time_shift_type="exponential")
    sig = np.linspace(1.0, 1 / steps, steps)
    mu = calculate_shift(tokens, 1024, 4096, 0.95, 2.05)
    s.set_timesteps(sigmas=sig, mu=mu)
    return s


# ---- schedules
for steps, tokens, stretch, term in [(2, 0, 1, 0.1), (8, 0, 1, 0.1), (30, 0, 1, 0.1), (40, 0, 1, 0.1),
                                     (30, 1536, 1, 0.1), (30, 6144, 1, 0.1), (15, 24480, 1, 0.1),
                                     (40, 4096, 1, 0.1), (20, 0, 0, 0.1), (25, 0, 1, 0.2), (1, 0, 0, 0.1)]:
    lat = torch.empty(1, 128, 1, 1, tokens) if tokens else None
    out = LTX2Scheduler().execute(steps=steps, latent=lat, stretch=bool(stretch), terminal=term)
    case("lc_sched", [steps, tokens, stretch, term], out=out)
for steps, tokens in [(2, 4096), (30, 6144), (40, 6144), (30, 1024), (8, 24576), (40, 4096), (25, 3000)]:
    case("df_sched", [steps, tokens], out=df_scheduler(steps, tokens).sigmas)
case("distilled", [1], out=torch.tensor(DISTILLED_SIGMA_VALUES))
case("distilled", [2], out=torch.tensor(STAGE_2_DISTILLED_SIGMA_VALUES))

g = torch.Generator().manual_seed(SEED)


def rn(*shape):
    return torch.randn(*shape, generator=g, dtype=torch.float32)


# ---- Euler / conversions
lc_sig = LTX2Scheduler().execute(steps=30)
for bf16 in (0, 1):
    dt = torch.bfloat16 if bf16 else torch.float32
    for i in (0, 13, 28, 29):
        x, x0 = rn(2, 24, 16).to(dt), rn(2, 24, 16).to(dt)
        out = EulerDiffusionStep().step(x, x0, lc_sig, i)
        case("lc_euler", [bf16, i], x=x, x0=x0, sigmas=lc_sig, out=out)
    for sigma in (1.0, 0.6337, 0.1):
        x, v = rn(2, 24, 16).to(dt), rn(2, 24, 16).to(dt)
        case("lc_x0", [bf16, sigma], x=x, v=v, out=to_denoised(x, v, torch.tensor(sigma, dtype=torch.float32)))
for steps, tokens, i in [(30, 6144, 0), (30, 6144, 17), (30, 6144, 29)]:
    s = df_scheduler(steps, tokens)
    s.set_begin_index(0)
    x, v = rn(2, 24, 16), rn(2, 24, 16)
    for j in range(i):  # advance the internal step index to i
        s.step(torch.zeros_like(v), s.timesteps[j], x, return_dict=False)
    case("df_euler", [steps, tokens, i], x=x, v=v, out=s.step(v, s.timesteps[i], x, return_dict=False)[0])

# ---- guidance, ltx-core
lc_cases = [
    (3.0, 1.0, 0.7, 3.0, 1, 1, 1), (7.0, 1.0, 0.7, 3.0, 1, 1, 1), (3.0, 0.0, 0.0, 1.0, 1, 0, 0),
    (1.0, 1.0, 0.0, 1.0, 0, 1, 0), (1.0, 0.0, 0.0, 3.0, 0, 0, 1), (3.0, 0.0, 0.45, 3.0, 1, 0, 1),
    (1.0, 0.0, 0.0, 1.0, 0, 0, 0), (3.0, 1.0, -0.3, 3.0, 1, 1, 1), (1.0, 0.0, 0.0, 1.0, 1, 1, 1),
]
for bf16 in (0, 1):
    dt = torch.bfloat16 if bf16 else torch.float32
    for cfg, stg, resc, mod, hu, hp, hm in lc_cases:
        c, u, p, m = (rn(1, 40, 16).to(dt) for _ in range(4))
        guider = MultiModalGuider(MultiModalGuiderParams(cfg_scale=cfg, stg_scale=stg, rescale_scale=resc,
                                                         modality_scale=mod))
        out = guider.calculate(c, u if hu else 0.0, p if hp else 0.0, m if hm else 0.0)
        case("lc_guid", [bf16, cfg, stg, resc, mod, hu, hp, hm], c=c, u=u, p=p, m=m, out=out)

# ---- guidance, diffusers (pipeline_ltx2.py __call__, "7. Denoising loop", fp32, batch 2)
for cfg, stg, resc, mod, hu, hp, hm, sigma in [
    (3.0, 1.0, 0.7, 3.0, 1, 1, 1, 0.93), (7.0, 1.0, 0.7, 3.0, 1, 1, 1, 0.41), (3.0, 0.0, 0.0, 1.0, 1, 0, 0, 0.75),
    (1.0, 1.0, 0.0, 1.0, 1, 1, 0, 0.5), (3.0, 0.0, 0.45, 3.0, 1, 0, 1, 0.2),
]:
    x, vc, vu, vp, vm = (rn(2, 40, 16) for _ in range(5))

    class _S:  # the pipeline's conversions only read scheduler.sigmas[step_idx]
        sigmas = torch.tensor([sigma], dtype=torch.float32)

    to_x0 = lambda v: LTX2Pipeline.convert_velocity_to_x0(None, x, v, 0, _S)  # noqa: E731
    c = to_x0(vc)
    cfg_d = (cfg - 1) * (c - to_x0(vu)) if hu else 0
    stg_d = stg * (c - to_x0(vp)) if hp else 0
    mod_d = (mod - 1) * (c - to_x0(vm)) if hm else 0
    gx = c + cfg_d + stg_d + mod_d
    if resc > 0:
        gx = rescale_noise_cfg(gx, c, guidance_rescale=resc)
    out = LTX2Pipeline.convert_x0_to_velocity(None, x, gx, 0, _S)
    case("df_guid", [cfg, stg, resc, mod, hu, hp, hm, sigma], x=x, vc=vc, vu=vu, vp=vp, vm=vm, out=out)

save(T, OUT, metadata={"generator": "tests/golden/gen_sampler_goldens.py", "seed": str(SEED)})
print(f"wrote {OUT}: {len(T)} tensors")
