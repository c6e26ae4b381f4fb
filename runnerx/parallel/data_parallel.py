"""DataParallel (one process, several GPUs) with the model steps."""

from __future__ import annotations

import logging

import torch
from torch import nn

from runnerx.dist import get_world_size
from runnerx.logging import print_log
from runnerx.registry import MODEL_WRAPPERS

from .steps import WrappedModelSteps


@MODEL_WRAPPERS.register_module()
class DataParallelModel(WrappedModelSteps, nn.DataParallel):
    """``torch.nn.DataParallel`` with ``train_step`` / ``val_step`` / ``test_step``: the
    training forward pass splits the batch over the visible GPUs; validation and test run on
    the first. Batch tensors are split along their first dimension."""


def data_parallel(module: nn.Module, device_ids: list[int] | None = None) -> nn.Module:
    """``strategy='dp'``: DataParallel over ``device_ids`` (default: every visible GPU).

    DistributedDataParallel (``torchrun --nproc-per-node N tools/train.py ... --launcher
    pytorch``) is faster: one process per GPU instead of one Python thread per GPU. With
    fewer than two GPUs there is nothing to split over, and the model runs as it is.
    """
    if get_world_size() > 1:
        raise ValueError(
            "strategy='dp' runs one process over several GPUs, but this is a distributed run of "
            f"{get_world_size()} processes; use strategy='ddp' (the default when distributed)"
        )
    devices = list(range(torch.cuda.device_count())) if device_ids is None else list(device_ids)
    if len(devices) < 2:
        print_log(
            f"strategy='dp' needs at least two GPUs, but {len(devices)} are available: the "
            "model runs on one device without DataParallel",
            logger="current",
            level=logging.WARNING,
        )
        return module
    print_log(
        "strategy='dp' (DataParallel) is slower than DDP; prefer torchrun --nproc-per-node "
        f"{len(devices)} tools/train.py CONFIG --launcher pytorch",
        logger="current",
        level=logging.WARNING,
    )
    return DataParallelModel(module, device_ids=devices)
