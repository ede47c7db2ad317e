"""GGUF metadata keys, read from the file's header without loading tensors (format: ggml's
``docs/gguf.md``: magic ``GGUF``, u32 version ≥ 2, u64 tensor count, u64 key count, then each key as a
u64-length UTF-8 string, a u32 value type and the value; little-endian)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

#: bytes of each fixed-size value type (0 uint8 … 7 bool, 10 uint64, 11 int64, 12 float64)
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


def _u32(f: BinaryIO) -> int:
    return int(struct.unpack("<I", f.read(4))[0])


def _u64(f: BinaryIO) -> int:
    return int(struct.unpack("<Q", f.read(8))[0])


def _skip_value(f: BinaryIO, vtype: int) -> None:
    if vtype in _FIXED:
        f.seek(_FIXED[vtype], 1)
    elif vtype == _STRING:
        f.seek(_u64(f), 1)
    elif vtype == _ARRAY:
        item, count = _u32(f), _u64(f)
        if item in _FIXED:
            f.seek(_FIXED[item] * count, 1)
        else:
            for _ in range(count):
                _skip_value(f, item)
    else:
        raise ValueError(f"unknown GGUF value type {vtype}")


def metadata_keys(path: Path) -> set[str]:
    """Every metadata key of the GGUF file at ``path`` (ValueError: not a GGUF v2+ file)."""
    with path.open("rb") as f:
        if f.read(4) != b"GGUF" or _u32(f) < 2:
            raise ValueError(f"{path}: not a GGUF file of version 2 or later")
        _u64(f)  # tensor count
        keys = set()
        for _ in range(_u64(f)):
            keys.add(f.read(_u64(f)).decode("utf-8", "replace"))
            _skip_value(f, _u32(f))
        return keys
