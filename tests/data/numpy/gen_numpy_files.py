#!/usr/bin/env python3
"""Writes the tiny reference .npy/.npz files that tests/test_npy.c reads, using numpy itself, so
our reader is checked against what numpy really writes. Run once; the outputs are committed and
the tests never need Python:  python3 tests/data/numpy/gen_numpy_files.py
Values are simple closed forms that test_npy.c recomputes (keep the two in sync)."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def main():
    f32 = (np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1.0).astype("<f4")
    np.save(path("f32_2x3.npy"), f32)
    np.save(path("f16_4.npy"), np.array([1.0, -2.0, 0.5, 65504.0], dtype="<f2"))
    np.save(path("f64_scalar.npy"), np.array(3.25, dtype="<f8"))
    np.save(path("i64_3.npy"), np.array([-(2**40), 0, 2**62], dtype="<i8"))
    np.save(path("i32_2x2.npy"), np.array([[1, -2], [3, -4]], dtype="<i4"))
    np.save(path("i16_3.npy"), np.array([-300, 0, 300], dtype="<i2"))
    np.save(path("i8_3.npy"), np.array([-128, 0, 127], dtype="i1"))
    np.save(path("u8_5.npy"), np.arange(5, dtype="u1") * 50)
    np.save(path("bool_4.npy"), np.array([True, False, False, True]))
    np.save(path("empty_0x3.npy"), np.zeros((0, 3), dtype="<f4"))
    # bf16 as a 2-byte void, as ml_dtypes arrays are saved (numpy itself writes '|V2' here).
    np.save(path("bf16_v2.npy"), np.array([0x3F80, 0xC000, 0x0000], dtype="<u2").view("V2"))
    with open(path("f32_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, f32, version=(2, 0))
    with open(path("f32_v3.npy"), "wb") as f:
        np.lib.format.write_array(f, f32, version=(3, 0))
    # Files we must refuse with a clear message.
    np.save(path("fortran_2x3.npy"), np.asfortranarray(f32))
    np.save(path("bigendian_f4.npy"), np.arange(3, dtype=">f4"))
    members = dict(a=f32, b=np.array([-(2**40), 0, 2**62], dtype="<i8"),
                   c=np.array([True, False, False, True]))
    np.savez(path("savez.npz"), **members)
    np.savez_compressed(path("savez_compressed.npz"), **members)


if __name__ == "__main__":
    main()
