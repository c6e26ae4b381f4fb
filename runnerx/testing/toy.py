"""The tiny model, dataset and metric that :class:`~runnerx.testing.RunnerTestCase`'s configs
name (``ToyModel``, ``ToyDataset``, ``ToyMetric``, as in MMEngine): enough for a Runner to
train, validate and test in a fraction of a second on the CPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.utils.data import Dataset

from runnerx.evaluator import BaseMetric
from runnerx.model import BaseModel
from runnerx.registry import DATASETS, METRICS, MODELS


class ToyModel(BaseModel):
    """Two linear layers, 2 -> 2 -> 1. ``mode='loss'`` gives ``dict(loss=(targets -
    outputs).sum())``; ``'tensor'`` and ``'predict'`` give the outputs."""

    def __init__(self, data_preprocessor: dict | nn.Module | None = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear1 = nn.Linear(2, 2)
        self.linear2 = nn.Linear(2, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        """The outputs, or the loss for ``mode='loss'``; lists of samples are stacked."""
        if isinstance(inputs, list):
            inputs = torch.stack(inputs)
        if isinstance(data_samples, list):
            data_samples = torch.stack(data_samples)
        outputs = self.linear2(self.linear1(inputs))
        if mode == "loss":
            return dict(loss=(data_samples - outputs).sum())
        if mode in ("tensor", "predict"):
            return outputs
        raise ValueError(f"ToyModel: mode must be 'loss', 'tensor' or 'predict', got {mode!r}")


class ToyDataset(Dataset):
    """12 random 2-d inputs (drawn once per process), each with the target 1."""

    METAINFO: dict = dict()
    data = torch.randn(12, 2)
    label = torch.ones(12)

    @property
    def metainfo(self) -> dict:
        """The dataset's meta information (empty)."""
        return self.METAINFO

    def __len__(self) -> int:
        return self.data.size(0)

    def __getitem__(self, index: int) -> dict:
        return dict(inputs=self.data[index], data_samples=self.label[index])


class ToyMetric(BaseMetric):
    """Reports ``acc=1`` whatever the predictions."""

    def __init__(self, collect_device: str = "cpu", dummy_metrics: Any = None) -> None:
        super().__init__(collect_device=collect_device)
        self.dummy_metrics = dummy_metrics

    def process(self, data_batch: Any, data_samples: Sequence) -> None:
        """Record one result per batch."""
        self.results.append({"acc": 1})

    def compute_metrics(self, results: list) -> dict:
        """``dict(acc=1)``."""
        return dict(acc=1)


#: registry -> the toy component registered there under its class name
TOY_COMPONENTS = ((MODELS, ToyModel), (DATASETS, ToyDataset), (METRICS, ToyMetric))


def register_toy_components() -> None:
    """Register the toy components in the root registries (replacing what has the name)."""
    for registry, component in TOY_COMPONENTS:
        registry.register_module(module=component, force=True)


def unregister_toy_components() -> None:
    """Remove the toy components' names from the root registries."""
    for registry, component in TOY_COMPONENTS:
        registry.module_dict.pop(component.__name__, None)
