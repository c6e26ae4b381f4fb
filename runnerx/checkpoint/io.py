"""Writing checkpoints so a crash cannot tear them, and reading them safely.

A checkpoint is written to a temporary file in the same folder, flushed and fsynced, then
renamed over the target: readers (and a crash) see the old file or the complete new one.
Reading uses ``torch.load(weights_only=True)``, which runs no pickled code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

import torch

from runnerx.fileio import atomic_write


def save_checkpoint(checkpoint: dict, path: str | os.PathLike) -> None:
    """Write ``checkpoint`` to ``path`` atomically."""
    with atomic_write(path, binary=True) as file:
        torch.save(checkpoint, file)


def load_checkpoint(path: str | os.PathLike, map_location: Any = "cpu") -> dict:
    """Read a checkpoint without running any pickled code (``weights_only=True``)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    return torch.load(path, map_location=map_location, weights_only=True)


def load_model_weights(
    model: torch.nn.Module,
    checkpoint: dict,
    strict: bool = False,
    revise_keys: Iterable[tuple[str, str]] = ((r"^module\.", ""),),
) -> tuple[list[str], list[str]]:
    """Load the weights of ``checkpoint`` (its ``state_dict``, or itself) into ``model``.

    ``revise_keys`` rewrites checkpoint keys with ``re.sub(pattern, replacement, key)`` first.
    Returns the (missing, unexpected) keys; with ``strict`` any of them is an error.
    """
    state = checkpoint.get("state_dict", checkpoint)
    for pattern, replacement in revise_keys:
        state = {re.sub(pattern, replacement, key): value for key, value in state.items()}
    result = model.load_state_dict(state, strict=strict)
    return list(result.missing_keys), list(result.unexpected_keys)
