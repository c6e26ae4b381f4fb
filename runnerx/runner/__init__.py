"""The Runner and its loops (the `locations` entry of the LOOPS and RUNNERS registries)."""

from .loops import (
    BaseLoop,
    EpochBasedTrainLoop,
    IterBasedTrainLoop,
    TestLoop,
    ValLoop,
    build_eval_loop,
    build_train_loop,
)
from .runner import Runner

__all__ = [
    "BaseLoop",
    "EpochBasedTrainLoop",
    "IterBasedTrainLoop",
    "Runner",
    "TestLoop",
    "ValLoop",
    "build_eval_loop",
    "build_train_loop",
]
