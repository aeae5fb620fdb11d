"""Two-stage pipeline golden: ltx-pipelines 1.0.0 TI2VidTwoStagesPipeline.__call__ (ti2vid_two_stages.py)
on the tiny checkpoints, text to audio+video, no image conditioning, with a user LoRA in both stages
and the tiny distilled LoRA added for stage 2.

As gen_distilled_golden.py: the pipeline cannot load the tiny files and fixes bf16 inside __call__,
so this runs its steps in order from the package's own functions, in fp32:
  stage 1: denoise_audio_video at (height/2, width/2) on LTX2Scheduler().execute(steps) with
           multi_modal_guider_factory_denoising_func (CFG + STG + rescale + modality, negative
           context), the transformer built with the user LoRA (ModelLedger's loras)
  between: upsample_video(video latent, video encoder's statistics, x2 spatial upsampler)
  stage 2: the transformer built again with (user LoRA, distilled LoRA) (with_additional_loras),
           denoise_audio_video at (height, width) on STAGE_2_DISTILLED_SIGMA_VALUES with
           simple_denoising_func (positive contexts), noise_scale = sigmas[0], the upsampled video
           and stage 1's audio as initial latents; the one generator continues
  decode:  VideoDecoder(latent), vocoder(AudioDecoder(latent))
The transformers are ltx-core's SingleGPUModelBuilder with loras (apply_loras), as ModelLedger
builds them. The four GaussianNoiser draws are recorded (gen_e2e_golden.RecordingNoiser).

Saved to tests/golden/data/two_stage_<v>.safetensors: the noises (video_noise, audio_noise,
stage_2_video_noise, stage_2_audio_noise), stage_1_video_latent, upsampled_video_latent,
video_latent, audio_latent, video, waveform; metadata "two_stage": the settings as JSON.
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

import gen_audio_goldens  # noqa: E402
import gen_connector_goldens  # noqa: E402
import gen_vae_goldens  # noqa: E402
from gen_distilled_golden import stage_tensors, write_versions  # noqa: E402
from gen_lora_golden import fused, lora_path  # noqa: E402
from gen_e2e_golden import AUDIO, STG_BLOCKS, TINY_AUDIO_Z, VIDEO, RecordingNoiser, load_prompt  # noqa: E402

from ltx_core.components.diffusion_steps import EulerDiffusionStep  # noqa: E402
from ltx_core.components.guiders import MultiModalGuiderParams, create_multimodal_guider_factory  # noqa: E402
from ltx_core.components.schedulers import LTX2Scheduler  # noqa: E402
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
from ltx_pipelines.utils import multi_modal_guider_factory_denoising_func  # noqa: E402
from ltx_pipelines.utils.constants import STAGE_2_DISTILLED_SIGMA_VALUES  # noqa: E402
from ltx_pipelines.utils.helpers import simple_denoising_func  # noqa: E402
from ltx_pipelines.utils.types import PipelineComponents  # noqa: E402

SEED = 20261129
STEPS = 2
HEIGHT, WIDTH, FRAMES, FPS = 128, 128, 9, 24.0  # stage 1 64x64 (latent 2x2x2), stage 2 latent 2x4x4
UPSAMPLER = "spatial-x2"
USER_LORA, USER_STRENGTH = "style", 0.8           # gen_lora_golden's files
DISTILLED_LORA, DISTILLED_STRENGTH = "distilled", 1.0  # ltx-pipelines DEFAULT_LORA_STRENGTH
WEIGHTS = os.path.join(ROOT, "weights", "tiny")


def transformer(version, loras):
    # apply_loras writes into the loaded state dict (DummyRegistry): the weights no adapter covers keep
    # the file's bf16, so the fp32 run widens them (exactly) as the engine's fp32 load does
    return X0Model(fused(version, loras).float()).eval()


def run(version):
    proc = gen_connector_goldens.build(version)
    ctx = {}
    for name in ("positive", "negative"):
        hidden, mask = load_prompt(name)
        out = proc.process_hidden_states(hidden, mask, padding_side="left")
        ctx[name] = (out.video_encoding, out.audio_encoding)
    user = [(lora_path(USER_LORA, version), USER_STRENGTH)]
    stage_1_transformer = transformer(version, user)
    stage_2_transformer = transformer(version, user + [(lora_path(DISTILLED_LORA, version), DISTILLED_STRENGTH)])
    venc = gen_vae_goldens.build(version, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)
    vdec = gen_vae_goldens.build(version, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
    adec = gen_audio_goldens.build(version, AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER)
    voc = gen_audio_goldens.build(version, VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER)
    ups = SingleGPUModelBuilder(model_class_configurator=LatentUpsamplerConfigurator,
                                model_path=os.path.join(WEIGHTS, f"ltx2-tiny-upsampler-{UPSAMPLER}.safetensors")
                                ).build(device=torch.device("cpu"), dtype=torch.float32).eval()

    dtype, device = torch.float32, torch.device("cpu")
    components = PipelineComponents(dtype=dtype, device=device)
    components.video_latent_channels = stage_1_transformer.velocity_model.patchify_proj.in_features
    orig = AudioLatentShape.from_video_pixel_shape
    helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(functools.partial(orig, channels=TINY_AUDIO_Z))
    drawn = []
    try:
        generator = torch.Generator(device=device).manual_seed(SEED)
        noiser = RecordingNoiser(generator, drawn)
        stepper = EulerDiffusionStep()
        vg = create_multimodal_guider_factory(MultiModalGuiderParams(**VIDEO, skip_step=0, stg_blocks=STG_BLOCKS),
                                              negative_context=ctx["negative"][0])
        ag = create_multimodal_guider_factory(MultiModalGuiderParams(**AUDIO, skip_step=0, stg_blocks=STG_BLOCKS),
                                              negative_context=ctx["negative"][1])

        def first_stage_loop(sigmas, video_state, audio_state, stepper):
            return euler_denoising_loop(sigmas=sigmas, video_state=video_state, audio_state=audio_state,
                                        stepper=stepper,
                                        denoise_fn=multi_modal_guider_factory_denoising_func(
                                            video_guider_factory=vg, audio_guider_factory=ag,
                                            v_context=ctx["positive"][0], a_context=ctx["positive"][1],
                                            transformer=stage_1_transformer))

        def second_stage_loop(sigmas, video_state, audio_state, stepper):
            return euler_denoising_loop(sigmas=sigmas, video_state=video_state, audio_state=audio_state,
                                        stepper=stepper,
                                        denoise_fn=simple_denoising_func(video_context=ctx["positive"][0],
                                                                         audio_context=ctx["positive"][1],
                                                                         transformer=stage_2_transformer))

        with torch.inference_mode():
            sigmas = LTX2Scheduler().execute(steps=STEPS).to(dtype=torch.float32, device=device)
            stage_1_shape = VideoPixelShape(batch=1, frames=FRAMES, width=WIDTH // 2, height=HEIGHT // 2, fps=FPS)
            video_state, audio_state = denoise_audio_video(
                output_shape=stage_1_shape, conditionings=[], noiser=noiser, sigmas=sigmas, stepper=stepper,
                denoising_loop_fn=first_stage_loop, components=components, dtype=dtype, device=device)
            stage_1_video, stage_1_audio = video_state.latent.clone(), audio_state.latent.clone()
            upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=venc, upsampler=ups)
            distilled_sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES).to(device)
            stage_2_shape = VideoPixelShape(batch=1, frames=FRAMES, width=WIDTH, height=HEIGHT, fps=FPS)
            video_state, audio_state = denoise_audio_video(
                output_shape=stage_2_shape, conditionings=[], noiser=noiser, sigmas=distilled_sigmas,
                stepper=stepper, denoising_loop_fn=second_stage_loop, components=components, dtype=dtype,
                device=device, noise_scale=distilled_sigmas[0], initial_video_latent=upscaled,
                initial_audio_latent=audio_state.latent)
            video = vdec(video_state.latent)
            waveform = voc(adec(audio_state.latent)).squeeze(0).float()
    finally:
        helpers.AudioLatentShape.from_video_pixel_shape = staticmethod(orig)
    tensors = stage_tensors(drawn, stage_1_video, stage_1_audio, upscaled, video_state.latent, audio_state.latent,
                            video, waveform)
    tensors["sigmas"] = sigmas.float().contiguous()
    meta = {"two_stage": json.dumps({"version": version, "steps": STEPS, "height": HEIGHT, "width": WIDTH,
                                     "frames": FRAMES, "fps": FPS, "seed": SEED, "stg_blocks": STG_BLOCKS,
                                     "video": VIDEO, "audio": AUDIO, "upsampler": UPSAMPLER,
                                     "lora": [USER_LORA, USER_STRENGTH],
                                     "distilled_lora": [DISTILLED_LORA, DISTILLED_STRENGTH], "dtype": "float32"}),
            "generator": "tests/golden/gen_two_stage_golden.py",
            "reference": "ltx-pipelines 1.0.0 TI2VidTwoStagesPipeline.__call__ steps, ltx-core 1.0.0 models and "
                         "apply_loras, fp32 CPU"}
    return tensors, meta


def main():
    write_versions(run, "two_stage")


if __name__ == "__main__":
    main()
