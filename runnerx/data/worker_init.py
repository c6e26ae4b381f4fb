"""Seeding of dataloader worker processes, so that random augmentations repeat run to run."""

from __future__ import annotations

import random
import warnings

import torch


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: int,
    disable_subprocess_warning: bool = False,
) -> None:
    """Seed Python's ``random``, numpy and torch in a dataloader worker.

    The seed is ``num_workers * rank + worker_id + seed``: different for every worker of
    every rank, the same from one run to the next. ``build_dataloader`` sets this up when
    it is given a seed (MMEngine's scheme and signature). ``disable_subprocess_warning``
    silences warnings in all workers but the first.
    """
    worker_seed = num_workers * rank + worker_id + seed
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
