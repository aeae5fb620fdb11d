#!/usr/bin/env python3
"""Writes the seed corpora for the io and pipeline-input fuzz targets under tests/fuzz/corpus/<target>/: a handful
of tiny valid files and a few invalid ones each. Pure standard library (no numpy), deterministic.
Run from anywhere:  python3 tests/fuzz/gen_corpus.py   (outputs are committed)."""
import io
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def st_file(header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def npy_bytes(descr, shape, payload, version=(1, 0), fortran=False):
    shape_txt = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_txt)
    pre = 10 if version[0] == 1 else 12
    total = (pre + len(d) + 1 + 63) // 64 * 64
    hdr = d + " " * (total - pre - len(d) - 1) + "\n"
    lenfmt = "<H" if version[0] == 1 else "<I"
    return b"\x93NUMPY" + bytes(version) + struct.pack(lenfmt, len(hdr)) + hdr.encode() + payload


def npz_bytes(members, method=zipfile.ZIP_STORED, comment=b""):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data in members:
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = method
            z.writestr(zi, data)
        z.comment = comment
    return buf.getvalue()


def main():
    # JSON
    out("fuzz_json", "object", '{"a": [1, 2.5, -3e2, true, false, null], "b": {"c": "d\\n\\u00e9"}}')
    out("fuzz_json", "surrogates", '["\\ud83d\\ude00", "\\u0000", "caf\u00e9"]')
    out("fuzz_json", "numbers", "[0, -0, 9223372036854775807, -9223372036854775808, "
        "9223372036854775808, 1e308, 1.5e-300, 0.1]")
    out("fuzz_json", "config", '{"_class_name": "LTXModel", "num_layers": 48, "eps": 1e-06, '
        '"patch_size": [1, 2, 2], "nested": {"x": [[[]]], "y": {}}}')
    out("fuzz_json", "bad_trailing", '{"a": 1} x')
    out("fuzz_json", "bad_unterminated", '{"a": [1, 2')
    out("fuzz_json", "bad_escape", '"\\ud800 \\x"')
    out("fuzz_json", "deep", "[" * 130 + "]" * 130)

    # safetensors
    f32 = struct.pack("<6f", *[0.5 * i for i in range(6)])
    out("fuzz_safetensors", "two_tensors", st_file(
        {"__metadata__": {"format": "pt", "config": "{\"a\": 1}"},
         "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
         "b": {"dtype": "BF16", "shape": [4], "data_offsets": [24, 32]}},
        f32 + b"\x80\x3f" * 4))
    out("fuzz_safetensors", "scalar_and_empty", st_file(
        {"s": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]},
         "e": {"dtype": "F16", "shape": [0, 5], "data_offsets": [8, 8]},
         "q": {"dtype": "F8_E4M3", "shape": [3], "data_offsets": [8, 11]}},
        struct.pack("<q", -7) + b"\x38\x40\xb8"))
    out("fuzz_safetensors", "bad_overlap", st_file(
        {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
         "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}, b"\0" * 6))
    out("fuzz_safetensors", "bad_size", st_file(
        {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8))
    out("fuzz_safetensors", "bad_header_len", struct.pack("<Q", 1 << 40) + b"{}")
    out("fuzz_safetensors", "empty_header", st_file({}, b""))

    # npy
    out("fuzz_npy", "f32_2x3.npy", npy_bytes("<f4", (2, 3), f32))
    out("fuzz_npy", "scalar_f64.npy", npy_bytes("<f8", (), struct.pack("<d", 3.25)))
    out("fuzz_npy", "u8_1d.npy", npy_bytes("|u1", (5,), bytes(range(5))))
    out("fuzz_npy", "bf16_v2.npy", npy_bytes("<V2", (2,), b"\x80\x3f\x00\xc0"))
    out("fuzz_npy", "v2_i32.npy", npy_bytes("<i4", (2,), struct.pack("<2i", 1, -1), version=(2, 0)))
    out("fuzz_npy", "v3_bool.npy", npy_bytes("|b1", (3,), b"\1\0\1", version=(3, 0)))
    out("fuzz_npy", "bad_fortran.npy", npy_bytes("<f4", (2, 3), f32, fortran=True))
    out("fuzz_npy", "bad_bigendian.npy", npy_bytes(">f4", (1,), b"\0\0\0\0"))

    # npz
    m1 = ("a.npy", npy_bytes("<f4", (2, 3), f32))
    m2 = ("b.npy", npy_bytes("<i8", (2,), struct.pack("<2q", 5, -5)))
    out("fuzz_npz", "stored.npz", npz_bytes([m1, m2]))
    out("fuzz_npz", "deflated.npz", npz_bytes([m1, m2], method=zipfile.ZIP_DEFLATED))
    out("fuzz_npz", "comment.npz", npz_bytes([m2], comment=b"a zip comment"))
    out("fuzz_npz", "bad_not_npy.npz", npz_bytes([("readme.txt", b"hello")]))
    out("fuzz_npz", "empty.npz", npz_bytes([]))

    # the pipeline's input files: first byte = the extension the target gives the file
    # (fuzz_prompt_embeds: 0 .safetensors, 1 .npz, 2 .npy; fuzz_noise: 0 .safetensors, 1 .npz)
    S, D, L = 128, 32, 3  # the tiny models' prompt embeds: 128 tokens of D 32 x L 3
    hidden = struct.pack("<%df" % (S * D * L), *[((i * 7) % 13 - 6) / 8.0 for i in range(S * D * L)])
    mask = struct.pack("<%dq" % S, *([0] * 5 + [1] * (S - 5)))
    out("fuzz_prompt_embeds", "tiny.safetensors", b"\0" + st_file(
        {"attention_mask": {"dtype": "I64", "shape": [1, S], "data_offsets": [0, len(mask)]},
         "hidden_states": {"dtype": "F32", "shape": [1, S, D, L], "data_offsets": [len(mask), len(mask) + len(hidden)]}},
        mask + hidden))
    out("fuzz_prompt_embeds", "tiny.npz", b"\1" + npz_bytes(
        [("hidden_states.npy", npy_bytes("<f4", (1, S, D, L), hidden)),
         ("attention_mask.npy", npy_bytes("<i8", (1, S), mask))], method=zipfile.ZIP_DEFLATED))
    out("fuzz_prompt_embeds", "hidden_only.npy", b"\2" + npy_bytes("<f4", (1, S, D, L), hidden))
    # the text cache's form: layer-major bf16 (the words of hidden's f32 values' high halves)
    major = struct.pack("<%dH" % (S * D * L), *[(struct.unpack("<I", hidden[4 * i:4 * i + 4])[0] >> 16)
                                                for i in range(S * D * L)])
    out("fuzz_prompt_embeds", "cache_bf16.safetensors", b"\0" + st_file(
        {"attention_mask": {"dtype": "I64", "shape": [1, S], "data_offsets": [0, len(mask)]},
         "hidden_states_layer_major": {"dtype": "BF16", "shape": [1, L, S, D],
                                       "data_offsets": [len(mask), len(mask) + len(major)]}},
        mask + major))
    out("fuzz_prompt_embeds", "bad_length.safetensors", b"\0" + st_file(
        {"hidden_states": {"dtype": "F32", "shape": [1, 3, D, L], "data_offsets": [0, 3 * D * L * 4]}},
        hidden[:3 * D * L * 4]))
    vn = struct.pack("<96f", *[(i % 9 - 4) / 3.0 for i in range(96)])  # [1, 8, 2, 2, 3]
    an = struct.pack("<288f", *[(i % 7 - 3) / 2.0 for i in range(288)])  # [1, 2, 9, 16]
    out("fuzz_noise", "tiny.safetensors", b"\0" + st_file(
        {"audio_noise": {"dtype": "F32", "shape": [1, 2, 9, 16], "data_offsets": [0, len(an)]},
         "video_noise": {"dtype": "F32", "shape": [1, 8, 2, 2, 3], "data_offsets": [len(an), len(an) + len(vn)]}},
        an + vn))
    out("fuzz_noise", "tiny.npz", b"\1" + npz_bytes(
        [("video_noise.npy", npy_bytes("<f4", (1, 8, 2, 2, 3), vn)),
         ("audio_noise.npy", npy_bytes("<f4", (1, 2, 9, 16), an))]))
    out("fuzz_noise", "bad_nan.safetensors", b"\0" + st_file(
        {"audio_noise": {"dtype": "F32", "shape": [1, 2, 9, 16], "data_offsets": [0, len(an)]},
         "video_noise": {"dtype": "F32", "shape": [1, 8, 2, 2, 3], "data_offsets": [len(an), len(an) + len(vn)]}},
        an + struct.pack("<f", float("nan")) + vn[4:]))

    # fuzz_lora (0 .safetensors): two pairs, one ltx-core (bf16), one diffusers (f32); a lone half
    a16 = struct.pack("<16H", *[0x3c00 + i for i in range(16)])  # bf16 [2, 8]
    b16 = struct.pack("<16H", *[0xbc00 + i for i in range(16)])  # bf16 [8, 2]
    a32 = struct.pack("<16f", *[(i % 5 - 2) / 4.0 for i in range(16)])
    lt = "diffusion_model.transformer_blocks.0.attn1.to_q"
    df = "transformer.transformer_blocks.1.attn1.to_k"
    out("fuzz_lora", "two_pairs.safetensors", b"\0" + st_file(
        {f"{lt}.lora_A.weight": {"dtype": "BF16", "shape": [2, 8], "data_offsets": [0, 32]},
         f"{lt}.lora_B.weight": {"dtype": "BF16", "shape": [8, 2], "data_offsets": [32, 64]},
         f"{df}.lora_A.weight": {"dtype": "F32", "shape": [2, 8], "data_offsets": [64, 128]},
         f"{df}.lora_B.weight": {"dtype": "F32", "shape": [8, 2], "data_offsets": [128, 192]}},
        a16 + b16 + a32 + a32))
    out("fuzz_lora", "lone_half.safetensors", b"\0" + st_file(
        {f"{lt}.lora_A.weight": {"dtype": "BF16", "shape": [2, 8], "data_offsets": [0, 32]}}, a16))
    # fuzz_image (0 .png, 1 .jpg; the reader goes by content): the committed test images
    images = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "images")
    for name, ext in (("rgba8.png", 0), ("palette.png", 0), ("gray16.png", 0), ("gradient.jpg", 1)):
        with open(os.path.join(images, name), "rb") as f:
            out("fuzz_image", name, bytes([ext]) + f.read())


if __name__ == "__main__":
    main()
