"""How far MaxDiffusion's own bf16 run is from its fp32 run on the tiny DiTs (issue #15 item 3): a
measurement for docs/tpu-validation.md, not a golden (it writes nothing).

One DiT forward through ltx2_pipeline.transformer_forward_pass on md_<v>.safetensors' inputs (the
fp32 golden's latents, connector outputs and timestep 700), with the TPU configs' dtypes
(ltx2_video.yml / ltx2_3_video.yml: weights_dtype = activations_dtype = bfloat16, precision 'bf16',
i.e. jax.lax.Precision.DEFAULT), against the fp32 golden's dit.out_*. The fp32 engine is 1.7e-6 ..
2.5e-6 from that golden (test_md_golden), so its distance to the bf16 run is this one to within that.
Also reruns the fp32 forward, to show how far this machine's XLA is from the one that wrote the golden.

Run as gen_maxdiffusion_goldens.py (same JAX environment):
  JAX_PLATFORMS=cpu MAXDIFFUSION_SRC=/tmp/maxdiffusion-7cfb880/src \
      /work/venv-jax/bin/python tests/golden/probe_maxdiffusion_bf16.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_maxdiffusion_goldens as G  # noqa: E402  (hub cache, stubs, imports)

np, jax, jnp, nnx, LP = G.np, G.jax, G.jnp, G.nnx, G.LP
from flax.linen import partitioning as nn_partitioning  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402

LATENT = (2, 2, 3)  # the golden's latent grid (frames, rows, columns)
CASES = (("float32", "float32", "HIGHEST"), ("bfloat16", "bfloat16", "bf16"))


def forward(version, wdt, adt, precision, g):
    cfg = G.make_config(version)
    cfg.weights_dtype, cfg.activations_dtype, cfg.precision = jnp.dtype(wdt), jnp.dtype(adt), precision
    devices = np.array(jax.devices()).reshape(1, 1, 1, 1)
    mesh = Mesh(devices, cfg.mesh_axes)
    tr = LP.LTX2Pipeline.load_transformer(devices, mesh, nnx.Rngs(jax.random.key(cfg.seed)), cfg)
    t = jnp.asarray(np.float32(G.DIT_SIGMA) * np.float32(1000.0))
    mask = jnp.asarray(g["conn.mask"]).astype(jnp.bool_)
    tg, ts = nnx.split(tr)
    with mesh, nn_partitioning.axis_rules(cfg.logical_axis_rules):
        ov, oa = LP.transformer_forward_pass(
            tg, ts, jnp.asarray(g["dit.in_video"]), jnp.asarray(g["dit.in_audio"]), t, jnp.asarray(g["conn.video"]),
            jnp.asarray(g["conn.audio"]), mask, mask, latent_num_frames=LATENT[0], latent_height=LATENT[1],
            latent_width=LATENT[2], audio_num_frames=g["dit.in_audio"].shape[1], fps=G.FPS, global_batch_size=1,
            sigma=t, audio_sigma=t, use_cross_timestep=bool(cfg.use_cross_timestep), is_cfg_stg_mode=False)
    return np.asarray(ov, dtype=np.float32), np.asarray(oa, dtype=np.float32)


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    G.check_tree()
    try:
        for v in ("2.0", "2.3"):
            g = load_file(os.path.join(HERE, "data", f"md_{v}.safetensors"))
            for wdt, adt, prec in CASES:
                ov, oa = forward(v, wdt, adt, prec, g)
                print(f"LTX-{v} DiT forward, weights {wdt}, activations {adt}, precision {prec}: rel-L2 to the fp32 "
                      f"golden video {rel(ov, g['dit.out_video']):.3g}, audio {rel(oa, g['dit.out_audio']):.3g}")
    finally:
        G.shutil.rmtree(G.HUB_CACHE)


if __name__ == "__main__":
    main()
