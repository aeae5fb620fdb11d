"""Writes the tiny image fixtures of tests/test_image_io.c and, beside each, <name>.rgb: the raw
8-bit RGB bytes (height x width x 3) the C reader must return, taken from PIL.

ltx-pipelines reads a conditioning image as np.array(PIL.Image.open(path))[..., :3]. That is the
expectation for 8-bit RGB/RGBA and 16-bit RGB (PIL keeps the high byte of each sample). For
grayscale and palette PNGs that expression breaks in PIL (a 2-D array: [..., :3] keeps 3 columns),
so the expectation is PIL's Image.convert("RGB"): gray replicated, palette looked up, alpha dropped.
16-bit gray opens in PIL as mode I;16 and convert() clips values above 255 instead of scaling, so
its expectation is the high byte (libpng's png_set_strip_16), computed here with numpy.

roundtrip_crf33.rgb is ltx-pipelines' own preprocess(image, crf=33) (PyAV + libx264) of the 16x16
picture round_trip_input() draws, which the C test draws too. At 16 rows x264 codes one slice
whatever the CPU count, so the result does not depend on the machine that made it.

Run with a Python that has numpy and Pillow: python make_images.py (writes next to itself). The
round-trip fixture also needs ltx-pipelines (and PyAV) importable; without it that file is kept.
"""
import importlib.util
import os
import struct
import sys
import types
import warnings
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
# Adam7 passes: (x0, y0, dx, dy).
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(name, samples, bit_depth, color_type, interlace=False):
    """A PNG written by hand (PIL cannot write 16-bit RGB, 4-bit gray or interlaced files).
    samples: (h, w, c) integers; filter type 0 on every row."""
    h, w = samples.shape[:2]
    dtype = ">u2" if bit_depth == 16 else np.uint8

    def rows(img):
        if bit_depth >= 8:
            return [img[y].astype(dtype).tobytes() for y in range(img.shape[0])]
        per_byte = 8 // bit_depth
        out = []
        for y in range(img.shape[0]):
            v = list(img[y].reshape(-1)) + [0] * (-img.shape[1] % per_byte)
            out.append(bytes(sum(int(v[i + k]) << (8 - bit_depth * (k + 1)) for k in range(per_byte))
                             for i in range(0, len(v), per_byte)))
        return out

    raw = b""
    for x0, y0, dx, dy in ADAM7 if interlace else [(0, 0, 1, 1)]:
        sub = samples[y0::dy, x0::dx]
        if sub.shape[0] and sub.shape[1]:
            raw += b"".join(b"\0" + r for r in rows(sub))
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) +
                chunk(b"IEND", b""))


def expect(name, rgb):
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    assert rgb.ndim == 3 and rgb.shape[2] == 3, (name, rgb.shape)
    with open(os.path.join(HERE, name + ".rgb"), "wb") as f:
        f.write(rgb.tobytes())


def pil_pipeline(path):  # ltx-pipelines' decode_image
    return np.array(Image.open(os.path.join(HERE, path)))[..., :3]


def pil_rgb(path):
    with warnings.catch_warnings():  # "palette images with transparency ...": the alpha is dropped
        warnings.simplefilter("ignore")
        return np.array(Image.open(os.path.join(HERE, path)).convert("RGB"))


def round_trip_input():
    """16x16 ramps with a little integer texture; the same formula as tests/test_image_io.c."""
    y, x = np.mgrid[0:16, 0:16]
    return np.stack([x * 15 + (x * y * 7) % 11, y * 15 + (x + 3 * y) % 7, 255 - 8 * (x + y) + (x * x + y) % 5],
                    -1).astype(np.uint8)


def load_media_io():
    """ltx_pipelines.utils.media_io without running the package __init__ (which imports every
    pipeline, and with them torchaudio)."""
    spec = importlib.util.find_spec("ltx_pipelines")
    if spec is None:
        return None
    root = os.path.dirname(spec.origin)
    for name, path in (("ltx_pipelines", root), ("ltx_pipelines.utils", os.path.join(root, "utils"))):
        pkg = types.ModuleType(name)
        pkg.__path__ = [path]
        sys.modules.setdefault(name, pkg)
    for name in ("ltx_pipelines.utils.constants", "ltx_pipelines.utils.media_io"):
        file = os.path.join(root, *name.split(".")[1:]) + ".py"
        mod_spec = importlib.util.spec_from_file_location(name, file)
        mod = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = mod
        mod_spec.loader.exec_module(mod)
    return sys.modules["ltx_pipelines.utils.media_io"]


def main():
    y, x = np.mgrid[0:5, 0:7]
    # 8-bit RGBA, 7x5, alpha from 0 to 255: colour under alpha 0 must survive (no compositing).
    rgba = np.stack([x * 37, y * 61, 255 - x * 11 - y * 13, (x * 5 + y * 40) * 255 // 48], -1)
    Image.fromarray(rgba.astype(np.uint8), "RGBA").save(os.path.join(HERE, "rgba8.png"))
    expect("rgba8.png", pil_pipeline("rgba8.png"))

    # 16-bit RGB, 5x3, low bytes non-zero so truncation and rounding differ.
    v = (np.arange(5 * 3 * 3).reshape(3, 5, 3) * 4099 + 0x1280) % 65536
    write_png("rgb16.png", v, 16, 2)
    got = pil_pipeline("rgb16.png")
    assert (got == v >> 8).all(), "PIL no longer keeps the high byte of 16-bit RGB"
    expect("rgb16.png", got)

    # Interlaced (Adam7) 8-bit RGB, 9x7: every pass non-empty.
    yy, xx = np.mgrid[0:7, 0:9]
    write_png("adam7.png", np.stack([xx * 28, yy * 36, (xx * yy * 7) % 256], -1), 8, 2, interlace=True)
    expect("adam7.png", pil_pipeline("adam7.png"))

    # Gray 8-bit, gray + alpha, 4-bit gray (expanded by x17), 16-bit gray.
    Image.fromarray((x * 30 + y * 9).astype(np.uint8), "L").save(os.path.join(HERE, "gray8.png"))
    expect("gray8.png", pil_rgb("gray8.png"))
    la = np.stack([x * 30 + y * 9, 255 - x * 36], -1).astype(np.uint8)
    Image.fromarray(la, "LA").save(os.path.join(HERE, "gray_alpha.png"))
    expect("gray_alpha.png", pil_rgb("gray_alpha.png"))
    write_png("gray4.png", ((x + y * 3) % 16)[..., None], 4, 0)
    expect("gray4.png", pil_rgb("gray4.png"))
    g16 = (np.arange(7 * 5).reshape(5, 7) * 1877 + 0x0180) % 65536
    write_png("gray16.png", g16[..., None], 16, 0)
    expect("gray16.png", np.repeat((g16 >> 8)[..., None], 3, -1))

    # Palette: 5 colours (PIL writes 4-bit indices) with a tRNS chunk that must be ignored.
    pal = Image.fromarray(((x + 2 * y) % 5).astype(np.uint8), "P")
    pal.putpalette([255, 0, 0, 0, 200, 0, 10, 20, 250, 128, 128, 128, 1, 2, 3])
    pal.save(os.path.join(HERE, "palette.png"), transparency=bytes([0, 128, 255, 255, 255]))
    assert Image.open(os.path.join(HERE, "palette.png")).info.get("transparency") is not None
    expect("palette.png", pil_rgb("palette.png"))

    # JPEG, 16x16 smooth gradient, 4:2:0, quality 90: decoded by FFmpeg in C, by libjpeg in PIL.
    jy, jx = np.mgrid[0:16, 0:16]
    grad = np.stack([jx * 15, jy * 15, 255 - (jx + jy) * 7], -1).astype(np.uint8)
    Image.fromarray(grad, "RGB").save(os.path.join(HERE, "gradient.jpg"), quality=90, subsampling=2)
    expect("gradient.jpg", pil_pipeline("gradient.jpg"))

    media_io = load_media_io()
    if media_io is None:
        print("ltx_pipelines is not importable: roundtrip_crf33.rgb left as it is")
    else:
        out = media_io.preprocess(round_trip_input(), crf=33)
        assert out.shape == (16, 16, 3) and out.dtype == np.uint8, out.shape
        with open(os.path.join(HERE, "roundtrip_crf33.rgb"), "wb") as f:
            f.write(out.tobytes())


if __name__ == "__main__":
    main()
