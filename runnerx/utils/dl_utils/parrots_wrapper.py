"""The torch classes MMEngine's ``mmengine.utils.dl_utils.parrots_wrapper`` names, so that
code written for MMEngine (backbones that ``isinstance``-check norm layers, say) imports
them from the same place::

    from runnerx.utils.dl_utils.parrots_wrapper import _BatchNorm

    frozen = [m for m in model.modules() if isinstance(m, _BatchNorm)]

MMEngine picks them between PyTorch and parrots; runnerx runs on PyTorch only, so each one is
torch's own class (``SyncBatchNorm`` is ``torch.nn.SyncBatchNorm``, ``PoolDataLoader`` is
``DataLoader``).
"""

from __future__ import annotations

import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd, _ConvTransposeMixin
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd
from torch.utils.data import DataLoader

from .torch_ops import TORCH_VERSION

PoolDataLoader = DataLoader
SyncBatchNorm = SyncBatchNorm_ = torch.nn.SyncBatchNorm

__all__ = [
    "TORCH_VERSION",
    "DataLoader",
    "PoolDataLoader",
    "SyncBatchNorm",
    "SyncBatchNorm_",
    "_AdaptiveAvgPoolNd",
    "_AdaptiveMaxPoolNd",
    "_AvgPoolNd",
    "_BatchNorm",
    "_ConvNd",
    "_ConvTransposeMixin",
    "_InstanceNorm",
    "_MaxPoolNd",
    "get_build_config",
    "is_rocm_pytorch",
]


def is_rocm_pytorch() -> bool:
    """Whether this torch was built for AMD GPUs (ROCm/HIP)."""
    return getattr(torch.version, "hip", None) is not None


def get_build_config() -> str:
    """torch's build configuration (compiler, CUDA, BLAS, flags), as ``torch.__config__``
    shows it."""
    return torch.__config__.show()
