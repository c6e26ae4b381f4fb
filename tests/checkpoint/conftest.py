"""A small real Runner for the checkpoint tests: a linear classifier, 8 samples in batches of 2
(4 iterations per epoch), SGD, and a metric that reports scores the test chooses."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
import torch.nn.functional as F
from torch import nn

from runnerx.evaluator import BaseMetric
from runnerx.model import BaseModel
from runnerx.runner import Runner
from tests.checkpoint.tiny_data import loader

ITERS_PER_EPOCH = 4


class TinyNet(BaseModel):
    """``linear``: 4 inputs -> 2 classes (the parameter names MMEngine's test model has too)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.linear(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        if mode == "predict":
            return {"pred_score": logits.softmax(-1), "gt_label": data_samples}
        return logits


class ScriptedMetric(BaseMetric):
    """Reports ``scores[k]`` as ``'scripted/<name>'`` at the k-th validation."""

    default_prefix = "scripted"

    def __init__(self, scores: list[float], name: str = "score") -> None:
        super().__init__()
        self.scores = list(scores)
        self.name = name
        self.calls = 0

    def process(self, data_batch, data_samples) -> None:
        self.results.extend([0] * len(data_samples["gt_label"]))

    def compute_metrics(self, results: list) -> dict:
        self.calls += 1
        return {self.name: self.scores[self.calls - 1]}


@pytest.fixture
def make_runner(tmp_path) -> Callable[..., Runner]:
    """``make_runner(checkpoint={...CheckpointHook args}, max_epochs=2, by_epoch=True,
    scores=None, **runner_kwargs)``: a Runner in ``tmp_path/work`` (validating after every
    epoch, or every ``val_interval`` iterations, when ``scores`` is given)."""

    def make(
        checkpoint: dict | None = None,
        max_epochs: int = 2,
        by_epoch: bool = True,
        scores: list[float] | None = None,
        val_interval: int = 1,
        work_dir: str | None = None,
        **kwargs,
    ) -> Runner:
        train_cfg = (
            {"by_epoch": True, "max_epochs": max_epochs, "val_interval": val_interval}
            if by_epoch
            else {
                "by_epoch": False,
                "max_iters": max_epochs * ITERS_PER_EPOCH,
                "val_interval": val_interval,
            }
        )
        validation = {}
        if scores is not None:
            validation = {
                "val_dataloader": loader(shuffle=False),
                "val_cfg": {},
                "val_evaluator": ScriptedMetric(scores),
            }
        settings = {
            "model": TinyNet(),
            "work_dir": work_dir or str(tmp_path / "work"),
            "train_dataloader": loader(shuffle=True),
            "train_cfg": train_cfg,
            "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}},
            "default_hooks": {
                "logger": {"type": "LoggerHook", "interval": 100},
                "checkpoint": {"type": "CheckpointHook", **(checkpoint or {"interval": 1})},
            },
            "experiment_name": f"checkpoint_test_{uuid.uuid4().hex}",
            "randomness": {"seed": 0},
            **validation,
            **kwargs,
        }
        return Runner(**settings)

    return make
