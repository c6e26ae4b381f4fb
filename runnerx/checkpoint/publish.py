"""Publishing a checkpoint: keep what inference needs, name the file after its contents.

A training checkpoint carries the optimizer, schedulers, logged history, RNG states and more;
a published one keeps the weights (``state_dict``, dtype unchanged) and a small ``meta``, and
its name ends with the first 8 hex digits of the file's sha256 (``digits-1a2b3c4d.pth``), as
OpenMMLab's model zoo names files, so a download can be checked with ``sha256sum``.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterable, Mapping

import torch

from runnerx.fileio import atomic_write

#: The top-level entries a published checkpoint keeps.
PUBLISHED_KEYS = ("meta", "state_dict")
#: The ``meta`` entries a published checkpoint keeps: where it came from, not how to resume.
PUBLISHED_META_KEYS = (
    "epoch",
    "iter",
    "experiment_name",
    "time",
    "dataset_meta",
    "runnerx_version",
    "mmengine_version",
    "torch_version",
)


def strip_training_state(
    checkpoint: Mapping,
    keys: Iterable[str] = PUBLISHED_KEYS,
    meta_keys: Iterable[str] | None = PUBLISHED_META_KEYS,
) -> dict:
    """The entries ``keys`` of ``checkpoint`` (those it has), with ``meta`` cut to
    ``meta_keys`` (all of it for None)."""
    published = {key: checkpoint[key] for key in keys if key in checkpoint}
    meta = published.get("meta")
    if meta_keys is not None and isinstance(meta, Mapping):
        published["meta"] = {key: meta[key] for key in meta_keys if key in meta}
    return published


def write_published(checkpoint: dict, out_path: str | os.PathLike) -> str:
    """Write ``checkpoint`` to ``out_path`` with ``-<sha256[:8]>`` of the file's bytes added
    before the extension (``.pth`` if it has none); return the final path."""
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    data = buffer.getvalue()
    stem, extension = os.path.splitext(os.fspath(out_path))
    final_path = f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}{extension or '.pth'}"
    with atomic_write(final_path, binary=True) as file:
        file.write(data)
    return final_path
