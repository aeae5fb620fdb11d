"""MaxDiffusion's own bf16 DiT forward on the tiny DiTs (issue #15 item 3, `--precision tpu`):
writes data/md_bf16_<v>.safetensors and prints how far that run is from MaxDiffusion's fp32 one.

One DiT forward through ltx2_pipeline.transformer_forward_pass on md_<v>.safetensors' inputs (the
fp32 golden's latents, connector outputs and timestep 700), with the TPU configs' dtypes
(ltx2_video.yml / ltx2_3_video.yml: weights_dtype = activations_dtype = bfloat16, precision 'bf16',
i.e. jax.lax.Precision.DEFAULT), compiled twice by XLA:CPU:
  - dit.out_{video,audio}: as XLA compiles it by default. Its excess-precision rule
    (xla_allow_excess_precision, on by default on CPU and TPU) deletes every f32 -> bf16 -> f32
    convert pair it finds adjacent, so a bf16 value declared by the source is rounded only where
    the compiled graph keeps it in bf16 (a reshape between the converts, a loop carry, a fusion edge).
  - dit.strict_out_{video,audio}: with --xla_allow_excess_precision=false, so every value the
    source types as bf16 is rounded to bf16 where the source makes it: MaxDiffusion's dtypes as
    written, which --precision tpu follows.
  - loop.{video,audio} and loop.strict_{video,audio}: the 40-step guided loop through
    LTX2Pipeline.__call__ as gen_maxdiffusion_goldens.py drives it (same noise, prompts, guidance),
    the conditional branch's final latents; guide.*: the strict loop's first guidance step (the DiT's
    batched passes in, the latents and sigma_t, the guided velocities out).
The tiny checkpoints' weights are bf16 already, so the weights are the same in every run; the
distances are the activations' rounding alone. Each mode runs in its own process (XLA reads
XLA_FLAGS once).

Run as gen_maxdiffusion_goldens.py (same JAX environment):
  JAX_PLATFORMS=cpu MAXDIFFUSION_SRC=/tmp/maxdiffusion-7cfb880/src \
      /work/venv-jax/bin/python tests/golden/gen_maxdiffusion_bf16.py
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_maxdiffusion_goldens as G  # noqa: E402  (hub cache, stubs, imports)

np, jax, jnp, nnx, LP = G.np, G.jax, G.jnp, G.nnx, G.LP
from flax.linen import partitioning as nn_partitioning  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

LATENT = (2, 2, 3)  # the golden's latent grid (frames, rows, columns)
VERSIONS = ("2.0", "2.3")
STRICT_FLAG = "--xla_allow_excess_precision=false"


def forward(version, g):
    cfg = G.make_config(version)
    cfg.weights_dtype, cfg.activations_dtype, cfg.precision = jnp.bfloat16, jnp.bfloat16, "bf16"
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


def loop(version):
    """MaxDiffusion's 40-step guided loop through LTX2Pipeline.__call__ in the bf16 configs, as
    gen_maxdiffusion_goldens.run drives it (same noise, prompts and guidance): the final latents of
    the conditional branch. The connectors run f32 there (load_connectors: dtype=jnp.float32, bf16
    weights); the DiT in bf16."""
    cfg = G.make_config(version)
    cfg.weights_dtype, cfg.activations_dtype, cfg.precision = jnp.bfloat16, jnp.bfloat16, "bf16"
    devices = np.array(jax.devices()).reshape(1, 1, 1, 1)
    mesh = Mesh(devices, cfg.mesh_axes)
    rngs = nnx.Rngs(jax.random.key(cfg.seed))
    pipe = LP.LTX2Pipeline(scheduler=LP.LTX2Pipeline.load_scheduler(cfg), vae=LP.LTX2Pipeline.load_vae(devices, mesh, rngs, cfg),
                           audio_vae=LP.LTX2Pipeline.load_audio_vae(devices, mesh, rngs, cfg), text_encoder=None,
                           tokenizer=None, connectors=LP.LTX2Pipeline.load_connectors(devices, mesh, rngs, cfg),
                           transformer=LP.LTX2Pipeline.load_transformer(devices, mesh, rngs, cfg), vocoder=None,
                           config=cfg)
    pipe.mesh = mesh
    seen = {}
    orig, orig_guidance = LP.run_diffusion_loop, LP._apply_ltx2_guidance

    def observed(*args, **kwargs):
        seen["out"] = orig(*args, **kwargs)
        return seen["out"]

    def guidance(noise_pred, noise_pred_audio, latents, audio_latents, sigma_t, *args, **kwargs):
        out = orig_guidance(noise_pred, noise_pred_audio, latents, audio_latents, sigma_t, *args, **kwargs)

        def keep(*xs):  # the first step's (the callback runs once per step, in order)
            if "guide" not in seen:
                seen["guide"] = [np.asarray(x, np.float32) for x in xs]
        jax.debug.callback(keep, noise_pred, noise_pred_audio, latents, audio_latents, sigma_t, out[0], out[1],
                           ordered=True)
        return out

    g32 = load_file(os.path.join(HERE, "data", f"md_{version}.safetensors"))
    LP.run_diffusion_loop, LP._apply_ltx2_guidance = observed, guidance
    try:
        G.call_loop(pipe, cfg, g32["loop.noise_video"], G.guidance_kwargs(cfg))
    finally:
        LP.run_diffusion_loop, LP._apply_ltx2_guidance = orig, orig_guidance
    cond = slice(1, 2)  # the conditional slice in both batch layouts
    guide = dict(zip(("in_video", "in_audio", "latent_video", "latent_audio", "sigma", "out_video", "out_audio"),
                     seen["guide"]))
    guide["sigma"] = guide["sigma"].reshape(1)
    return np.asarray(seen["out"][0][cond], np.float32), np.asarray(seen["out"][1][cond], np.float32), guide


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run_all(out_path):
    """Every version's forward in this process's XLA mode, into one .npz."""
    res = {}
    for v in VERSIONS:
        g = load_file(os.path.join(HERE, "data", f"md_{v}.safetensors"))
        res[f"{v}.video"], res[f"{v}.audio"] = forward(v, g)
        res[f"{v}.loop_video"], res[f"{v}.loop_audio"], guide = loop(v)
        for k, a in guide.items():
            res[f"{v}.guide.{k}"] = a
    np.savez(out_path, **res)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        G.check_tree()
        try:
            run_all(sys.argv[2])
        finally:
            G.shutil.rmtree(G.HUB_CACHE)
        return
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, flags in (("default", ""), ("strict", STRICT_FLAG)):
            path = os.path.join(tmp, mode + ".npz")
            env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " " + flags).strip())
            subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path], env=env, check=True)
            runs[mode] = dict(np.load(path))
    for v in VERSIONS:
        g = load_file(os.path.join(HERE, "data", f"md_{v}.safetensors"))
        out, meta = {}, {"maxdiffusion_commit": G.MD_COMMIT, "dtypes": "weights bfloat16, activations bfloat16, "
                         "precision bf16 (DEFAULT)", "inputs": f"md_{v}.safetensors dit.in_*, conn.*, sigma 0.7",
                         "strict_xla_flags": STRICT_FLAG}
        for k in ("in_video", "in_audio", "latent_video", "latent_audio", "sigma", "out_video", "out_audio"):
            out[f"guide.{k}"] = runs["strict"][f"{v}.guide.{k}"]
        # (what, the worker's key, the golden's default / strict names, the fp32 golden's, metadata key)
        for what, rk, pre_d, pre_s, gold, mk in (("DiT forward", "", "dit.out_", "dit.strict_out_", "dit.out_", ""),
                                                 ("40-step loop", "loop_", "loop.", "loop.strict_", "loop.", "loop_")):
            for mode, pre in (("default", pre_d), ("strict", pre_s)):
                for m in ("video", "audio"):
                    a = runs[mode][f"{v}.{rk}{m}"]
                    out[pre + m] = a
                    d = rel(a, g[gold + m])
                    meta[f"{mk}rel_to_fp32.{mode}.{m}"] = f"{d:.4g}"
                    print(f"LTX-{v} bf16 {what} ({mode} XLA) {m}: rel-L2 to the fp32 golden {d:.3g}")
        for k in ("", "loop_"):
            for m in ("video", "audio"):
                d = rel(runs["default"][f"{v}.{k}{m}"], runs["strict"][f"{v}.{k}{m}"])
                meta[f"{k}rel_default_to_strict.{m}"] = f"{d:.4g}"
                print(f"LTX-{v} {k}{m}: default XLA vs strict rel-L2 {d:.3g}")
        save_file(out, os.path.join(HERE, "data", f"md_bf16_{v}.safetensors"), metadata=meta)


if __name__ == "__main__":
    main()
