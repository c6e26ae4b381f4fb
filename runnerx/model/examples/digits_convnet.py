"""DigitsConvNet: a small CNN classifier for 8x8 gray digit images (scikit-learn's digits)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from runnerx.model.base_model import BaseModel
from runnerx.registry import MODELS


@MODELS.register_module(replaceable=True)
class DigitsConvNet(BaseModel):
    """Two 3x3 conv + ReLU layers, a 2x2 max-pool and a linear classifier for ``(1, 8, 8)``
    inputs (flat 64-value rows are reshaped). ``data_samples`` are the labels, ``Tensor[B]``
    (or a list of ints/0-dim tensors)::

        model = dict(type='DigitsConvNet', channels=(16, 32), num_classes=10)

    ``'tensor'`` gives logits; ``'loss'`` gives ``dict(loss=cross_entropy)``; ``'predict'``
    gives ``dict(pred_score=softmax Tensor[B, C], gt_label=Tensor[B])`` (without ``gt_label``
    when no labels are given, as in inference).
    """

    def __init__(
        self,
        channels: Sequence[int] = (16, 32),
        num_classes: int = 10,
        data_preprocessor: Mapping | nn.Module | None = None,
        init_cfg: Mapping | list[Mapping] | None = None,
    ) -> None:
        super().__init__(data_preprocessor, init_cfg)
        first, second = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, first, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(first, second, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(second * 4 * 4, num_classes)

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        """Logits (``'tensor'``), ``dict(loss=...)`` or ``dict(pred_score, gt_label)``."""
        logits = self.classifier(self.features(inputs.reshape(-1, 1, 8, 8)))
        if mode == "tensor":
            return logits
        if mode == "predict" and data_samples is None:  # inference: no labels to give back
            return dict(pred_score=logits.softmax(dim=1))
        labels = as_label_tensor(data_samples, logits.device)
        if mode == "loss":
            return dict(loss=F.cross_entropy(logits, labels))
        if mode == "predict":
            return dict(pred_score=logits.softmax(dim=1), gt_label=labels)
        raise ValueError(f"mode must be 'tensor', 'loss' or 'predict', but got {mode!r}")


def as_label_tensor(data_samples: Any, device: torch.device) -> torch.Tensor:
    """Class labels as a ``Tensor[B]``: a tensor is kept, a list of ints or 0-dim tensors (as
    ``pseudo_collate`` gives) is turned into one."""
    if isinstance(data_samples, torch.Tensor):
        return data_samples
    if isinstance(data_samples, (list, tuple)) and data_samples:
        if isinstance(data_samples[0], torch.Tensor):
            return torch.stack(list(data_samples)).to(device)
        return torch.tensor(data_samples, device=device)
    raise TypeError(
        "data_samples must be the class labels (Tensor[B] or a list of ints), "
        f"but got {type(data_samples).__name__}"
    )
