"""Image-to-video goldens: the one-stage and the distilled pipelines of ltx-pipelines 1.0.0 (as
gen_e2e_golden.py and gen_distilled_golden.py run them) with one image at frame 0, through
combined_image_conditionings (load_image_conditioning: decode, preprocess with CRF 0 = no H.264 round
trip, resize_and_center_crop, normalize_latent; the tiny video encoder; VideoConditionByLatentIndex at
latent 0 with denoise mask 1 - strength), fp32.

The image is tests/golden/data/i2v_image.png, written here: 100 x 70 RGB (another aspect ratio than
the videos', so the resize and the centre crop both act), a smooth seeded pattern.

The keyframe_* runs add the image again at the last frame (8 of 9) with strength 0.7: it is appended
as extra video tokens with its own positions; the video noise is then saved in token layout
(video_noise_tokens [1, T, C], as it was drawn).

Saved to tests/golden/data/i2v_<pipeline>_<v>.safetensors (pipeline one_stage / distilled /
keyframe_one_stage / keyframe_distilled): the
noises and latents gen_e2e_golden / gen_distilled_golden save (not the decoded video and waveform:
the decoders are checked by those goldens), plus
  image_<H>x<W>: load_image_conditioning's output [1, 3, 1, H, W] at each size the run encodes it;
metadata "i2v": the image, frame, strength, CRF.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from st_write import save  # noqa: E402
import gen_distilled_golden  # noqa: E402
import gen_e2e_golden  # noqa: E402

from ltx_pipelines.utils.args import ImageConditioningInput  # noqa: E402
from ltx_pipelines.utils.media_io import load_image_conditioning  # noqa: E402

IMAGE = os.path.join(HERE, "data", "i2v_image.png")
IMAGE_W, IMAGE_H = 100, 70
SEED = 20261130
STRENGTH = 0.9  # not 1, so the conditioned tokens are also denoised a little (mask 0.1)
# the keyframe runs add the same image at the last frame (VideoConditionByKeyframeIndex: appended tokens)
KEYFRAME, KEYFRAME_STRENGTH = 8, 0.7
CRF = 0         # the H.264 round trip depends on the libx264 build: checked elsewhere, not bitwise


def write_image():
    g = np.random.RandomState(SEED)
    y, x = np.mgrid[0:IMAGE_H, 0:IMAGE_W].astype(np.float64)
    base = np.stack([128 + 100 * np.sin(x / 9 + c) * np.cos(y / 7 - c) for c in range(3)], axis=-1)
    img = np.clip(base + g.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    Image.fromarray(img, "RGB").save(IMAGE)


def prepared(height, width):
    with torch.inference_mode():
        return load_image_conditioning(IMAGE, height, width, torch.float32, torch.device("cpu"), crf=CRF)


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    write_image()
    images = [ImageConditioningInput(path=IMAGE, frame_idx=0, strength=STRENGTH, crf=CRF)]
    keyframes = images + [ImageConditioningInput(path=IMAGE, frame_idx=KEYFRAME, strength=KEYFRAME_STRENGTH, crf=CRF)]
    meta_i2v = json.dumps({"image": "tests/golden/data/i2v_image.png", "frame": 0, "strength": STRENGTH, "crf": CRF,
                           "keyframe": KEYFRAME, "keyframe_strength": KEYFRAME_STRENGTH})
    one_size = [(gen_e2e_golden.HEIGHT, gen_e2e_golden.WIDTH)]
    two_sizes = [(gen_distilled_golden.HEIGHT // 2, gen_distilled_golden.WIDTH // 2),
                 (gen_distilled_golden.HEIGHT, gen_distilled_golden.WIDTH)]
    runs = {
        "one_stage": (lambda v: gen_e2e_golden.run(v, images=images), one_size),
        "distilled": (lambda v: gen_distilled_golden.run(v, images=images), two_sizes),
        "keyframe_one_stage": (lambda v: gen_e2e_golden.run(v, images=keyframes), one_size),
        "keyframe_distilled": (lambda v: gen_distilled_golden.run(v, images=keyframes), two_sizes),
    }
    for name, (run, sizes) in runs.items():
        for version in ("2.0", "2.3"):
            tensors, meta = run(version)
            for k in ("video", "waveform"):  # the decoders are the e2e / distilled goldens' business
                tensors.pop(k)
            for h, w in sizes:
                tensors[f"image_{h}x{w}"] = prepared(h, w).float().contiguous()
            meta = dict(meta, i2v=meta_i2v, generator="tests/golden/gen_i2v_golden.py")
            path = os.path.join(HERE, "data", f"i2v_{name}_{version}.safetensors")
            save(tensors, path, metadata=meta)
            print(f"{path}: " + ", ".join(f"{k} {list(v.shape)}" for k, v in tensors.items()) +
                  f"; {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
