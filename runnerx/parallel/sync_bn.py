"""Synchronised BatchNorm: statistics over the whole global batch instead of each rank's."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .options import check_choice


def convert_sync_batchnorm(model: nn.Module, sync_bn: Any = "torch") -> nn.Module:
    """``model`` with every BatchNorm layer replaced by ``torch.nn.SyncBatchNorm``.

    ``sync_bn`` is MMEngine's ``cfg.sync_bn`` value (``'torch'``) or ``True``; ``'mmcv'`` (a
    CUDA extension runnerx does not use) is refused. SyncBatchNorm synchronises only CUDA
    tensors, so ``prepare_model`` converts only in distributed CUDA runs.
    """
    check_choice(sync_bn, (True, "torch"), "sync_bn")
    return nn.SyncBatchNorm.convert_sync_batchnorm(model)


def check_sync_bn_device(device: torch.device) -> None:
    """Refuse SyncBatchNorm across processes on a device it cannot synchronise on."""
    if device.type == "cpu":
        raise ValueError(
            "sync_bn is set, but SyncBatchNorm synchronises statistics only between GPUs and "
            "this distributed run is on CPU; remove sync_bn (or strategy.sync_bn) from the "
            "config for CPU runs"
        )
