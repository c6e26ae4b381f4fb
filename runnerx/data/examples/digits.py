"""DigitsDataset: scikit-learn's 1,797 handwritten 8x8 digits, a classification task that
trains in seconds on a CPU."""

from __future__ import annotations

import functools
import random
from typing import Any

import torch
from torch.utils.data import Dataset

from runnerx.registry import DATASETS

NUM_DIGITS = 1797
_SPLITS = ("train", "val", "test")


@functools.lru_cache(maxsize=1)
def load_digits_tensors() -> tuple[torch.Tensor, torch.Tensor]:
    """All digits once per process: images ``float32 [1797, 1, 8, 8]`` in [0, 1] and
    labels ``int64 [1797]``."""
    state = random.getstate()  # importing sklearn imports rich, which draws from `random`
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:
        raise ImportError(
            "DigitsDataset reads the digits bundled with scikit-learn, which is not installed: "
            "pip install scikit-learn (or pip install 'runnerx[examples]')"
        ) from err
    finally:  # so a seeded run draws the same numbers whether or not sklearn was imported
        random.setstate(state)
    digits = load_digits()
    images = torch.as_tensor(digits.images, dtype=torch.float32).div_(16.0).unsqueeze(1)
    labels = torch.as_tensor(digits.target, dtype=torch.int64)
    return images, labels


@DATASETS.register_module(replaceable=True)
class DigitsDataset(Dataset):
    """Handwritten digits 0-9 as ``dict(inputs=Tensor[1, 8, 8], data_samples=label)``.

    The images are shuffled once with ``seed`` and split: the last ``val_ratio`` of them
    form 'val' ('test' is the same split), the rest 'train', so the splits are disjoint and
    the same in every run. Needs scikit-learn (``pip install 'runnerx[examples]'``)::

        train_dataloader = dict(
            dataset=dict(type='DigitsDataset', split='train'),
            sampler=dict(type='DefaultSampler', shuffle=True),
            collate_fn=dict(type='default_collate'),
            batch_size=64)
    """

    def __init__(self, split: str = "train", val_ratio: float = 0.2, seed: int = 0) -> None:
        if split not in _SPLITS:
            raise ValueError(f"DigitsDataset split must be one of {_SPLITS}, but got {split!r}")
        if not 0.0 < val_ratio < 1.0:
            raise ValueError(f"DigitsDataset val_ratio must be in (0, 1), but got {val_ratio!r}")
        self.split = split
        images, labels = load_digits_tensors()
        generator = torch.Generator().manual_seed(seed)
        order = torch.randperm(len(labels), generator=generator)
        num_train = len(labels) - round(len(labels) * val_ratio)
        chosen = order[:num_train] if split == "train" else order[num_train:]
        self.indices = chosen  # positions in sklearn's order, for reference
        self.images = images[chosen]
        self.labels = labels[chosen]

    @property
    def metainfo(self) -> dict[str, Any]:
        """``dict(classes=('0', ..., '9'))``, as MMEngine datasets describe their classes."""
        return dict(classes=tuple("0123456789"))

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return dict(inputs=self.images[index], data_samples=self.labels[index])
