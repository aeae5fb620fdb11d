"""Audio-to-video goldens: ltx-pipelines 1.0.0 A2VidPipelineTwoStage.__call__ (a2vid_two_stage.py) on
the tiny checkpoints, and the same audio rule in the one-stage pipeline.

The input is a WAV written here (stereo 16-bit PCM at 44.1 kHz, so the audio VAE's resampler runs),
read from --audio-start-time with --audio-max-duration the clip's length, as a2vid's main() does:
  decode_audio_from_file (PyAV) -> encode_audio (AudioProcessor: resample, log-mel; AudioEncoder)
  -> cropped to AudioLatentShape.from_duration(num_frames / frame_rate).frames
  stage 1: denoise_video_only at (height/2, width/2) on LTX2Scheduler().execute(steps):
           the encoded audio is the initial audio latent with noise_scale 0 and denoise mask 0 (held:
           its tokens see timestep 0), multi_modal_guider_denoising_func with the video guider
           (CFG + STG + rescale + modality, negative video context) and a default audio guider
           (no guidance, no negative context: the unconditional pass sees the positive audio context)
  between: upsample_video (x2 spatial upsampler, the video encoder's statistics)
  stage 2: the transformer with the distilled LoRA, denoise_video_only at (height, width) on
           STAGE_2_DISTILLED_SIGMA_VALUES with simple_denoising_func, noise_scale = sigmas[0], the
           upsampled video and the encoded audio as initial latents
  output:  VideoDecoder(latent); the audio is the input waveform itself (not a decode)
With an image ("a2vid_image_two_stage", 2.3): the same two-stage run with gen_i2v_golden.py's image at
frame 0 (combined_image_conditionings at each stage's size), as a2vid's images argument gives it.
One-stage ("a2vid_one_stage"): ltx-pipelines has no such pipeline; it is stage 1 above at the full
size (ti2vid_one_stage's single guided stage with a2vid's audio rule), what the engine's one-stage
pipeline does with an audio file.
As the other pipeline goldens, the steps run in fp32 from the package's own functions (the
pipeline class cannot load tiny files and fixes bf16 in __call__); the noiser's draws are recorded
(the held audio's too: the noiser draws it and multiplies it by 0).

Saved to tests/golden/data/a2vid_{two_stage,one_stage}_<v>.safetensors and a2vid_image_two_stage_2.3: the noise draws,
audio_input [C, N] (what decode_audio_from_file returned), encoded_audio_latent [1, z, T', F']
(uncropped), audio_latent (cropped: the held latent), stage_1_video_latent and
upsampled_video_latent and video (two-stage), video_latent, waveform (= audio_input).
The input WAV: tests/golden/data/a2vid_input.wav, and the same samples as a2vid_input.flac.
"""
import functools
import json
import math
import os
import sys
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import gen_audio_encoder_goldens  # noqa: E402  (first: the real torchaudio, minus its extension)
import torchaudio_stub  # noqa: E402,F401

import torch  # noqa: E402

import gen_connector_goldens  # noqa: E402
import gen_vae_goldens  # noqa: E402
from gen_distilled_golden import audio_torch_layout  # noqa: E402
from gen_e2e_golden import STG_BLOCKS, TINY_AUDIO_Z, VIDEO, RecordingNoiser, load_prompt, video_noise_tensors  # noqa: E402
from gen_e2e_golden import image_conditionings  # noqa: E402
import gen_i2v_golden  # noqa: E402
from gen_lora_golden import fused, lora_path  # noqa: E402
from ltx_pipelines.utils.args import ImageConditioningInput  # noqa: E402
from st_write import save  # noqa: E402

from ltx_core.components.diffusion_steps import EulerDiffusionStep  # noqa: E402
from ltx_core.components.guiders import MultiModalGuider, MultiModalGuiderParams  # noqa: E402
from ltx_core.components.schedulers import LTX2Scheduler  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.audio_vae import encode_audio as vae_encode_audio  # noqa: E402
from ltx_core.model.transformer.model import X0Model  # noqa: E402
from ltx_core.model.upsampler import LatentUpsamplerConfigurator, upsample_video  # noqa: E402
from ltx_core.model.video_vae import (  # noqa: E402
    VAE_DECODER_COMFY_KEYS_FILTER, VAE_ENCODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator, VideoEncoderConfigurator,
)
from ltx_core.types import AudioLatentShape, VideoPixelShape  # noqa: E402
import ltx_pipelines.utils.helpers as helpers  # noqa: E402
from ltx_pipelines.utils import euler_denoising_loop  # noqa: E402
from ltx_pipelines.utils.constants import STAGE_2_DISTILLED_SIGMA_VALUES  # noqa: E402
from ltx_pipelines.utils.helpers import (  # noqa: E402
    denoise_video_only, multi_modal_guider_denoising_func, simple_denoising_func,
)
from ltx_pipelines.utils.media_io import decode_audio_from_file  # noqa: E402
from ltx_pipelines.utils.types import PipelineComponents  # noqa: E402

SEED = 20261130
STEPS = 2
HEIGHT, WIDTH, FRAMES, FPS = 128, 128, 9, 24.0  # two-stage: stage 1 64x64; one-stage runs 128x128
UPSAMPLER = "spatial-x2"
DISTILLED_LORA, DISTILLED_STRENGTH = "distilled", 1.0
WEIGHTS = os.path.join(ROOT, "weights", "tiny")
INPUT_WAV = os.path.join(HERE, "data", "a2vid_input.wav")
INPUT_FLAC = os.path.join(HERE, "data", "a2vid_input.flac")
INPUT_RATE, INPUT_SECONDS = 44100, 0.8
START_TIME = 0.1                   # --audio-start-time
MAX_DURATION = FRAMES / FPS        # a2vid main(): --audio-max-duration defaults to the clip's length


def write_input_wav():
    """Two tones per channel and a little noise, 16-bit PCM: deterministic from the seed."""
    g = torch.Generator().manual_seed(SEED)
    n = int(INPUT_RATE * INPUT_SECONDS)
    t = torch.arange(n, dtype=torch.float64) / INPUT_RATE
    w = torch.zeros(2, n, dtype=torch.float64)
    for c in range(2):
        for _ in range(2):
            f = float(torch.rand((), generator=g, dtype=torch.float64)) * 3000 + 100
            ph = float(torch.rand((), generator=g, dtype=torch.float64)) * 2 * math.pi
            w[c] += 0.3 * torch.sin(2 * math.pi * f * t + ph)
    w += 0.05 * torch.randn(w.shape, generator=g, dtype=torch.float64)
    pcm = torch.clamp(torch.round(w * 32767), -32768, 32767).to(torch.int16)
    with wave.open(INPUT_WAV, "wb") as f:
        f.setnchannels(2)
        f.setsampwidth(2)
        f.setframerate(INPUT_RATE)
        f.writeframes(pcm.t().contiguous().numpy().tobytes())


def write_input_flac():
    """The same samples as FLAC (lossless, through PyAV): the engine's FFmpeg path must read the same
    window as its WAV path, and decode_audio_from_file must too (checked here)."""
    import av
    import numpy as np
    with wave.open(INPUT_WAV, "rb") as f:
        pcm = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16).reshape(-1, 2)
    out = av.open(INPUT_FLAC, "w", format="flac")
    stream = out.add_stream("flac", rate=INPUT_RATE, layout="stereo", format="s16")
    frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1).copy(), format="s16", layout="stereo")
    frame.sample_rate = INPUT_RATE
    for packet in stream.encode(frame):
        out.mux(packet)
    for packet in stream.encode(None):
        out.mux(packet)
    out.close()
    a = decode_audio_from_file(INPUT_WAV, torch.device("cpu"), START_TIME, MAX_DURATION).waveform
    b = decode_audio_from_file(INPUT_FLAC, torch.device("cpu"), START_TIME, MAX_DURATION).waveform
    if not torch.equal(a, b):
        raise RuntimeError("the FLAC copy decodes to other samples than the WAV")


def transformer(version, loras):
    return X0Model(fused(version, loras).float()).eval()


def run(version, two_stage, images=()):
    proc = gen_connector_goldens.build(version)
    ctx = {}
    for name in ("positive", "negative"):
        hidden, mask = load_prompt(name)
        out = proc.process_hidden_states(hidden, mask, padding_side="left")
        ctx[name] = (out.video_encoding, out.audio_encoding)
    stage_1_transformer = transformer(version, [])
    aenc = gen_audio_encoder_goldens.build(version)
    venc = gen_vae_goldens.build(version, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    vdec = gen_vae_goldens.build(version, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)

    dtype, device = torch.float32, torch.device("cpu")
    components = PipelineComponents(dtype=dtype, device=device)
    components.video_latent_channels = stage_1_transformer.velocity_model.patchify_proj.in_features
    orig = AudioLatentShape.from_video_pixel_shape
    helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(functools.partial(orig, channels=TINY_AUDIO_Z))
    drawn = []
    tensors = {}
    try:
        generator = torch.Generator(device=device).manual_seed(SEED)
        noiser = RecordingNoiser(generator, drawn)
        stepper = EulerDiffusionStep()
        with torch.inference_mode():
            decoded = decode_audio_from_file(INPUT_WAV, device, START_TIME, MAX_DURATION)
            encoded = vae_encode_audio(decoded, aenc)
            frames = AudioLatentShape.from_duration(batch=1, duration=FRAMES / FPS, channels=8, mel_bins=16).frames
            held = encoded[:, :, :frames]

            def first_stage_loop(sigmas, video_state, audio_state, stepper):
                return euler_denoising_loop(
                    sigmas=sigmas, video_state=video_state, audio_state=audio_state, stepper=stepper,
                    denoise_fn=multi_modal_guider_denoising_func(
                        video_guider=MultiModalGuider(
                            params=MultiModalGuiderParams(**VIDEO, skip_step=0, stg_blocks=STG_BLOCKS),
                            negative_context=ctx["negative"][0]),
                        audio_guider=MultiModalGuider(params=MultiModalGuiderParams()),
                        v_context=ctx["positive"][0], a_context=ctx["positive"][1],
                        transformer=stage_1_transformer))

            sigmas = LTX2Scheduler().execute(steps=STEPS).to(dtype=torch.float32, device=device)
            div = 2 if two_stage else 1
            stage_1_shape = VideoPixelShape(batch=1, frames=FRAMES, width=WIDTH // div, height=HEIGHT // div, fps=FPS)
            video_state = denoise_video_only(
                output_shape=stage_1_shape, noiser=noiser, sigmas=sigmas, stepper=stepper,
                conditionings=image_conditionings(version, images, HEIGHT // div, WIDTH // div),
                denoising_loop_fn=first_stage_loop, components=components, dtype=dtype, device=device,
                initial_audio_latent=held)
            if two_stage:
                tensors["stage_1_video_latent"] = video_state.latent.clone()
                ups = SingleGPUModelBuilder(
                    model_class_configurator=LatentUpsamplerConfigurator,
                    model_path=os.path.join(WEIGHTS, f"ltx2-tiny-upsampler-{UPSAMPLER}.safetensors"),
                ).build(device=device, dtype=torch.float32).eval()
                upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=venc, upsampler=ups)
                tensors["upsampled_video_latent"] = upscaled
                stage_2_transformer = transformer(version, [(lora_path(DISTILLED_LORA, version), DISTILLED_STRENGTH)])

                def second_stage_loop(sigmas, video_state, audio_state, stepper):
                    return euler_denoising_loop(
                        sigmas=sigmas, video_state=video_state, audio_state=audio_state, stepper=stepper,
                        denoise_fn=simple_denoising_func(video_context=ctx["positive"][0],
                                                         audio_context=ctx["positive"][1],
                                                         transformer=stage_2_transformer))

                distilled_sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES).to(device)
                stage_2_shape = VideoPixelShape(batch=1, frames=FRAMES, width=WIDTH, height=HEIGHT, fps=FPS)
                video_state = denoise_video_only(
                    output_shape=stage_2_shape, noiser=noiser, sigmas=distilled_sigmas,
                    conditionings=image_conditionings(version, images, HEIGHT, WIDTH),
                    stepper=stepper, denoising_loop_fn=second_stage_loop, components=components, dtype=dtype,
                    device=device, noise_scale=distilled_sigmas[0], initial_video_latent=upscaled,
                    initial_audio_latent=held)
            video = vdec(video_state.latent)
    finally:
        helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(orig)
    n_draws = 4 if two_stage else 2
    if len(drawn) != n_draws:
        raise RuntimeError(f"expected {n_draws} noise draws, got {len(drawn)}")
    vl = video_state.latent
    tensors.update({
        **video_noise_tensors(drawn[0], (1, vl.shape[1], vl.shape[2], vl.shape[3] // div, vl.shape[4] // div), ""),
        "audio_noise": audio_torch_layout(drawn[1], held.shape),
        "audio_input": decoded.waveform.squeeze(0), "encoded_audio_latent": encoded, "audio_latent": held,
        "video_latent": vl, "waveform": decoded.waveform.squeeze(0),
        "sigmas": sigmas,
    })
    if two_stage and not images:  # the decoded video once per version (1.7 MB): the other files stay small
        tensors["video"] = video
    if two_stage:
        tensors.update({**video_noise_tensors(drawn[2], vl.shape, "stage_2_"),
                        "stage_2_audio_noise": audio_torch_layout(drawn[3], held.shape)})
    tensors = {k: v.detach().float().contiguous() for k, v in tensors.items()}
    settings = {"version": version, "pipeline": "two-stage" if two_stage else "one-stage", "steps": STEPS,
                "height": HEIGHT, "width": WIDTH, "frames": FRAMES, "fps": FPS, "seed": SEED,
                "stg_blocks": STG_BLOCKS, "video": VIDEO, "audio_start_time": START_TIME,
                "audio_max_duration": MAX_DURATION, "input": "tests/golden/data/a2vid_input.wav",
                "input_rate": decoded.sampling_rate, "dtype": "float32"}
    if two_stage:
        settings.update({"upsampler": UPSAMPLER, "distilled_lora": [DISTILLED_LORA, DISTILLED_STRENGTH]})
    if images:
        settings["images"] = [{"path": "tests/golden/data/i2v_image.png", "frame": i.frame_idx,
                               "strength": i.strength, "crf": i.crf} for i in images]
    meta = {"a2vid": json.dumps(settings), "generator": "tests/golden/gen_a2vid_golden.py",
            "reference": "ltx-pipelines 1.0.0 A2VidPipelineTwoStage.__call__ steps (decode_audio_from_file, "
                         "encode_audio, denoise_video_only), ltx-core 1.0.0 models, fp32 CPU"}
    return tensors, meta


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    write_input_wav()
    write_input_flac()
    # the image and the audio together: gen_i2v_golden.py's image at frame 0 (strength 0.9, CRF 0)
    image = [ImageConditioningInput(path=gen_i2v_golden.IMAGE, frame_idx=0, strength=gen_i2v_golden.STRENGTH,
                                    crf=gen_i2v_golden.CRF)]
    runs = [("a2vid_two_stage", True, (), ("2.0", "2.3")), ("a2vid_one_stage", False, (), ("2.0", "2.3")),
            ("a2vid_image_two_stage", True, image, ("2.3",))]
    for stem, two_stage, images, versions in runs:
        for version in versions:
            tensors, meta = run(version, two_stage, images)
            path = os.path.join(HERE, "data", f"{stem}_{version}.safetensors")
            save(tensors, path, metadata=meta)
            print(f"{path}: " + ", ".join(f"{k} {list(v.shape)}" for k, v in tensors.items()) +
                  f"; {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
