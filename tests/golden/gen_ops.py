#!/usr/bin/env python3
"""Goldens for the elementary ops, computed by PyTorch on the CPU.

Writes tests/golden/data/ops.safetensors. Every case <op>.<i> stores its inputs and its output as
named tensors ("gemm.0.a", "gemm.0.b", "gemm.0.bias", "gemm.0.out", ...). The safetensors
__metadata__ key "cases" holds a JSON list describing each case: op, index, params (eps, ...),
the tensor names with their shapes, the dtype the op was computed in, and the formula.

fp32 cases are computed in fp32 by torch (what a C fp32 kernel should match to ~1e-6 relative);
"_f64" cases store float64 reference outputs of the same fp32 inputs (the "true" answer, for
judging accumulation error). Inputs are seeded, so the file is bit-identical on every run with the
pinned torch.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_write import save  # noqa: E402

SEED = 20260101
EPS = 1e-6
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ops.safetensors")

tensors = {}
cases = []
counters = {}


def _next(op):
    i = counters.get(op, 0)
    counters[op] = i + 1
    return i


def add_case(op, inputs, out, params=None, compute="float32", formula=""):
    i = _next(op)
    names = {}
    for k, v in list(inputs.items()) + [("out", out)]:
        name = f"{op}.{i}.{k}"
        tensors[name] = v.detach().contiguous().clone()
        names[k] = {"name": name, "shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
    cases.append({"op": op, "index": i, "params": params or {}, "compute": compute,
                  "tensors": names, "formula": formula})


def rnd(g, *shape, scale=1.0):
    return torch.randn(*shape, generator=g, dtype=torch.float32) * scale


def main():
    torch.manual_seed(SEED)
    g = torch.Generator().manual_seed(SEED)

    # linear: y = x @ W^T + b, W is [out, in] (PyTorch Linear layout, as in every checkpoint).
    gemm_shapes = [((7, 13), 5, True), ((3, 17, 33), 31, True), ((64, 64), 48, False),
                   ((2, 5, 128), 129, True), ((1, 1), 1, True)]
    for xs, n_out, bias in gemm_shapes:
        a = rnd(g, *xs)
        b = rnd(g, n_out, xs[-1], scale=xs[-1] ** -0.5)
        bb = rnd(g, n_out) if bias else None
        out = torch.nn.functional.linear(a, b, bb)
        inp = {"a": a, "b": b}
        if bias:
            inp["bias"] = bb
        add_case("gemm", inp, out, {"has_bias": bias}, formula="out = a @ b^T + bias")
        out64 = torch.nn.functional.linear(a.double(), b.double(), bb.double() if bias else None)
        inp64 = dict(inp)
        add_case("gemm_f64", inp64, out64, {"has_bias": bias}, compute="float64",
                 formula="out = a @ b^T + bias (float64 math on the fp32 inputs)")

    # RMSNorm over the last dim: x * rsqrt(mean(x^2) + eps) [* weight]
    for shape, weight in [((4, 64), True), ((3, 7, 33), False), ((2, 5, 128), True), ((1, 1), False),
                          ((2, 3, 4096), True)]:
        x = rnd(g, *shape, scale=3.0)
        w = rnd(g, shape[-1]) if weight else None
        out = torch.nn.functional.rms_norm(x, (shape[-1],), w, EPS)
        inp = {"x": x}
        if weight:
            inp["weight"] = w
        add_case("rms_norm", inp, out, {"eps": EPS, "has_weight": weight},
                 formula="out = x / sqrt(mean(x^2, -1) + eps) * weight")
        x64 = x.double()
        o64 = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + EPS)
        if weight:
            o64 = o64 * w.double()
        add_case("rms_norm_f64", inp, o64, {"eps": EPS, "has_weight": weight}, compute="float64",
                 formula="float64 reference of rms_norm on the fp32 inputs")

    # LayerNorm over the last dim (biased variance), with and without affine.
    for shape, affine in [((4, 64), True), ((3, 7, 33), False), ((2, 5, 128), False), ((5, 31), True)]:
        x = rnd(g, *shape, scale=2.0) + 0.5
        w = rnd(g, shape[-1]) if affine else None
        bb = rnd(g, shape[-1]) if affine else None
        out = torch.nn.functional.layer_norm(x, (shape[-1],), w, bb, EPS)
        inp = {"x": x}
        if affine:
            inp["weight"] = w
            inp["bias"] = bb
        add_case("layer_norm", inp, out, {"eps": EPS, "elementwise_affine": affine},
                 formula="out = (x - mean) / sqrt(var_biased + eps) * weight + bias")

    # softmax over the last dim, including large magnitudes and -inf masking.
    for shape, scale, mask in [((4, 10), 1.0, False), ((2, 3, 33), 10.0, False), ((3, 128), 30.0, True),
                               ((1, 1), 1.0, False)]:
        x = rnd(g, *shape, scale=scale)
        if mask:
            x[:, ::3] = float("-inf")
        out = torch.softmax(x, dim=-1)
        add_case("softmax", {"x": x}, out, {"dim": -1, "has_neg_inf": mask},
                 formula="out = exp(x - max) / sum(exp(x - max))")

    # GELU tanh approximation and SiLU over a wide value range (tails matter for bf16 models).
    for shape, scale in [((1000,), 4.0), ((3, 7, 33), 1.0)]:
        x = rnd(g, *shape, scale=scale)
        if x.dim() == 1:
            x[:9] = torch.tensor([-20.0, -10.0, -5.0, -1.0, 0.0, 1.0, 5.0, 10.0, 20.0])
        add_case("gelu_tanh", {"x": x}, torch.nn.functional.gelu(x, approximate="tanh"),
                 {"approximate": "tanh"},
                 formula="0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))")
        add_case("silu", {"x": x}, torch.nn.functional.silu(x), formula="x * sigmoid(x)")

    # Broadcasting add / mul (NumPy rules, right-aligned).
    bshapes = [((4, 5), (4, 5)), ((3, 4, 5), (5,)), ((3, 1, 5), (1, 4, 1)), ((2, 3, 4, 5), (3, 1, 1)),
               ((7,), (1,)), ((2, 1, 6), (2, 3, 6))]
    for sa, sb in bshapes:
        a = rnd(g, *sa)
        b = rnd(g, *sb)
        add_case("add", {"a": a, "b": b}, a + b, {"broadcast": list(torch.broadcast_shapes(sa, sb))},
                 formula="out = a + b (broadcast)")
        add_case("mul", {"a": a, "b": b}, a * b, {"broadcast": list(torch.broadcast_shapes(sa, sb))},
                 formula="out = a * b (broadcast)")

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    meta = {"cases": json.dumps(cases, sort_keys=True), "generator": "tests/golden/gen_ops.py",
            "torch": torch.__version__, "seed": str(SEED)}
    save(tensors, OUT, metadata=meta)
    size = os.path.getsize(OUT)
    print(f"wrote {OUT}: {len(cases)} cases, {len(tensors)} tensors, {size} bytes")
    if size > 2 * 1024 * 1024:
        sys.exit("ops.safetensors exceeds the 2 MB budget")


if __name__ == "__main__":
    main()
