"""MaxDiffusion's converted-weights cache of the tiny DiTs, written by MaxDiffusion itself (issue #15 item 6).

A TPU user of MaxDiffusion who sets `converted_weights_dir` gets, per (model, subfolder, weights dtype, scan
mode), one safetensors file holding the DiT exactly as the TPU ran it: flax paths joined by '.', Linear kernels
[in, out], and with scan_layers the 48 blocks stacked on a leading layer axis (ltx2_utils.py
save_converted_weights / load_transformer_weights at 7cfb880; the file name comes from ltx2_pipeline.py
converted_weights_cache_dir). The engine loads that file in place of the diffusers transformer/ shards
(`ltx2 generate --maxdiffusion-weights`); these files are what tests/test_md_weights.c loads.

What runs (MaxDiffusion 7cfb880, unmodified; the setup of gen_maxdiffusion_goldens.py: offline hub cache over
the tiny diffusers folders, import-only stubs, one CPU device): LTX2Pipeline.load_transformer with
converted_weights_dir set to a temporary folder, so load_transformer_weights converts the diffusers shards
and calls save_converted_weights; the file it writes is copied here unchanged.

Files (data/md_weights_<v>_<dtype>_scan<0|1>.safetensors):
  2.0 bfloat16, scan on   the TPU default (ltx2_video.yml: weights_dtype bfloat16, scan_layers true); the
                          cast-excluded parameters (_CAST_EXCLUSION_PATTERN: norms, scale_shift tables, ...)
                          stay float32 as MaxDiffusion keeps them
  2.3 bfloat16, scan on   the same for LTX-2.3
  2.0 float32, scan off   the other layout: per-block keys `transformer_blocks.<i>.<...>`
The tiny diffusers weights are bf16, so every cached value equals the diffusers one (bf16 -> f32 and back
are exact): the engine must load bitwise the weights it loads from the diffusers folder, and its forward
must meet md_<v>.safetensors' dit.out_* (computed by MaxDiffusion with the same values) as closely as the
forward from the diffusers folder does.

Run (the JAX environment of gen_maxdiffusion_goldens.py):
  JAX_PLATFORMS=cpu MAXDIFFUSION_SRC=/tmp/maxdiffusion-7cfb880/src \
      /work/venv-jax/bin/python tests/golden/gen_maxdiffusion_weights.py
Deterministic: a rerun writes the same bytes.
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_maxdiffusion_goldens as G  # noqa: E402  (sets up the hub cache, stubs and imports)

np, jax, jnp, nnx, LP = G.np, G.jax, G.jnp, G.nnx, G.LP
from jax.sharding import Mesh  # noqa: E402

CASES = (("2.0", "bfloat16", True), ("2.3", "bfloat16", True), ("2.0", "float32", False))


def run(version, dtype, scan, cache_root):
    cfg = G.make_config(version)
    cfg.weights_dtype = jnp.dtype(dtype)
    cfg.scan_layers = scan
    cfg.converted_weights_dir = os.path.join(cache_root, f"{version}-{dtype}-{int(scan)}")
    os.makedirs(cfg.converted_weights_dir)  # MaxDiffusion writes into it but does not create it
    devices = np.array(jax.devices()).reshape(1, 1, 1, 1)
    mesh = Mesh(devices, cfg.mesh_axes)
    LP.LTX2Pipeline.load_transformer(devices, mesh, nnx.Rngs(jax.random.key(cfg.seed)), cfg)
    cache = LP.converted_weights_cache_dir(cfg, "transformer") + ".safetensors"
    if not os.path.isfile(cache):
        raise SystemExit(f"MaxDiffusion wrote no converted-weights cache at {cache}")
    out = os.path.join(HERE, "data", f"md_weights_{version}_{dtype}_scan{int(scan)}.safetensors")
    shutil.copyfile(cache, out)
    print(f"wrote {os.path.relpath(out, G.ROOT)} ({os.path.getsize(out)} bytes) from {os.path.basename(cache)}")


def main():
    G.check_tree()
    root = tempfile.mkdtemp(prefix="md-converted-")
    try:
        for case in CASES:
            run(*case, root)
    finally:
        shutil.rmtree(root)
        shutil.rmtree(G.HUB_CACHE)


if __name__ == "__main__":
    main()
