#!/usr/bin/env python3
"""Writes reference.safetensors with the reference `safetensors` package (numpy flavour, no
torch needed), so tests/test_safetensors.c checks our reader against what the real writer
produces. Run once; the output is committed:  python3 tests/data/safetensors/gen_safetensors_files.py
Values are closed forms that the test recomputes (keep the two in sync)."""
import os

import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

tensors = {
    "blocks.0.attn.to_q.weight": (np.arange(12, dtype="<f4").reshape(3, 4) * 0.25 - 1.0).astype("<f4"),
    "blocks.0.attn.to_q.bias": np.array([1.0, -2.0, 0.5], dtype="<f2"),
    "scale_shift_table": np.array([[-(2**40), 7]], dtype="<i8"),
    "mask": np.array([True, False, True], dtype=bool),
    "ids": np.arange(5, dtype="u1"),
    "empty": np.zeros((0, 2), dtype="<f4"),
}
save_file(tensors, os.path.join(HERE, "reference.safetensors"),
          metadata={"format": "pt", "config": '{"num_layers": 1, "eps": 1e-06}'})
