"""Two-stage goldens with the other latent upsamplers: spatial x1.5 and temporal x2, on the distilled
pipeline's steps (gen_distilled_golden.run: ltx-pipelines 1.0.0 DistilledPipeline.__call__'s
denoise_audio_video / upsample_video / denoise_audio_video, fp32, the tiny checkpoints).

ltx-pipelines 1.0.0 writes its two-stage pipelines for the x2 upsampler only (stage 1 at width // 2,
height // 2), so no pipeline of it runs these two files. The one choice made here is stage 1's clip
(src/pipeline/two_stage_clip.h), everything after it is the package's own functions:
  x1.5:     stage 1 at two thirds of the size (the upsampler's exact inverse: 3 s1 / 2 = s);
  temporal: stage 1 at every second frame and half the frame rate (the same seconds; ltx-pipelines'
            DFR pipeline doubles frames and rate this way, 2 (F - 1) + 1 frames at 2 fps), the images'
            frames halved for stage 1; the audio latent spans the final clip in both stages.
The temporal run also conditions on an image at frame 0 and a keyframe at the last frame (16, so 8
in stage 1): the frame mapping and the half-rate keyframe positions are in the golden.

Saved to tests/golden/data/upsampler_<kind>_<v>.safetensors (kind x1.5 / temporal): what
gen_distilled_golden saves but the decoded video; metadata "distilled": the settings, with stage 1's clip.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import gen_distilled_golden  # noqa: E402
from gen_distilled_golden import write_versions  # noqa: E402
from ltx_pipelines.utils.args import ImageConditioningInput  # noqa: E402

IMAGE = os.path.join(HERE, "data", "i2v_image.png")  # gen_i2v_golden.py's
STRENGTH, KEYFRAME, KEYFRAME_STRENGTH, CRF = 0.9, 16, 0.7, 0  # CRF 0: no H.264 round trip
FPS = 24.0
# x1.5: final 192x96 (latent 6x3), stage 1 128x64 (4x2); 9 frames
X15 = dict(upsampler="spatial-x1.5", clip=(96, 192, 9, FPS), stage_1=(64, 128, 9, FPS))
# temporal: final 96x64x17 (latent 3x2x3), stage 1 96x64x9 at 12 fps (2x2x3)
TEMPORAL = dict(upsampler="temporal-x2", clip=(64, 96, 17, FPS), stage_1=(64, 96, 9, FPS / 2), frame_div=2,
                images=[ImageConditioningInput(path=IMAGE, frame_idx=0, strength=STRENGTH, crf=CRF),
                        ImageConditioningInput(path=IMAGE, frame_idx=KEYFRAME, strength=KEYFRAME_STRENGTH, crf=CRF)])


def main():
    for kind, kw in (("x1.5", X15), ("temporal", TEMPORAL)):
        def run(version, kw=kw):
            tensors, meta = gen_distilled_golden.run(version, **kw)
            tensors.pop("video")  # the decoder's sizes are the VAE goldens' business; 2 MB each
            meta["generator"] = "tests/golden/gen_upsampler_scales_golden.py"
            return tensors, meta
        write_versions(run, f"upsampler_{kind}")


if __name__ == "__main__":
    main()
