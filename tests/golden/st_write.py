"""Deterministic safetensors writer shared by the golden generators.

safetensors' own save_file() serialises __metadata__ from a hash map, so two runs with identical
tensors can produce different header bytes (and sha256). Committed data must be reproducible, so
we write the format ourselves: 8-byte little-endian header length, a JSON header (__metadata__
first, then tensors in the order given), padded with spaces to a multiple of 8, then the raw
little-endian tensor bytes back to back in the order given (safetensors does not pad between
tensors either, so a reader must not assume aligned tensor data).
Every file written here is re-read with the official safetensors library to validate it.
"""
import json
import struct

import numpy as np
import torch
from safetensors import safe_open

_DTYPE = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL", torch.float8_e4m3fn: "F8_E4M3", torch.float8_e5m2: "F8_E5M2",
}
for _name, _code in (("uint16", "U16"), ("uint32", "U32"), ("uint64", "U64")):
    if hasattr(torch, _name):
        _DTYPE[getattr(torch, _name)] = _code


def _raw_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().contiguous().cpu()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


def save(tensors: dict, path: str, metadata: dict | None = None) -> None:
    """Write `tensors` (name -> torch.Tensor, insertion order kept) with string metadata."""
    header = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        if t.dtype not in _DTYPE:
            raise TypeError(f"{name}: unsupported dtype {t.dtype}")
        b = _raw_bytes(t)
        header[name] = {"dtype": _DTYPE[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    _verify(tensors, path, metadata)


def _verify(tensors: dict, path: str, metadata: dict | None) -> None:
    with safe_open(path, framework="pt") as f:
        if sorted(f.keys()) != sorted(tensors.keys()):
            raise RuntimeError(f"{path}: key set mismatch after write")
        if (f.metadata() or {}) != ({k: str(v) for k, v in (metadata or {}).items()}):
            raise RuntimeError(f"{path}: metadata mismatch after write")
        for name, t in tensors.items():
            r = f.get_tensor(name)
            if r.dtype != t.dtype or tuple(r.shape) != tuple(t.shape):
                raise RuntimeError(f"{path}: {name} dtype/shape mismatch after write")
            if r.numel() and not np.array_equal(
                    r.contiguous().reshape(-1).view(torch.uint8).numpy(),
                    t.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy()):
                raise RuntimeError(f"{path}: {name} bytes mismatch after write")
