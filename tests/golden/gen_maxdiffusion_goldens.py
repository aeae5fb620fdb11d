"""Goldens computed by MaxDiffusion itself (JAX, CPU backend, fp32, x64 off) on the tiny checkpoints.

Issue #15: users validate TPU runs of MaxDiffusion's LTX-2 against `--semantics maxdiffusion`; these
files hold that mode to what MaxDiffusion's own code computes through XLA, not to a reading of it.

Run (a JAX environment from requirements-maxdiffusion.txt, torch importable: see maxdiffusion_stubs):
  git --git-dir=/work/.mirror/AI-Hypercomputer+maxdiffusion/repo archive 7cfb880 | tar -x -C /tmp/maxdiffusion-7cfb880
  JAX_PLATFORMS=cpu MAXDIFFUSION_SRC=/tmp/maxdiffusion-7cfb880/src \
      /work/venv-jax/bin/python tests/golden/gen_maxdiffusion_goldens.py [2.0 2.3]
MAXDIFFUSION_SRC (default /tmp/maxdiffusion-7cfb880/src) is MaxDiffusion's `src/` at commit 7cfb880
(7cfb8801, "Merge pull request #458"); the script refuses a tree whose ltx2 files differ from the
sha256 list below. Nothing of MaxDiffusion is committed here. JAX_PLATFORMS=cpu is forced.

What runs (MaxDiffusion 7cfb880, unmodified):
  - models: LTX2Pipeline.load_connectors / load_vae / load_audio_vae / load_transformer
    (pipelines/ltx2/ltx2_pipeline.py), i.e. from_config(<tiny diffusers dir>/<subfolder>) under
    nnx.eval_shape, then ltx2_utils.load_{connector,vae,audio_vae,transformer}_weights from the
    diffusers safetensors (bf16 in the files, cast to fp32 = weights_dtype).
  - the config those loaders read is configs/ltx2_video.yml (2.0) or ltx2_3_video.yml (2.3) parsed
    with yaml, with these overrides (CPU plumbing or fp32): pretrained_model_name_or_path = the tiny
    folder, weights_dtype = activations_dtype = float32, precision = HIGHEST, attention =
    a2v/v2a_attention_kernel = dot_product (flash is a TPU Pallas kernel), spatio_temporal_guidance_blocks
    = [1] for 2.3 (the yml's [28] names a block of the 48-block model; [1] is the tiny DiT's last block,
    as gen_e2e_golden.STG_BLOCKS), converted_weights_dir = '' (no cache), one CPU device, mesh 1x1x1x1.
    pyconfig.initialize is not used (it talks to GCS / jax.distributed); the yml keys are read as
    they are, and dtype strings are turned into jnp dtypes as pyconfig.user_init does.
  - scheduler: FlaxFlowMatchScheduler.from_pretrained(<dir>, subfolder="scheduler") (load_scheduler's
    call) on a scheduler_config.json written to a temporary folder with the Hub's LTX-2 values
    (diffusers' convert_ltx2_to_diffusers.py, as gen_sampler_goldens.df_scheduler): num_train_timesteps
    1000, use_dynamic_shifting true, time_shift_type exponential, base_shift 0.95, max_shift 2.05,
    base_image_seq_len 1024, max_image_seq_len 4096, shift_terminal 0.1. (The tiny folders carry no
    scheduler/.)
  - connectors: LTX2Pipeline._run_connectors (jit) on the stand-in Gemma states of
    weights/tiny/prompt_embeds_{positive,negative}.safetensors: hidden_states [1,S,D,L] (layer axis
    last) is exactly the pre-stacked input LTX2GemmaFeatureExtractor takes (feature_extractor_ltx2.py:
    "pre-stacked array [B, T, D, L]"); attention_mask [1,S] as bool (the pipeline's .astype(bool)).
  - one DiT forward: ltx2_pipeline.transformer_forward_pass (the jitted function the loop calls) at
    batch 1, no guidance masks, timestep = sigma = audio_sigma = 700.0 (the loop passes the scheduler
    timestep, sigma*1000, as all three; 0.7 -> 700), use_cross_timestep from the yml (2.0 false,
    2.3 true), contexts = conn.video / conn.audio with conn.mask.
  - loop: LTX2Pipeline.__call__ itself with prompt_embeds / negative_prompt_embeds (+ masks) given (so
    Gemma never runs), num_frames 9, height 64, width 96, frame_rate 24 (yml fps), 40 steps,
    output_type "latent", generator = jax.random.key(SEED_LOOP), guidance from the yml (2.0: guidance
    3.0, stg 0 -> CFG only; 2.3: guidance 3.0, rescale 0.7, audio guidance 7.0, audio rescale 0.7,
    stg 1.0, audio stg 1.0, modality 3.0, audio modality 3.0, use_cross_timestep true), as
    generate_ltx2.call_pipeline passes them. Video noise: __call__ would draw 128-channel noise itself
    (prepare_latents' default num_channels_latents=128, never overridden), which the tiny DiT (8) cannot
    take, so latents= is given: a seeded numpy PCG64 draw (SEED_LOOP) in packed layout, with
    noise_scale=0.0 (ltx2_3_video.yml's value; with 2.0's 1.0 _create_noised_state would replace it by a
    jax.random draw of the same shape), so it enters the loop unchanged. Audio noise: audio_latents=None,
    the pipeline draws it (jax.random.normal(split(key(SEED_LOOP))[1], [1,2,9,16]), packed).
    ltx2_pipeline.run_diffusion_loop is wrapped (module attribute replaced by a function that calls the
    original and records its arguments and results: observation only) to save the noise as it enters
    the loop, the sigma grid and the shifted schedule, and the final packed latents.
  - VAE: LTX2VideoAutoencoderKL.decode of the loop's final latent as __call__ hands it to
    _decode_latents_to_video (denormalised, channels last); timestep_conditioning is false in both
    tiny VAEs, so that path is decode(latents) with no noise.

Layouts in md_<v>.safetensors (all fp32; F=2, H=2, W=3 latent grid; Tv=12 video tokens, C=8;
Ta=9 audio tokens, 2 channels x 16 mel bins packed as 32):
  conn.in.hidden_states [1,128,32,3], conn.in.mask [1,128] (1/0), conn.video [1,128,Dv], conn.audio
  [1,128,Da], conn.mask [1,128] (the connector's new attention mask: 1.0 everywhere, registers fill
  the padding), conn_neg.* the same for the negative prompt.
  dit.in_video [1,12,8]: token-major, tokens ordered (f, h, w) with w fastest (_pack_latents, patch 1),
  dit.in_audio [1,9,32]: token t = audio frame t, features (channel, mel) with mel fastest
  (_pack_audio_latents without patching: [B,C,L,F] -> [B,L,C*F]); dit.timestep [1] (= 700);
  dit.video_coords [1,3,12,2] (axis 1: t in seconds, h px, w px; last axis: patch start, end) and
  dit.audio_coords [1,1,9,2] (seconds), as prepare_video_coords / prepare_audio_coords compute them
  under jit; dit.rope.{video,audio,cross_video,cross_audio}.{cos,sin} [1,heads,T,head_dim/2] (split
  RoPE, the tables the forward uses); dit.out_video [1,12,8], dit.out_audio [1,9,32] (velocities).
  sched.grid [40] (= jnp.linspace(1, 1/40, 40), the sigmas __call__ passes to the loop and the
  guidance's x0 conversion uses), sched.sigmas [40] (shifted + stretched), sched.timesteps [40]
  (= sched.sigmas * 1000, what the DiT receives as timestep and sigma), sched.mu [1].
  loop.noise_video [1,12,8], loop.noise_audio [1,9,32] (packed, as drawn: unit normal, not
  normalised), loop.video [1,12,8], loop.audio [1,9,32] (final packed latents, normalised latent space,
  the conditional slice of the guided batch), loop.video_latent [1,2,2,3,8] (= __call__'s "latent"
  output: unpacked, denormalised with the VAE's latents_mean/std, channels last [B,F,H,W,C]),
  loop.audio_latent [1,9,16,2] (unpacked, denormalised, [B,T,mel,C]).
  vae.in [1,2,2,3,8] (= loop.video_latent), vae.out [1,9,64,96,3] (decoder output, channels last, before
  any [0,1] / uint8 formatting).

Loading plumbing (no MaxDiffusion code is patched): MaxDiffusion resolves every file through
hf_hub_download(repo_id, ...), which rejects local paths, so make_hub_cache() exposes the tiny folders as
an offline Hugging Face cache (HF_HOME in a temporary directory, symlinks, HF_HUB_OFFLINE=1). Import-only
stubs: see maxdiffusion_stubs.py (transformers, qwix, aqt, tensorflow, tensorboardX, google.cloud.storage).

Determinism: fixed seeds, one CPU device, XLA CPU; rerunning gives the same bytes (sha256 checked).
Runtime about 1 min per version on 2 cores. Numerics findings: MAXDIFFUSION_NUMERICS.md.
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile

os.environ["JAX_PLATFORMS"] = "cpu"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
MD_SRC = os.environ.get("MAXDIFFUSION_SRC", "/tmp/maxdiffusion-7cfb880/src")
MD_COMMIT = "7cfb8801 (Merge pull request #458)"

SNAPSHOT = "0" * 40
HUB_CACHE = None


def make_hub_cache():
    """MaxDiffusion's loaders resolve every file with hf_hub_download(repo_id, subfolder, filename), which
    rejects a local path. Instead of patching them, the tiny folders are offered as a Hugging Face cache:
    <tmp HF_HOME>/hub/models--ltx2c--ltx2-tiny-diffusers-<v>/snapshots/<0*40>/ with symlinks to the committed
    files (plus scheduler/scheduler_config.json), HF_HUB_OFFLINE=1, so repo id "ltx2c/ltx2-tiny-diffusers-<v>"
    resolves locally and a missing file raises the EntryNotFoundError the loaders expect. The json files are
    copies, not links: MaxDiffusion's ConfigMixin.load_config rewrites every config.json it reads in place
    (configuration_utils.py:437-445, json.dump on one line)."""
    global HUB_CACHE
    HUB_CACHE = tempfile.mkdtemp(prefix="md-hf-home-")
    hub = os.path.join(HUB_CACHE, "hub")
    for v in ("2.0", "2.3"):
        src = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-diffusers-{v}")
        repo = os.path.join(hub, f"models--ltx2c--ltx2-tiny-diffusers-{v}")
        os.makedirs(os.path.join(repo, "refs"))
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write(SNAPSHOT)
        snap = os.path.join(repo, "snapshots", SNAPSHOT)
        for sub in sorted(os.listdir(src)):
            os.makedirs(os.path.join(snap, sub))
            for name in sorted(os.listdir(os.path.join(src, sub))):
                a, b = os.path.join(src, sub, name), os.path.join(snap, sub, name)
                if name.endswith(".json"):  # copied: ConfigMixin.load_config rewrites the json it reads
                    shutil.copyfile(a, b)   # (configuration_utils.py:444), which must not reach weights/
                else:
                    os.symlink(a, b)
        os.makedirs(os.path.join(snap, "scheduler"))
        with open(os.path.join(snap, "scheduler", "scheduler_config.json"), "w") as f:
            json.dump(SCHEDULER_CONFIG, f)
    os.environ["HF_HOME"] = HUB_CACHE  # <HF_HOME>/hub is both HF_HUB_CACHE and maxdiffusion's DIFFUSERS_CACHE
    for k in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT"):
        os.environ.pop(k, None)
    os.environ["HF_HUB_OFFLINE"] = "1"


SCHEDULER_CONFIG = {
    "_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000, "use_dynamic_shifting": True,
    "time_shift_type": "exponential", "base_shift": 0.95, "max_shift": 2.05, "base_image_seq_len": 1024,
    "max_image_seq_len": 4096, "shift_terminal": 0.1, "shift": 1.0, "invert_sigmas": False,
    "stochastic_sampling": False, "use_beta_sigmas": False, "use_exponential_sigmas": False,
    "use_karras_sigmas": False,
}
make_hub_cache()  # before anything imports huggingface_hub (it reads the two variables at import)

import maxdiffusion_stubs  # noqa: E402

STUBBED = maxdiffusion_stubs.install(MD_SRC)

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import yaml  # noqa: E402
import torch  # noqa: E402
from flax import nnx  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from flax.linen import partitioning as nn_partitioning  # noqa: E402

import flax  # noqa: E402
from maxdiffusion.pipelines.ltx2 import ltx2_pipeline as LP  # noqa: E402
from maxdiffusion.schedulers import FlaxFlowMatchScheduler  # noqa: E402

from st_write import save  # noqa: E402

assert not jax.config.jax_enable_x64, "x64 must be off (as on TPU)"

# sha256 of the MaxDiffusion files whose code runs here, at 7cfb880 (refuse any other tree).
MD_FILES = {
    "maxdiffusion/pipelines/ltx2/ltx2_pipeline.py": None,
    "maxdiffusion/models/ltx2/transformer_ltx2.py": None,
    "maxdiffusion/models/ltx2/attention_ltx2.py": None,
    "maxdiffusion/models/ltx2/ltx2_utils.py": None,
    "maxdiffusion/models/ltx2/text_encoders/text_encoders_ltx2.py": None,
    "maxdiffusion/models/ltx2/text_encoders/feature_extractor_ltx2.py": None,
    "maxdiffusion/models/ltx2/text_encoders/embeddings_connector_ltx2.py": None,
    "maxdiffusion/models/ltx2/autoencoder_kl_ltx2.py": None,
    "maxdiffusion/schedulers/scheduling_flow_match_flax.py": None,
}
MD_SHA = os.path.join(HERE, "maxdiffusion_7cfb880.sha256")

FRAMES, HEIGHT, WIDTH, FPS = 9, 64, 96, 24.0
STEPS = 40
DIT_SIGMA = 0.7
SEED_DIT = 1500
SEED_LOOP = 10
YML = {"2.0": "ltx2_video.yml", "2.3": "ltx2_3_video.yml"}
STG_BLOCKS = {"2.0": [], "2.3": [1]}


def check_tree():
    got = {}
    for rel in MD_FILES:
        with open(os.path.join(MD_SRC, rel), "rb") as f:
            got[rel] = hashlib.sha256(f.read()).hexdigest()
    if os.path.exists(MD_SHA):
        want = dict(line.split()[::-1] for line in open(MD_SHA) if line.strip())
        bad = [r for r in got if want.get(r) != got[r]]
        if bad:
            raise SystemExit(f"MAXDIFFUSION_SRC={MD_SRC} is not MaxDiffusion 7cfb880: {bad} differ")
    else:
        with open(MD_SHA, "w") as f:
            for rel, h in got.items():
                f.write(f"{h}  {rel}\n")


class Cfg:
    """Attribute view of the yml (what HyperParameters offers the loaders)."""

    def __init__(self, d):
        self.__dict__.update(d)

    def get(self, k, default=None):
        return self.__dict__.get(k, default)


def make_config(version):
    with open(os.path.join(MD_SRC, "maxdiffusion", "configs", YML[version])) as f:
        raw = yaml.safe_load(f)
    raw.update(
        pretrained_model_name_or_path=f"ltx2c/ltx2-tiny-diffusers-{version}",
        weights_dtype="float32", activations_dtype="float32", precision="HIGHEST",
        attention="dot_product", a2v_attention_kernel="dot_product", v2a_attention_kernel="dot_product",
        spatio_temporal_guidance_blocks=STG_BLOCKS[version], converted_weights_dir="", jax_cache_dir="",
        aot_cache_dir="", use_qwix_quantization=False, quantization="", enable_profiler=False,
    )
    raw["weights_dtype"] = jnp.dtype(raw["weights_dtype"])  # pyconfig.user_init
    raw["activations_dtype"] = jnp.dtype(raw["activations_dtype"])
    raw["logical_axis_rules"] = tuple(tuple(r) if isinstance(r, list) else r for r in
                                      [tuple(x if not isinstance(x, list) else tuple(x) for x in rule)
                                       for rule in raw["logical_axis_rules"]])
    return Cfg(raw)


def f32(x):
    return torch.from_numpy(np.ascontiguousarray(np.asarray(x, dtype=np.float32)))


def load_prompt(name):
    from safetensors import safe_open
    with safe_open(os.path.join(ROOT, "weights", "tiny", f"prompt_embeds_{name}.safetensors"), "np") as f:
        return f.get_tensor("hidden_states").astype(np.float32), f.get_tensor("attention_mask")


def guidance_kwargs(cfg):
    """The guidance arguments generate_ltx2.call_pipeline reads from the yml (its defaults)."""
    g = lambda k, d=None: getattr(cfg, k, d)  # noqa: E731
    return dict(guidance_scale=g("guidance_scale", 3.0), guidance_rescale=g("guidance_rescale", 0.0),
                audio_guidance_scale=g("audio_guidance_scale"), audio_guidance_rescale=g("audio_guidance_rescale"),
                stg_scale=g("stg_scale", 0.0), audio_stg_scale=g("audio_stg_scale"),
                modality_scale=g("modality_scale", 1.0), audio_modality_scale=g("audio_modality_scale"),
                use_cross_timestep=g("use_cross_timestep"))


def call_loop(pipe, cfg, noise_v, kw):
    """LTX2Pipeline.__call__ over the golden's geometry and steps from the stand-in prompts, the video
    noise given as it is (noise_scale 0), latents out."""
    hs_pos, m_pos = load_prompt("positive")
    hs_neg, m_neg = load_prompt("negative")
    return pipe(prompt=None, latents=jnp.asarray(noise_v), noise_scale=0.0, negative_prompt=None, height=HEIGHT,
                width=WIDTH, num_frames=FRAMES, frame_rate=float(getattr(cfg, "fps", 24)), num_inference_steps=STEPS,
                prompt_embeds=jnp.asarray(hs_pos), negative_prompt_embeds=jnp.asarray(hs_neg),
                prompt_attention_mask=jnp.asarray(m_pos), negative_prompt_attention_mask=jnp.asarray(m_neg),
                generator=jax.random.key(SEED_LOOP), output_type="latent", dtype=jnp.float32, **kw)


def run(version):
    cfg = make_config(version)
    devices = np.array(jax.devices()).reshape(1, 1, 1, 1)
    mesh = Mesh(devices, cfg.mesh_axes)
    rngs = nnx.Rngs(jax.random.key(cfg.seed))

    connectors = LP.LTX2Pipeline.load_connectors(devices, mesh, rngs, cfg)
    vae = LP.LTX2Pipeline.load_vae(devices, mesh, rngs, cfg)
    audio_vae = LP.LTX2Pipeline.load_audio_vae(devices, mesh, rngs, cfg)
    transformer = LP.LTX2Pipeline.load_transformer(devices, mesh, rngs, cfg)
    scheduler = LP.LTX2Pipeline.load_scheduler(cfg)
    pipe = LP.LTX2Pipeline(scheduler=scheduler, vae=vae, audio_vae=audio_vae, text_encoder=None, tokenizer=None,
                           connectors=connectors, transformer=transformer, vocoder=None, config=cfg)
    pipe.mesh = mesh
    T = {}

    # ---- connectors
    hs_pos, m_pos = load_prompt("positive")
    hs_neg, m_neg = load_prompt("negative")
    cg, cs = nnx.split(connectors)
    for tag, hs, m in (("conn", hs_pos, m_pos), ("conn_neg", hs_neg, m_neg)):
        v, a, nm = LP.LTX2Pipeline._run_connectors(cg, cs, jnp.asarray(hs), jnp.asarray(m).astype(jnp.bool_))
        T[f"{tag}.in.hidden_states"] = f32(hs)
        T[f"{tag}.in.mask"] = f32(m)
        T[f"{tag}.video"], T[f"{tag}.audio"], T[f"{tag}.mask"] = f32(v), f32(a), f32(nm)
    conn_v, conn_a, conn_m = (jnp.asarray(T["conn.video"].numpy()), jnp.asarray(T["conn.audio"].numpy()),
                              jnp.asarray(T["conn.mask"].numpy()))

    # ---- geometry, as __call__ computes it
    lf = (FRAMES - 1) // pipe.vae_temporal_compression_ratio + 1
    lh, lw = HEIGHT // pipe.vae_spatial_compression_ratio, WIDTH // pipe.vae_spatial_compression_ratio
    alps = pipe.audio_sampling_rate / pipe.audio_hop_length / float(pipe.audio_vae_temporal_compression_ratio)
    ta = round(FRAMES / FPS * alps)
    c_v = vae.config.latent_channels  # patch size 1: a video token is one latent voxel
    mel = audio_vae.config.mel_bins // pipe.audio_vae_mel_compression_ratio
    c_a = audio_vae.config.latent_channels * mel

    # ---- one DiT forward (batch 1, no guidance)
    rng = np.random.default_rng(SEED_DIT)
    x_v = rng.standard_normal((1, lf * lh * lw, c_v), dtype=np.float32)
    x_a = rng.standard_normal((1, ta, c_a), dtype=np.float32)
    t = jnp.asarray(np.float32(DIT_SIGMA) * np.float32(1000.0))
    use_ct = bool(cfg.use_cross_timestep)
    tg, ts = nnx.split(transformer)
    with mesh, nn_partitioning.axis_rules(cfg.logical_axis_rules):  # as __call__ runs the loop
        ov, oa = LP.transformer_forward_pass(
            tg, ts, jnp.asarray(x_v), jnp.asarray(x_a), t, conn_v, conn_a, conn_m.astype(jnp.bool_),
            conn_m.astype(jnp.bool_), latent_num_frames=lf, latent_height=lh, latent_width=lw, audio_num_frames=ta,
            fps=FPS, global_batch_size=1, sigma=t, audio_sigma=t, use_cross_timestep=use_ct, is_cfg_stg_mode=False)
    T["dit.in_video"], T["dit.in_audio"], T["dit.timestep"] = f32(x_v), f32(x_a), f32(np.asarray(t).reshape(1))
    vc = jax.jit(lambda: transformer.rope.prepare_video_coords(1, lf, lh, lw, fps=FPS))()
    ac = jax.jit(lambda: transformer.audio_rope.prepare_audio_coords(1, ta))()
    T["dit.video_coords"], T["dit.audio_coords"] = f32(vc), f32(ac)
    ropes = jax.jit(lambda vc, ac: (transformer.rope(vc), transformer.audio_rope(ac),
                                    transformer.cross_attn_rope(vc[:, 0:1, :]),
                                    transformer.cross_attn_audio_rope(ac[:, 0:1, :])))(vc, ac)
    for name, (c, s) in zip(("video", "audio", "cross_video", "cross_audio"), ropes):
        T[f"dit.rope.{name}.cos"], T[f"dit.rope.{name}.sin"] = f32(c), f32(s)
    T["dit.out_video"], T["dit.out_audio"] = f32(ov), f32(oa)

    # ---- the guided loop through __call__, observing run_diffusion_loop
    seen = {}
    orig = LP.run_diffusion_loop

    def observed(graphdef, state, scheduler_state, timesteps_jax, sigmas, latents_jax, audio_latents_jax,
                 video_embeds, audio_embeds, mask, *args, **kwargs):
        seen.update(state=scheduler_state, timesteps=timesteps_jax, grid=sigmas, noise_v=latents_jax,
                    noise_a=audio_latents_jax, ve=video_embeds, ae=audio_embeds, mask=mask)
        out = orig(graphdef, state, scheduler_state, timesteps_jax, sigmas, latents_jax, audio_latents_jax,
                   video_embeds, audio_embeds, mask, *args, **kwargs)
        seen["out"] = out
        return out

    LP.run_diffusion_loop = observed
    try:
        kw = guidance_kwargs(cfg)
        noise_v = np.random.default_rng(SEED_LOOP).standard_normal((1, lf * lh * lw, c_v), dtype=np.float32)
        out = call_loop(pipe, cfg, noise_v, kw)
    finally:
        LP.run_diffusion_loop = orig
    bs = 1
    do_cfg, do_stg = kw["guidance_scale"] > 1.0, kw["stg_scale"] > 0.0
    cond = slice(bs, 2 * bs)  # the conditional slice in both layouts ([U, C] and [U, C, P, I])
    T["sched.grid"] = f32(seen["grid"])
    T["sched.sigmas"] = f32(seen["state"].sigmas)
    T["sched.timesteps"] = f32(seen["timesteps"])
    seq = min(6144, lf * lh * lw)
    mu = LP.calculate_shift(seq, scheduler.config.get("base_image_seq_len", 1024),
                            scheduler.config.get("max_image_seq_len", 4096), scheduler.config.get("base_shift", 0.95),
                            scheduler.config.get("max_shift", 2.05))
    T["sched.mu"] = f32([mu])
    T["loop.noise_video"], T["loop.noise_audio"] = f32(seen["noise_v"][:bs]), f32(seen["noise_a"][:bs])
    for i in range(seen["noise_v"].shape[0]):  # every branch starts from the same noise
        assert np.array_equal(np.asarray(seen["noise_v"][i]), np.asarray(seen["noise_v"][0]))
    T["loop.video"], T["loop.audio"] = f32(seen["out"][0][cond]), f32(seen["out"][1][cond])
    T["loop.video_latent"], T["loop.audio_latent"] = f32(out.frames), f32(out.audio)
    # the loop's guided-batch contexts are the batch-1 connector outputs (checked, not saved twice)
    loop_ctx_ok = bool(np.array_equal(np.asarray(seen["ve"][cond]), T["conn.video"].numpy())
                       and np.array_equal(np.asarray(seen["ve"][:bs]), T["conn_neg.video"].numpy()))

    # ---- video VAE decode of the loop's latent (what __call__ passes to _decode_latents_to_video)
    assert not getattr(vae.config, "timestep_conditioning", False)
    video = vae.decode(out.frames.astype(vae.dtype), return_dict=False)[0]
    T["vae.in"], T["vae.out"] = f32(out.frames), f32(video)

    meta = {
        "generator": "tests/golden/gen_maxdiffusion_goldens.py",
        "reference": f"AI-Hypercomputer/maxdiffusion {MD_COMMIT}, JAX CPU backend, fp32, x64 off",
        "versions": json.dumps({"jax": jax.__version__, "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__")
                                else jax.__version__, "flax": flax.__version__, "numpy": np.__version__,
                                "torch (safetensors reading only)": torch.__version__}),
        "stubbed_for_import": json.dumps(STUBBED),
        "settings": json.dumps({
            "version": version, "yml": YML[version], "frames": FRAMES, "height": HEIGHT, "width": WIDTH,
            "fps": FPS, "latent": [lf, lh, lw], "audio_frames": ta, "steps": STEPS, "dit_sigma": DIT_SIGMA,
            "dit_timestep": float(np.asarray(t)), "seed_dit_numpy_pcg64": SEED_DIT,
            "seed_loop_jax_key": SEED_LOOP, "guidance": kw, "do_cfg": do_cfg, "do_stg": do_stg,
            "stg_blocks": STG_BLOCKS[version], "scheduler_config": SCHEDULER_CONFIG,
            "shift_sequence_length": seq, "precision": "HIGHEST", "attention": "dot_product",
            "scan_layers": bool(cfg.scan_layers), "loop_contexts_equal_batch1_connectors": loop_ctx_ok,
        }),
        "layouts": ("see the generator's docstring: video tokens [1,F*H*W,C] (f,h,w order, w fastest); audio "
                    "tokens [1,T,C*mel] (mel fastest); *_latent channels last; coords [B,axes,T,(start,end)]"),
    }
    path = os.path.join(HERE, "data", f"md_{version}.safetensors")
    save(T, path, meta)
    print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")
    for k, v in T.items():
        print(f"  {k:28s} {list(v.shape)}")


def main():
    check_tree()
    try:
        for v in (sys.argv[1:] or ["2.0", "2.3"]):
            run(v)
    finally:
        shutil.rmtree(HUB_CACHE)


if __name__ == "__main__":
    main()
