"""CharTextDataset: byte-level language modelling on the Python standard library's source,
text that every Python installation has, so the example needs no download."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator

import torch
from torch.utils.data import Dataset

from runnerx.registry import DATASETS

_SPLITS = ("train", "val", "test")
# Installed packages live below the standard library's folder; they are not part of it.
_SKIPPED_FOLDERS = frozenset({"site-packages", "dist-packages", "__pycache__"})


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a '/'-separated glob: ``*`` and ``?`` within a name, ``**`` any folders."""
    regex = ""
    for part in pattern.split("/"):
        if part == "**":
            regex += "(?:[^/]+/)*"
        else:
            regex += re.escape(part).replace(r"\*", "[^/]*").replace(r"\?", "[^/]") + "/"
    return re.compile(regex.removesuffix("/"))


def _matching_files(root: str, pattern: str) -> Iterator[str]:
    """Files below ``root`` whose relative path matches ``pattern``, in a stable order
    (folder by folder, names sorted), read lazily so that a small ``max_chars`` is fast."""
    matches = _glob_regex(pattern).fullmatch
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name not in _SKIPPED_FOLDERS)
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        for name in sorted(names):
            if matches(prefix + name):
                yield os.path.join(folder, name)


@functools.lru_cache(maxsize=4)
def load_text_bytes(root: str, pattern: str, max_chars: int) -> torch.Tensor:
    """The first ``max_chars`` bytes of the matching files, concatenated (``uint8``);
    cached per process."""
    chunks, total = [], 0
    for path in _matching_files(root, pattern):
        with open(path, "rb") as file:
            chunks.append(file.read(max_chars - total))
        total += len(chunks[-1])
        if total >= max_chars:
            break
    if total == 0:
        raise FileNotFoundError(f"CharTextDataset found no text in files {pattern!r} below {root}")
    return torch.frombuffer(bytearray(b"".join(chunks)), dtype=torch.uint8)


@DATASETS.register_module(replaceable=True)
class CharTextDataset(Dataset):
    """Byte-level text windows for next-byte prediction, read from Python's own source files.

    The files matching ``pattern`` below ``root`` (default: the standard library's folder,
    without installed packages) are concatenated as UTF-8 bytes up to ``max_chars``; the
    first ``1 - val_ratio`` of the bytes are 'train', the rest 'val' ('test' is the same).
    Item ``i`` is the ``i``-th non-overlapping window:
    ``dict(inputs=int64 Tensor[block_size], data_samples=the next bytes, shifted by one)``.
    The vocabulary is the 256 byte values (``vocab_size``)::

        train_dataloader = dict(
            dataset=dict(type='CharTextDataset', split='train', block_size=128),
            sampler=dict(type='DefaultSampler', shuffle=True),
            collate_fn=dict(type='default_collate'),
            batch_size=32)
    """

    vocab_size = 256

    def __init__(
        self,
        split: str = "train",
        block_size: int = 128,
        max_chars: int = 2_000_000,
        val_ratio: float = 0.1,
        root: str | os.PathLike | None = None,
        pattern: str = "**/*.py",
    ) -> None:
        if split not in _SPLITS:
            raise ValueError(f"CharTextDataset split must be one of {_SPLITS}, but got {split!r}")
        for name, value in (("block_size", block_size), ("max_chars", max_chars)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"CharTextDataset {name} must be a positive int, got {value!r}")
        if not 0.0 <= val_ratio < 1.0:
            raise ValueError(f"CharTextDataset val_ratio must be in [0, 1), but got {val_ratio!r}")
        self.split = split
        self.block_size = block_size
        root = os.path.abspath(root if root is not None else os.path.dirname(os.__file__))
        text = load_text_bytes(root, pattern, max_chars)
        num_train = int(len(text) * (1.0 - val_ratio))
        self.data = text[:num_train] if split == "train" else text[num_train:]
        self.num_windows = max(0, (len(self.data) - 1) // block_size)

    def __len__(self) -> int:
        return self.num_windows

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        if index < 0:
            index += self.num_windows
        if not 0 <= index < self.num_windows:
            raise IndexError(f"window {index} is out of range for {self.num_windows} windows")
        start = index * self.block_size
        window = self.data[start : start + self.block_size + 1].long()
        return dict(inputs=window[:-1], data_samples=window[1:])
