#!/usr/bin/env python3
"""Writes the seed corpus of the WAV reader fuzz target (tests/fuzz/corpus/fuzz_wav/): one small
file per supported layout (PCM 8/16/24/32, float 32/64, WAVE_FORMAT_EXTENSIBLE, an odd-sized
chunk to skip) and a few invalid ones. Pure standard library, deterministic; outputs are committed.
Run: python3 tests/fuzz/gen_wav_corpus.py"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_wav")
GUID_TAIL = bytes([0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71])


def wav(tag, ch, bits, payload, ext=False, extra=b"", rate=16000, data_size=None):
    fmt = struct.pack("<HHIIHH", 0xFFFE if ext else tag, ch, rate, rate * ch * bits // 8, ch * bits // 8, bits)
    if ext:
        fmt += struct.pack("<HHI", 22, bits, 3) + struct.pack("<H", tag) + GUID_TAIL
    body = b"WAVE" + extra + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(payload) if data_size is None else data_size) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


FILES = {
    "pcm16_stereo.wav": wav(1, 2, 16, struct.pack("<8h", 0, 1, -1, 32767, -32768, 100, -100, 5)),
    "pcm24_mono_ext.wav": wav(1, 1, 24, bytes([0, 0, 0x80, 0, 0, 0x40, 1, 2, 3]), ext=True),
    "pcm32_list.wav": wav(1, 2, 32, struct.pack("<4i", 1, -1, 2**31 - 1, -2**31),
                          extra=b"LIST" + struct.pack("<I", 3) + b"ab\0\0"),
    "u8.wav": wav(1, 1, 8, bytes([0, 128, 255, 7])),
    "f32.wav": wav(3, 2, 32, struct.pack("<4f", 0.5, -0.5, 1.0, 0.0)),
    "f64_ext.wav": wav(3, 1, 64, struct.pack("<2d", 0.25, -1.0), ext=True),
    "bad_truncated.wav": wav(1, 2, 16, struct.pack("<4h", 1, 2, 3, 4), data_size=1000),
    "bad_align.wav": wav(1, 2, 16, struct.pack("<3h", 1, 2, 3)),
    "bad_nofmt.wav": b"RIFF" + struct.pack("<I", 12) + b"WAVEdata" + struct.pack("<I", 0),
    "bad_adpcm.wav": wav(2, 1, 4, b"\0\0"),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, data in FILES.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(FILES)} files in {OUT}")
