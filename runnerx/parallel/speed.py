"""Speed switches of ``env_cfg`` that concern the model's compute.

.. code-block:: python

    env_cfg = dict(
        matmul_precision='high',   # float32 matmuls on TF32 tensor cores (Ampere and newer)
        cudnn_benchmark=True,      # let cuDNN pick the fastest convolution for fixed shapes
        channels_last=True,        # NHWC memory format for conv nets
    )
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from .options import check_choice

MATMUL_PRECISIONS = ("highest", "high", "medium")


def apply_speed_switches(env_cfg: Mapping[str, Any] | None) -> None:
    """Set torch's float32 matmul precision and cuDNN benchmarking as ``env_cfg`` asks
    (process-wide; keys it does not know are left to the Runner's environment set-up)."""
    env_cfg = env_cfg or {}
    precision = env_cfg.get("matmul_precision")
    if precision is not None:
        check_choice(precision, MATMUL_PRECISIONS, "env_cfg.matmul_precision")
        torch.set_float32_matmul_precision(precision)
    if env_cfg.get("cudnn_benchmark"):
        torch.backends.cudnn.benchmark = True


def to_channels_last(model: nn.Module) -> nn.Module:
    """Store ``model``'s 4-D weights as NHWC and ask its data preprocessor (when it has a
    ``channels_last`` attribute) to give NHWC image batches too."""
    model.to(memory_format=torch.channels_last)
    preprocessor = getattr(model, "data_preprocessor", None)
    if preprocessor is not None and hasattr(preprocessor, "channels_last"):
        preprocessor.channels_last = True
    return model
