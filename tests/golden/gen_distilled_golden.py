"""Distilled-pipeline golden: ltx-pipelines 1.0.0 DistilledPipeline.__call__ (distilled.py) on the
tiny checkpoints with the tiny x2 spatial upsampler, text to audio+video, no image conditioning.

DistilledPipeline cannot load the tiny files itself (ModelLedger and PipelineComponents hard-code
the real sizes, see gen_e2e_golden.py) and fixes its dtype to bf16 inside __call__, so this runs
the same steps in the same order from the same package functions, in fp32:
  stage 1: denoise_audio_video at (height/2, width/2) on DISTILLED_SIGMA_VALUES with
           simple_denoising_func (positive context only, no guidance), euler_denoising_loop
  between: upsample_video(video latent, video encoder's per-channel statistics, spatial upsampler)
  stage 2: denoise_audio_video at (height, width) on STAGE_2_DISTILLED_SIGMA_VALUES,
           noise_scale = stage-2 sigmas[0], initial_video_latent = the upsampled latent,
           initial_audio_latent = stage 1's audio latent; the same generator continues
  decode:  VideoDecoder(latent) (no tiling; the tiny decoder has no timestep conditioning, so the
           generator decode_video passes is unused), vocoder(AudioDecoder(latent))
The four noise draws of the GaussianNoiser (stage 1 video, audio; stage 2 video, audio) are
recorded as drawn (before the noise_scale mix), so the C test feeds them back with --noise.

Saved to tests/golden/data/distilled_<v>.safetensors:
  video_noise [1, C, F', H'/2, W'/2], audio_noise [1, z, T', F'],
  stage_2_video_noise [1, C, F', H', W'], stage_2_audio_noise [1, z, T', F'] (torch layouts),
  stage_1_video_latent, upsampled_video_latent, stage_1_audio_latent,
  video_latent [1, C, F', H', W'], audio_latent [1, z, T', F'],
  video [1, 3, F, H, W] (decoder output, before uint8), waveform [2, N]
  metadata "distilled": the settings as JSON.
"""
import functools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402

from st_write import save  # noqa: E402
import gen_audio_goldens  # noqa: E402
import gen_connector_goldens  # noqa: E402
import gen_dit_goldens  # noqa: E402
import gen_vae_goldens  # noqa: E402
from gen_e2e_golden import (  # noqa: E402
    TINY_AUDIO_Z, RecordingNoiser, image_conditionings, load_prompt, video_noise_tensors,
)

from ltx_core.components.diffusion_steps import EulerDiffusionStep  # noqa: E402
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder  # noqa: E402
from ltx_core.model.audio_vae import (  # noqa: E402
    AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, VOCODER_COMFY_KEYS_FILTER, AudioDecoderConfigurator, VocoderConfigurator,
)
from ltx_core.model.transformer.model import X0Model  # noqa: E402
from ltx_core.model.upsampler import LatentUpsamplerConfigurator, upsample_video  # noqa: E402
from ltx_core.model.video_vae import (  # noqa: E402
    VAE_DECODER_COMFY_KEYS_FILTER, VAE_ENCODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator, VideoEncoderConfigurator,
)
from ltx_core.types import AudioLatentShape, VideoPixelShape  # noqa: E402
import ltx_pipelines.utils.helpers as helpers  # noqa: E402
from ltx_pipelines.utils import denoise_audio_video, euler_denoising_loop  # noqa: E402
from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES  # noqa: E402
from ltx_pipelines.utils.helpers import simple_denoising_func  # noqa: E402
from ltx_pipelines.utils.args import ImageConditioningInput  # noqa: E402
from ltx_pipelines.utils.types import PipelineComponents  # noqa: E402

SEED = 20261127
HEIGHT, WIDTH, FRAMES, FPS = 128, 128, 9, 24.0  # stage 1 64x64 (latent 2x2x2), stage 2 latent 2x4x4
UPSAMPLER = "spatial-x2"


def audio_torch_layout(tokens, latent_shape):
    """[1, T', z*F'] token noise -> [1, z, T', F']."""
    _, z, t, fr = latent_shape
    return tokens.reshape(1, t, z, fr).permute(0, 2, 1, 3)


def stage_tensors(drawn, stage_1_video, stage_1_audio, upscaled, vl, al, video, waveform):
    """What a two-stage golden saves: the four draws in torch layouts, each stage's latents, the
    decoded outputs (fp32, contiguous)."""
    if len(drawn) != 4:
        raise RuntimeError(f"expected 4 noise draws (2 per stage), got {len(drawn)}")
    tensors = {
        **video_noise_tensors(drawn[0], stage_1_video.shape, ""),
        "audio_noise": audio_torch_layout(drawn[1], stage_1_audio.shape),
        **video_noise_tensors(drawn[2], vl.shape, "stage_2_"),
        "stage_2_audio_noise": audio_torch_layout(drawn[3], al.shape),
        "stage_1_video_latent": stage_1_video, "stage_1_audio_latent": stage_1_audio,
        "upsampled_video_latent": upscaled, "video_latent": vl, "audio_latent": al,
        "video": video, "waveform": waveform,
    }
    return {k: v.detach().float().contiguous() for k, v in tensors.items()}


def write_versions(run, stem):
    """run(version) -> (tensors, metadata) for 2.0 and 2.3, saved as data/<stem>_<version>.safetensors."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        tensors, meta = run(version)
        path = os.path.join(HERE, "data", f"{stem}_{version}.safetensors")
        save(tensors, path, metadata=meta)
        print(f"{path}: " + ", ".join(f"{k} {list(v.shape)}" for k, v in tensors.items()) +
              f"; {os.path.getsize(path)} bytes")


def run(version, images=(), upsampler=UPSAMPLER, clip=(HEIGHT, WIDTH, FRAMES, FPS), stage_1=None, frame_div=1):
    """clip: the final (height, width, frames, fps); stage_1: stage 1's, half the size by default (the x2
    upsampler's); frame_div: stage 1's image frames are the clip's divided by it. The audio latent spans
    the final clip in both stages (the same for the x2 upsampler, whose stages share frames and rate)."""
    height, width, frames, fps = clip
    h1, w1, f1, fps1 = stage_1 or (height // 2, width // 2, frames, fps)
    images_1 = [ImageConditioningInput(i.path, i.frame_idx // frame_div, i.strength, i.crf) for i in images]
    proc = gen_connector_goldens.build(version)
    hidden, mask = load_prompt("positive")
    enc = proc.process_hidden_states(hidden, mask, padding_side="left")
    video_context, audio_context = enc.video_encoding, enc.audio_encoding
    dit, _ = gen_dit_goldens.load_model(version)
    transformer = X0Model(dit).eval()
    venc = gen_vae_goldens.build(version, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    vdec = gen_vae_goldens.build(version, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
    adec = gen_audio_goldens.build(version, AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER)
    voc = gen_audio_goldens.build(version, VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER)
    ups_path = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-upsampler-{upsampler}.safetensors")
    ups = SingleGPUModelBuilder(model_class_configurator=LatentUpsamplerConfigurator, model_path=ups_path).build(
        device=torch.device("cpu"), dtype=torch.float32).eval()
    if vdec.timestep_conditioning:
        raise RuntimeError("the tiny decoder is expected without timestep conditioning")

    dtype, device = torch.float32, torch.device("cpu")
    components = PipelineComponents(dtype=dtype, device=device)
    components.video_latent_channels = dit.patchify_proj.in_features  # tiny: 8 (real: 128)
    orig = AudioLatentShape.from_video_pixel_shape
    final_shape = VideoPixelShape(batch=1, frames=frames, width=width, height=height, fps=fps)
    helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(
        lambda shape, **kw: orig(final_shape._replace(batch=shape.batch), channels=TINY_AUDIO_Z))
    drawn = []
    try:
        generator = torch.Generator(device=device).manual_seed(SEED)
        noiser = RecordingNoiser(generator, drawn)
        stepper = EulerDiffusionStep()

        def denoising_loop(sigmas, video_state, audio_state, stepper):
            return euler_denoising_loop(sigmas=sigmas, video_state=video_state, audio_state=audio_state,
                                        stepper=stepper,
                                        denoise_fn=simple_denoising_func(video_context=video_context,
                                                                         audio_context=audio_context,
                                                                         transformer=transformer))

        with torch.inference_mode():
            stage_1_sigmas = torch.Tensor(DISTILLED_SIGMA_VALUES).to(device)
            stage_1_shape = VideoPixelShape(batch=1, frames=f1, width=w1, height=h1, fps=fps1)
            video_state, audio_state = denoise_audio_video(
                output_shape=stage_1_shape, conditionings=image_conditionings(version, images_1, h1, w1),
                noiser=noiser, sigmas=stage_1_sigmas, stepper=stepper,
                denoising_loop_fn=denoising_loop, components=components, dtype=dtype, device=device)
            stage_1_video, stage_1_audio = video_state.latent.clone(), audio_state.latent.clone()
            upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=venc, upsampler=ups)

            stage_2_sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES).to(device)
            video_state, audio_state = denoise_audio_video(
                output_shape=final_shape, conditionings=image_conditionings(version, images, height, width),
                noiser=noiser, sigmas=stage_2_sigmas, stepper=stepper,
                denoising_loop_fn=denoising_loop, components=components, dtype=dtype, device=device,
                noise_scale=stage_2_sigmas[0], initial_video_latent=upscaled,
                initial_audio_latent=audio_state.latent)
            video = vdec(video_state.latent)
            waveform = voc(adec(audio_state.latent)).squeeze(0).float()
    finally:
        helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(orig)
    tensors = stage_tensors(drawn, stage_1_video, stage_1_audio, upscaled, video_state.latent, audio_state.latent,
                            video, waveform)
    meta = {"distilled": json.dumps({"version": version, "height": height, "width": width, "frames": frames,
                                     "fps": fps, "seed": SEED, "upsampler": upsampler, "dtype": "float32",
                                     "stage_1": {"height": h1, "width": w1, "frames": f1, "fps": fps1},
                                     "stage_1_sigmas": DISTILLED_SIGMA_VALUES,
                                     "stage_2_sigmas": STAGE_2_DISTILLED_SIGMA_VALUES,
                                     "sample_rate": voc.output_sampling_rate}),
            "generator": "tests/golden/gen_distilled_golden.py",
            "reference": "ltx-pipelines 1.0.0 DistilledPipeline.__call__ steps (denoise_audio_video, "
                         "simple_denoising_func, upsample_video), ltx-core 1.0.0 models, fp32 CPU"}
    return tensors, meta


def main():
    write_versions(run, "distilled")


if __name__ == "__main__":
    main()
