"""PNG files without an imaging library: what LocalVisBackend's ``add_image`` writes."""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any

import numpy as np

from runnerx.fileio.atomic import atomic_write

_COLOUR_TYPES = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type: grey, RGB, RGBA


def image_array(image: Any, where: str) -> np.ndarray:
    """``image`` (a numpy array or a CPU/GPU tensor, H x W or H x W x 1/3/4, channels last, as
    MMEngine's visualizer takes it) as a contiguous uint8 array."""
    if hasattr(image, "detach"):
        image = image.detach().cpu().numpy()
    array = np.asarray(image)
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in _COLOUR_TYPES):
        chw = array.ndim == 3 and array.shape[0] in _COLOUR_TYPES
        hint = " (C x H x W, as TensorBoard takes it: pass image.permute(1, 2, 0))" if chw else ""
        raise ValueError(
            f"{where}: an image is H x W or H x W x C with C in 1, 3 (RGB) or 4 (RGBA), "
            f"channels last; got shape {array.shape}{hint}"
        )
    if array.dtype != np.uint8:
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{where}: an image holds numbers, got dtype {array.dtype}")
        if array.dtype.kind == "f" and array.size and float(np.nanmax(array)) <= 1.0:
            array = array * 255.0  # a float image in [0, 1]
        array = np.clip(np.nan_to_num(array), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array)


def write_png(path: str | os.PathLike, image: np.ndarray) -> None:
    """Write a uint8 H x W (x 1/3/4) array as an 8-bit PNG (atomically: a crash never leaves
    half a file)."""
    height, width = image.shape[:2]
    channels = 1 if image.ndim == 2 else image.shape[2]
    rows = image.reshape(height, width * channels)
    # every row starts with its filter type, 0 (none)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPES[channels], 0, 0, 0)
    data = b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(raw, 6)),
            _chunk(b"IEND", b""),
        ]
    )
    with atomic_write(path, binary=True) as file:
        file.write(data)


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)
