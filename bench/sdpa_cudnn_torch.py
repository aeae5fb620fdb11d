#!/usr/bin/env python3
"""cuDNN SDPA baseline for bench_attention, through PyTorch's cuDNN attention backend.

Issue #6 holds our fused attention to <= 0.93 of (RoPE kernel + cuDNN SDPA) time. cuDNN's fused
attention is reachable from C only through its backend graph API, which ltx2c does not wrap, so
the baseline is timed here with torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION) on the
same machine, at the same shapes and layout as bench/bench_attention.c (q/k/v token-major
[B, S, H*d] bf16, handed to SDPA as [B, H, S, d] strided views, no copies), and combined with
bench_attention's own rows:

  baseline time = prep + cuDNN SDPA, where prep is bench_attention's "<shape> [prep]" row (our
  standalone RoPE kernel, plus our RMSNorm op for QK-norm shapes; absent = 0 for plain shapes);
  ratio       = our fused attention time / baseline time   (goal <= 0.93), per kernel: bench_attention
                names its rows "<shape> [mma_sync]", "<shape> [wgmma]" and "<shape> [wgmma_in_kernel]";
  roof_frac   = our TFLOP/s / the cuBLASLt bf16 GEMM rate bench_attention measured (goal >= 0.80).

Usage (on the GPU machine, after bench_attention --json ATT.jsonl):
  python3 bench/sdpa_cudnn_torch.py --ours ATT.jsonl --json SDPA.jsonl [--plot attention.png]
Writes one JSON object per shape (cuDNN time, TFLOP/s, our time, the ratios) and prints a table.
A shape cuDNN refuses (e.g. a mask it does not support) is reported as refused, not dropped.
"""
import argparse
import json
import math
import sys

# Same shapes as bench/bench_attention.c (name, B, Sq, Skv, H, d, masked, kv heads, causal). The
# names must match bench_attention's case names: that is how rows are paired.
SHAPES = [
    ("video self B2 H32 S6144 d128", 2, 6144, 6144, 32, 128, False, 32, False),
    ("video self B2 H32 S6144 d128 +rope", 2, 6144, 6144, 32, 128, False, 32, False),
    ("video self B2 H32 S6144 d128 +qknorm+rope", 2, 6144, 6144, 32, 128, False, 32, False),
    ("video->text B2 H32 Sq6144 Skv1024 d128 +qknorm+mask", 2, 6144, 1024, 32, 128, True, 32, False),
    ("audio self B2 H32 S126 d64 +qknorm+rope", 2, 126, 126, 32, 64, False, 32, False),
    ("a2v video q B2 H32 Sq6144 Skv126 d64 +qknorm+rope", 2, 6144, 126, 32, 64, False, 32, False),
    ("v2a audio q B2 H32 Sq126 Skv6144 d64 +qknorm+rope", 2, 126, 6144, 32, 64, False, 32, False),
    ("gemma-3 12B self B2 H16/kv8 S1024 d256 +causal", 2, 1024, 1024, 16, 256, False, 8, True),
]
# bench_attention's kernels: its rows are named "<shape> [<impl>]".
# wgmma_in_kernel: the wgmma kernel with Q's norm / RoPE and the mask inside it (the earlier layout).
IMPLS = ("mma_sync", "wgmma", "wgmma_in_kernel")
# Text padding as bench_attention: the first 3/4 of the keys are real tokens.
MASK_KEEP_NUM, MASK_KEEP_DEN = 3, 4
# Timing: warm-up calls, then timed calls per sample (amortises launch gaps), samples (median).
WARMUP, INNER, SAMPLES = 3, 10, 15
# The goals.
GOAL_RATIO, GOAL_ROOF = 0.93, 0.80


def load_rows(path):
    rows, notes = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if "case" in obj:
                rows[obj["case"]] = obj
            elif "note" in obj:
                notes.append(obj["note"])
    return rows, notes


def time_cudnn(torch, sdpa, B, Sq, Skv, H, d, masked, Hkv, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    g = torch.Generator(device="cuda").manual_seed(7)
    q = torch.randn(B, Sq, H, d, device="cuda", dtype=torch.bfloat16, generator=g).transpose(1, 2)
    k = torch.randn(B, Skv, Hkv, d, device="cuda", dtype=torch.bfloat16, generator=g).transpose(1, 2)
    v = torch.randn(B, Skv, Hkv, d, device="cuda", dtype=torch.bfloat16, generator=g).transpose(1, 2)
    if Hkv != H:
        # grouped heads expanded before timing: cuDNN then does the same FLOPs on H heads (it may
        # refuse enable_gqa), so the baseline is, if anything, favoured by the copy it skips
        k = k.repeat_interleave(H // Hkv, dim=1)
        v = v.repeat_interleave(H // Hkv, dim=1)
    mask = None
    if masked:
        keep = torch.arange(Skv, device="cuda") < (MASK_KEEP_NUM * Skv) // MASK_KEEP_DEN
        mask = keep.view(1, 1, 1, Skv).expand(B, 1, Sq, Skv)
    scale = 1.0 / math.sqrt(d)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for _ in range(WARMUP):
            sdpa(q, k, v, attn_mask=mask, scale=scale, is_causal=causal)
        torch.cuda.synchronize()
        times = []
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(SAMPLES):
            start.record()
            for _ in range(INNER):
                sdpa(q, k, v, attn_mask=mask, scale=scale, is_causal=causal)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3 / INNER)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def plot(path, results):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"# plot skipped: {e}")
        return
    names = [r["case"] for r in results if r.get("cudnn_tflops") and any(i in r for i in IMPLS)]
    if not names:
        print("# plot skipped: no shape has both our row and a cuDNN time")
        return
    by = {r["case"]: r for r in results}
    xs = range(len(names))
    impls = [i for i in IMPLS if any(i in by[n] for n in names)]
    width = 0.8 / (len(impls) + 1)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for k, impl in enumerate(impls):
        ax.bar([x + (k - len(impls) / 2) * width for x in xs],
               [by[n][impl]["ours_tflops"] if impl in by[n] else 0 for n in names], width,
               label=f"ltx2c fused attention [{impl}]")
    ax.bar([x + (len(impls) / 2) * width for x in xs], [by[n]["baseline_tflops"] for n in names], width,
           label="prep + cuDNN SDPA")
    roof = next((by[n]["gemm_tflops"] for n in names if by[n].get("gemm_tflops")), None)
    if roof:
        ax.axhline(roof, color="gray", linestyle="--", label=f"cuBLASLt bf16 GEMM {roof:.0f} TFLOP/s")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=15, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s (4*B*H*Sq*Skv*d / time)")
    ax.set_title(results[0].get("device_name", "GPU") + ": attention forward, bf16")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"# plot written to {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True, help="bench_attention --json output of the same machine")
    ap.add_argument("--json", required=True, help="append one JSON object per shape here")
    ap.add_argument("--plot", help="write a PNG bar chart here (needs matplotlib)")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"# cuDNN SDPA baseline skipped: no PyTorch ({e})")
        return 0
    if not torch.cuda.is_available():
        print("# cuDNN SDPA baseline skipped: PyTorch sees no CUDA device")
        return 0
    ours, _ = load_rows(args.ours)
    dev = torch.cuda.get_device_name(0)
    cudnn_ver = torch.backends.cudnn.version()
    print(f"# {dev}, torch {torch.__version__}, cuDNN {cudnn_ver}: SDPBackend.CUDNN_ATTENTION, bf16, "
          f"median of {SAMPLES} samples x {INNER} calls")
    print(f"{'shape':<52} {'cudnn ms':>9} {'TFLOP/s':>8} {'prep ms':>8} {'ours ms':>8} {'ratio':>6} "
          f"{'goal':>5} {'roof':>6}")
    results = []
    for name, B, Sq, Skv, H, d, masked, Hkv, causal in SHAPES:
        # causal: the score pairs a query sees, Sq (Sq + 1) / 2 (as bench_attention counts)
        flops = 4.0 * B * H * (Sq * (Sq + 1) / 2 if causal else Sq * Skv) * d
        res = {"bench": "attention_vs_cudnn", "case": name, "device_name": dev, "torch": torch.__version__,
               "cudnn": cudnn_ver, "flops": flops}
        try:
            med, lo, hi = time_cudnn(torch, F.scaled_dot_product_attention, B, Sq, Skv, H, d, masked, Hkv, causal)
        except RuntimeError as e:
            res["cudnn_refused"] = str(e).splitlines()[0][:300]
            print(f"{name:<52} cuDNN SDPA refused: {res['cudnn_refused']}")
            results.append(res)
            continue
        res.update(cudnn_s=med, cudnn_min_s=lo, cudnn_max_s=hi, cudnn_tflops=flops / med * 1e-12)
        prep = ours.get(name + " [prep]")
        prep_s = prep["median_s"] if prep else 0.0
        if (("+rope" in name) or ("+qknorm" in name)) and not prep:
            res["note"] = "no [prep] row from bench_attention: baseline counts cuDNN SDPA alone"
        base_s = prep_s + med
        res.update(prep_s=prep_s, baseline_s=base_s, baseline_tflops=flops / base_s * 1e-12)
        line = f"{name:<52} {med * 1e3:9.4f} {flops / med * 1e-12:8.1f} {prep_s * 1e3:8.4f}"
        impls = [(impl, ours[f"{name} [{impl}]"]) for impl in IMPLS if f"{name} [{impl}]" in ours]
        if not impls:
            line += "   (no bench_attention row of this name)"
        for impl, row in impls:
            ratio = row["median_s"] / base_s
            rf = row.get("roof_frac") or 0.0
            res[impl] = dict(ours_s=row["median_s"], ours_tflops=flops / row["median_s"] * 1e-12, ratio=ratio,
                             ratio_ok=ratio <= GOAL_RATIO, roof_frac=rf, roof_ok=rf >= GOAL_ROOF)
            res.update(ratio_goal=GOAL_RATIO, roof_goal=GOAL_ROOF, gemm_tflops=row.get("roof_rate", 0) * 1e-12)
            line += (f"\n  {impl:<50} {'':9} {'':8} {'':8} {row['median_s'] * 1e3:8.4f} {ratio:6.3f} "
                     f"{'ok' if ratio <= GOAL_RATIO else 'MISS':>5} {rf:6.3f}")
        print(line)
        results.append(res)
    with open(args.json, "a") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    if args.plot:
        plot(args.plot, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
