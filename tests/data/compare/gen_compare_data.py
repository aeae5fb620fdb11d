#!/usr/bin/env python3
"""Data for the `ltx2 compare` acceptance test (NumPy only, deterministic).

Writes, next to this script:
  ref/{a,b,h,v}.npy   reference tensors
  out/{a,b,h,v}.npy   the same tensors, except:
                        b[2,5] += 0.5          (the ONE planted error)
                        a      += ~1e-7 noise   (benign: far below any sane tolerance)
  ref.npz, out.npz    the same tensors in one archive each (stored, fixed timestamps)
  expected.json       which tensor/index holds the planted error and how large it is
  per_token/{sample,token,token_bad}.npy   a per-sample timestep [2] and per-token ones [2, 7]
                      (every token the sample's sigma; token_bad: one token off)
Tensors: a f32 [4,6], b f32 [3,8], h f16 [5,7], v f32 [2,3,4] (3-D).
  maxdiffusion/ours/*.npy   a dump in our names (patchify_proj.out, adaln_single.out,
                      transformer_blocks.{0,1}.attn1.out, video_args.pe.cos)
  maxdiffusion/md.npz       the same tensors in MaxDiffusion's names (proj_in.out, time_embed.out,
                      rope.cos) and scan-stacked blocks (transformer_blocks.attn1.out [2, ...])
  maxdiffusion/md_bad.npz   md.npz with one planted error in layer 1 (MD_PLANTED)
"""
import io
import json
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 1234
PLANTED = {"tensor": "b", "index": [2, 5], "delta": 0.5}
NOISE = {"tensor": "a", "amplitude": 1e-7}
MD_SEED = 4321
MD_PLANTED = {"tensor": "transformer_blocks.attn1.out", "index": [1, 0, 2, 1], "delta": 0.25}


def write_maxdiffusion():
    """Our dump names vs MaxDiffusion's module names and scan-stacked layers (own RNG: the files
    above do not change)."""
    rng = np.random.default_rng(MD_SEED)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    layers = [f32(1, 4, 3), f32(1, 4, 3)]
    ours = {"patchify_proj.out": f32(1, 4, 3), "adaln_single.out": f32(1, 6), "video_args.pe.cos": f32(1, 2, 4, 2)}
    ours.update({f"transformer_blocks.{i}.attn1.out": x for i, x in enumerate(layers)})
    md = {"proj_in.out": ours["patchify_proj.out"], "time_embed.out": ours["adaln_single.out"],
          "rope.cos": ours["video_args.pe.cos"], "transformer_blocks.attn1.out": np.stack(layers)}
    bad = {k: v.copy() for k, v in md.items()}
    bad[MD_PLANTED["tensor"]][tuple(MD_PLANTED["index"])] += np.float32(MD_PLANTED["delta"])
    root = os.path.join(HERE, "maxdiffusion")
    os.makedirs(os.path.join(root, "ours"), exist_ok=True)
    for name, arr in ours.items():
        with open(os.path.join(root, "ours", f"{name}.npy"), "wb") as f:
            f.write(npy_bytes(arr))
    write_npz(os.path.join(root, "md.npz"), md)
    write_npz(os.path.join(root, "md_bad.npz"), bad)


def npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def write_npz(path, arrays):
    # np.savez stamps the current time into the zip; a fixed ZipInfo keeps the file reproducible.
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            z.writestr(info, npy_bytes(arr))


def main():
    rng = np.random.default_rng(SEED)
    ref = {
        "a": rng.standard_normal((4, 6)).astype(np.float32),
        "b": rng.standard_normal((3, 8)).astype(np.float32),
        "h": rng.standard_normal((5, 7)).astype(np.float16),
        "v": rng.standard_normal((2, 3, 4)).astype(np.float32),
    }
    out = {k: v.copy() for k, v in ref.items()}
    out["a"] = (out["a"] + rng.uniform(-1, 1, out["a"].shape) * NOISE["amplitude"]).astype(np.float32)
    i, j = PLANTED["index"]
    out["b"][i, j] = np.float32(out["b"][i, j] + PLANTED["delta"])

    for sub, arrays in (("ref", ref), ("out", out)):
        os.makedirs(os.path.join(HERE, sub), exist_ok=True)
        for name, arr in arrays.items():
            with open(os.path.join(HERE, sub, f"{name}.npy"), "wb") as f:
                f.write(npy_bytes(arr))
        write_npz(os.path.join(HERE, f"{sub}.npz"), arrays)

    sigmas = np.array([0.5, 0.25], dtype=np.float32)
    token = np.repeat(sigmas[:, None], 7, axis=1)
    token_bad = token.copy()
    token_bad[1, 3] = np.float32(0.3)
    os.makedirs(os.path.join(HERE, "per_token"), exist_ok=True)
    for name, arr in (("sample", sigmas), ("token", token), ("token_bad", token_bad)):
        with open(os.path.join(HERE, "per_token", f"{name}.npy"), "wb") as f:
            f.write(npy_bytes(arr))

    write_maxdiffusion()

    a_diff = np.abs(out["a"].astype(np.float64) - ref["a"].astype(np.float64))
    expected = {
        "tensors": {k: {"dtype": str(v.dtype), "shape": list(v.shape)} for k, v in ref.items()},
        "planted_error": {
            "tensor": PLANTED["tensor"],
            "index": PLANTED["index"],
            "flat_index": int(np.ravel_multi_index(tuple(PLANTED["index"]), ref["b"].shape)),
            "ref_value": float(ref["b"][i, j]),
            "out_value": float(out["b"][i, j]),
            "abs_error": float(abs(np.float64(out["b"][i, j]) - np.float64(ref["b"][i, j]))),
        },
        "benign_noise": {"tensor": NOISE["tensor"], "amplitude": NOISE["amplitude"],
                         "max_abs_diff": float(a_diff.max())},
        "identical": ["h", "v"],
        "generator": "tests/data/compare/gen_compare_data.py",
        "numpy": np.__version__,
    }
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(expected["planted_error"]))


if __name__ == "__main__":
    main()
