"""Synchronised BatchNorm: statistics over the whole global batch instead of each rank's."""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch import nn

from runnerx.dist import get_world_size

from .options import check_choice

_logger = logging.getLogger(__name__)


def convert_sync_batchnorm(module: nn.Module, implementation: Any = "torch") -> nn.Module:
    """``module`` with every BatchNorm layer replaced by ``torch.nn.SyncBatchNorm`` (MMEngine's
    function).

    ``implementation`` is MMEngine's ``cfg.sync_bn`` value (``'torch'``) or ``True``;
    ``'mmcv'`` (a CUDA extension runnerx does not use) is refused.
    """
    check_choice(implementation, (True, "torch"), "sync_bn")
    return nn.SyncBatchNorm.convert_sync_batchnorm(module)


def sync_batchnorm_for_run(model: nn.Module, sync_bn: Any, device: torch.device) -> nn.Module:
    """What ``sync_bn`` means for this run: SyncBatchNorm when several processes share the
    batch (on GPUs: SyncBatchNorm cannot synchronise CPU tensors), the model as it is when
    ``sync_bn`` is unset. A single process has no one to synchronise with: the model's own
    SyncBatchNorm layers become plain BatchNorm, as MMEngine's Runner does, and ``sync_bn``
    changes nothing."""
    if sync_bn:
        check_choice(sync_bn, (True, "torch"), "sync_bn")
    if get_world_size() == 1:
        if any(isinstance(layer, nn.SyncBatchNorm) for layer in model.modules()):
            _logger.info("one process: the model's SyncBatchNorm layers run as BatchNorm")
            revert_sync_batchnorm(model)
        return model
    if not sync_bn:
        return model
    if device.type == "cpu":
        raise ValueError(
            "sync_bn is set, but SyncBatchNorm synchronises statistics only between GPUs and "
            "this distributed run is on the CPU; remove sync_bn (or strategy.sync_bn) from the "
            "config for CPU runs"
        )
    return convert_sync_batchnorm(model, sync_bn)


class BatchNormAnyDim(nn.modules.batchnorm._BatchNorm):
    """BatchNorm that takes inputs of any rank, as SyncBatchNorm does (what a reverted
    SyncBatchNorm layer becomes)."""

    def _check_input_dim(self, input: Any) -> None:
        """Any input with a channel dimension is fine."""


def revert_sync_batchnorm(module: nn.Module) -> nn.Module:
    """``module`` with every SyncBatchNorm layer made a plain BatchNorm again, in place (the
    same parameters and statistics; MMEngine's function), e.g. to run a model trained with
    ``sync_bn`` in one process on the CPU."""
    for layer in module.modules():
        if isinstance(layer, nn.SyncBatchNorm):
            layer.__class__ = BatchNormAnyDim
    return module
