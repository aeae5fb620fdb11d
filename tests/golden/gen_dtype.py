#!/usr/bin/env python3
"""Goldens for dtype conversions, as PyTorch does them.

Writes tests/golden/data/dtype.safetensors with:
  decode tables (every bit pattern -> f32, by torch's .to(torch.float32)):
    "bf16.bits"     I16 [65536]  bit pattern i (stored as int16; reinterpret as uint16)
    "bf16.decoded"  F32 [65536]
    "f16.bits"      I16 [65536], "f16.decoded" F32 [65536]
    "f8_e4m3.bits"  U8  [256],   "f8_e4m3.decoded" F32 [256]   (torch.float8_e4m3fn)
    "f8_e5m2.bits"  U8  [256],   "f8_e5m2.decoded" F32 [256]   (torch.float8_e5m2)
  encode cases (f32 -> narrow, by torch's .to(dtype), round-to-nearest-even):
    "encode.input"     F32 [N]   selected f32 values
    "encode.category"  U8  [N]   index into metadata "categories" (why the value was chosen)
    "encode.bf16"      I16 [N]   resulting bf16 bit pattern
    "encode.f16"       I16 [N]
    "encode.f8_e4m3"   U8  [N]
    "encode.f8_e5m2"   U8  [N]
Metadata: "categories" (JSON list), "notes" (JSON dict of observed torch behaviours that a C
implementation must reproduce or consciously differ from), generator/torch versions.
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_write import save  # noqa: E402

SEED = 7
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dtype.safetensors")

CATEGORIES = [
    "special",          # 0: +-0, +-inf, NaNs, f32 extremes
    "bf16_midpoint",    # 1: exact midpoints between adjacent bf16 values and +-1 f32 ulp around them
    "f16_midpoint",     # 2: same for f16
    "f8_e4m3_midpoint",  # 3
    "f8_e5m2_midpoint",  # 4
    "near_overflow",    # 5: dense sweeps around each format's max / overflow threshold
    "subnormal",        # 6: f32 subnormals and values in each narrow format's subnormal range
    "random_normal",    # 7: random values with log-uniform magnitudes
    "random_bits",      # 8: random f32 bit patterns (incl. NaN payloads)
]


def f32_from_bits(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def bits_of(t: torch.Tensor) -> np.ndarray:
    return t.contiguous().view(torch.uint8).numpy().copy() if t.element_size() == 1 else \
        t.contiguous().view(torch.int16).numpy().copy()


def decode_table(dtype, n):
    if n == 65536:
        raw = torch.arange(n, dtype=torch.int32).to(torch.int16)  # wraps: pattern i as int16
    else:
        raw = torch.arange(n, dtype=torch.int32).to(torch.uint8)
    return raw, raw.view(dtype).to(torch.float32)


def midpoints(values_f32: np.ndarray, rng, count):
    """values_f32: sorted positive representable values of a narrow format (as f32).
    Returns mids between random adjacent pairs, plus the f32 neighbours just below/above."""
    v = values_f32.astype(np.float64)
    idx = np.arange(len(v) - 1)
    if count < len(idx):
        idx = np.sort(rng.choice(idx, size=count, replace=False))
    mids = ((v[idx] + v[idx + 1]) / 2).astype(np.float32)  # exact: narrow formats fit easily in f32
    assert np.all(mids.astype(np.float64) == (v[idx] + v[idx + 1]) / 2)
    below = np.nextafter(mids, np.float32(0))
    above = np.nextafter(mids, np.float32(np.inf))
    out = np.concatenate([mids, below, above])
    sign = rng.random(out.shape[0]) < 0.5
    out[sign] = -out[sign]
    return out


def positive_finite_values(dtype, nbits):
    n = 1 << nbits
    raw = torch.arange(n // 2, dtype=torch.int32)
    raw = raw.to(torch.int16) if nbits == 16 else raw.to(torch.uint8)
    vals = raw.view(dtype).to(torch.float32).numpy()
    vals = vals[np.isfinite(vals)]
    return np.unique(vals)


def main():
    rng = np.random.default_rng(SEED)
    tensors = {}

    for name, dtype, n in (("bf16", torch.bfloat16, 65536), ("f16", torch.float16, 65536),
                           ("f8_e4m3", torch.float8_e4m3fn, 256), ("f8_e5m2", torch.float8_e5m2, 256)):
        raw, dec = decode_table(dtype, n)
        tensors[f"{name}.bits"] = raw
        tensors[f"{name}.decoded"] = dec

    parts = []

    def add(cat, arr):
        arr = np.asarray(arr, dtype=np.float32)
        parts.append((np.full(arr.shape[0], cat, dtype=np.uint8), arr))

    fmax = np.finfo(np.float32).max
    add(0, np.array([0.0, -0.0, np.inf, -np.inf, fmax, -fmax, np.finfo(np.float32).tiny,
                     -np.finfo(np.float32).tiny, 1.0, -1.0, 0.5, 2.0, 3.0, 1.0 / 3.0], dtype=np.float32))
    add(0, f32_from_bits([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7FC00001, 0xFFFFFFFF,
                          0x7F812345, 0x00000001, 0x80000001, 0x007FFFFF]))

    bf16_vals = positive_finite_values(torch.bfloat16, 16)
    f16_vals = positive_finite_values(torch.float16, 16)
    e4_vals = positive_finite_values(torch.float8_e4m3fn, 8)
    e5_vals = positive_finite_values(torch.float8_e5m2, 8)
    add(1, midpoints(bf16_vals, rng, 6000))
    add(2, midpoints(f16_vals, rng, 6000))
    add(3, midpoints(e4_vals, rng, len(e4_vals)))
    add(4, midpoints(e5_vals, rng, len(e5_vals)))

    # Overflow thresholds: sweep f32 bit patterns around max and max + half ulp of each format.
    f32max = float(np.finfo(np.float32).max)
    for vals in (bf16_vals, f16_vals, e4_vals, e5_vals):
        top = float(vals[-1])
        nxt = top + (top - float(vals[-2]))  # the value one step above max (float64: may exceed f32)
        for centre in (top, (top + nxt) / 2, nxt):
            if centre > f32max:
                continue
            b = int(np.array([centre], dtype=np.float32).view(np.uint32)[0])
            sweep = np.arange(b - 300, b + 301, dtype=np.int64)
            sweep = sweep[(sweep >= 0) & (sweep < 0x7F800000)].astype(np.uint32)
            s = f32_from_bits(sweep)
            add(5, np.concatenate([s, -s[::7]]))
        add(5, rng.uniform(float(vals[-2]), min(nxt * 2.0, f32max), 500).astype(np.float32))

    # Subnormals: f32 subnormal patterns, and each narrow format's subnormal / underflow range.
    add(6, f32_from_bits(rng.integers(1, 0x00800000, 3000, dtype=np.uint32)))
    for lo, hi in ((2.0 ** -30, 2.0 ** -13), (2.0 ** -12, 2.0 ** -5), (2.0 ** -20, 2.0 ** -13),
                   (2.0 ** -140, 2.0 ** -125)):
        mags = np.exp(rng.uniform(np.log(lo), np.log(hi), 3000)).astype(np.float32)
        sign = rng.random(3000) < 0.5
        mags[sign] = -mags[sign]
        add(6, mags)

    # Random values: log-uniform magnitude over the whole useful range, random sign.
    mags = np.exp(rng.uniform(np.log(2.0 ** -40), np.log(2.0 ** 40), 30000)).astype(np.float32)
    sign = rng.random(30000) < 0.5
    mags[sign] = -mags[sign]
    add(7, mags)
    add(7, rng.standard_normal(10000).astype(np.float32))
    add(8, f32_from_bits(rng.integers(0, 1 << 32, 10000, dtype=np.uint64).astype(np.uint32)))

    cats = np.concatenate([p[0] for p in parts])
    vals = np.concatenate([p[1] for p in parts])
    x = torch.from_numpy(vals.copy())
    tensors["encode.input"] = x
    tensors["encode.category"] = torch.from_numpy(cats.copy())
    tensors["encode.bf16"] = torch.from_numpy(bits_of(x.to(torch.bfloat16)))
    tensors["encode.f16"] = torch.from_numpy(bits_of(x.to(torch.float16)))
    tensors["encode.f8_e4m3"] = torch.from_numpy(bits_of(x.to(torch.float8_e4m3fn)))
    tensors["encode.f8_e5m2"] = torch.from_numpy(bits_of(x.to(torch.float8_e5m2)))

    def enc(v, dt):
        t = torch.tensor([v], dtype=torch.float32).to(dt)
        return hex(int(bits_of(t)[0]) & (0xFF if t.element_size() == 1 else 0xFFFF))

    notes = {
        "rounding": "round to nearest, ties to even, for all four formats",
        "e4m3fn_1000": enc(1000.0, torch.float8_e4m3fn),
        "e4m3fn_464": enc(464.0, torch.float8_e4m3fn),
        "e4m3fn_inf": enc(float("inf"), torch.float8_e4m3fn),
        "e5m2_60000": enc(60000.0, torch.float8_e5m2),
        "e5m2_1e6": enc(1e6, torch.float8_e5m2),
        "bf16_nan_0x7f800001": enc(float(f32_from_bits([0x7F800001])[0]), torch.bfloat16),
        "f16_nan_0x7f800001": enc(float(f32_from_bits([0x7F800001])[0]), torch.float16),
        "bf16_max_plus_half_ulp": enc(float(f32_from_bits([0x7F7F8000])[0]), torch.bfloat16),
        "bf16_nan_0x7fc00000": enc(float(f32_from_bits([0x7FC00000])[0]), torch.bfloat16),
        "f16_nan_0x7fc00000": enc(float(f32_from_bits([0x7FC00000])[0]), torch.float16),
        "e4m3fn_nan_0x7fc00000": enc(float(f32_from_bits([0x7FC00000])[0]), torch.float8_e4m3fn),
        "e4m3fn_neg_inf": enc(float("-inf"), torch.float8_e4m3fn),
        "e5m2_inf": enc(float("inf"), torch.float8_e5m2),
        "nan_handling": "torch's NaN sign/payload handling differs per format; see the values above "
                        "and every NaN row of encode.*. A C encoder may legitimately choose a canonical "
                        "NaN; tests should then compare NaN-ness, not bits, for NaN inputs.",
    }
    meta = {"categories": json.dumps(CATEGORIES), "notes": json.dumps(notes, sort_keys=True),
            "generator": "tests/golden/gen_dtype.py", "torch": torch.__version__, "seed": str(SEED),
            "bits_storage": "16-bit patterns are stored as I16: reinterpret the bits as uint16"}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    save(tensors, OUT, metadata=meta)
    print(f"wrote {OUT}: {vals.shape[0]} encode cases, {os.path.getsize(OUT)} bytes")
    print(json.dumps(notes, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
