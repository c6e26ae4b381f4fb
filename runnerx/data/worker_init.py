"""Seeding of dataloader worker processes, so that random augmentations repeat run to run
and differ from epoch to epoch."""

from __future__ import annotations

import random
import warnings
from typing import Any, SupportsInt

import torch


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: SupportsInt,
    disable_subprocess_warning: bool = False,
    epoch: SupportsInt = 0,
    world_size: int = 1,
) -> None:
    """Seed Python's ``random``, numpy and torch in a dataloader worker.

    The seed is ``seed + (epoch * world_size + rank) * num_workers + worker_id``: different
    for every worker of every rank in every epoch, the same from one run to the next. In
    epoch 0 it is MMEngine's ``seed + num_workers * rank + worker_id``, and so it is for
    MMEngine's four arguments. ``build_dataloader`` binds ``seed`` and ``epoch`` to the
    sampler's (:class:`SamplerValue`), read when the workers start, so workers started anew
    each epoch draw new augmentations, and a run resumed at an epoch boundary (whose sampler
    takes the checkpoint's seed) draws what an unbroken run would.
    ``disable_subprocess_warning`` silences warnings in all workers but the first.
    """
    worker_seed = int(seed) + (int(epoch) * world_size + rank) * num_workers + worker_id
    random.seed(worker_seed)
    try:  # numpy is optional for torch, and so for runnerx
        import numpy as np
    except ImportError:
        pass
    else:
        np.random.seed(worker_seed % 2**32)  # numpy takes seeds below 2**32 only
    torch.manual_seed(worker_seed)
    if disable_subprocess_warning and worker_id != 0:
        warnings.simplefilter("ignore")


class SamplerValue:
    """A sampler's ``name`` attribute (``'epoch'``, ``'seed'``; ``default`` without one), read
    when asked.

    Bound into the workers' init function: forked workers read it from the sampler they
    inherit; for workers started by spawn or forkserver it pickles as the plain number it is
    at that moment, so the sampler (and its dataset) is not pickled with it.
    """

    def __init__(self, sampler: Any, name: str, default: int) -> None:
        self._sampler = sampler
        self._name = name
        self._default = default

    def __int__(self) -> int:
        return int(getattr(self._sampler, self._name, self._default))

    def __reduce__(self) -> tuple:
        return int, (int(self),)

    def __repr__(self) -> str:
        return f"SamplerValue({self._name}={int(self)})"
