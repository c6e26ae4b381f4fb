"""Speed switches of ``env_cfg`` that concern the model's compute.

.. code-block:: python

    env_cfg = dict(
        matmul_precision='high',   # float32 matmuls on TF32 tensor cores (Ampere and newer)
        cudnn_benchmark=True,      # let cuDNN pick the fastest convolution for fixed shapes
        channels_last=True,        # NHWC memory format for conv nets
    )
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.logging import print_log

from .options import check_choice

MATMUL_PRECISIONS = ("highest", "high", "medium")


def apply_speed_switches(env_cfg: Mapping[str, Any] | None) -> None:
    """Set torch's float32 matmul precision and cuDNN benchmarking as ``env_cfg`` asks
    (process-wide; keys it does not know are left to the Runner's environment set-up).
    Benchmarking stays off while ``torch.backends.cudnn.deterministic`` is set
    (``randomness.deterministic=True``, which warned when it turned it off), as in MMEngine."""
    env_cfg = env_cfg or {}
    precision = env_cfg.get("matmul_precision")
    if precision is not None:
        check_choice(precision, MATMUL_PRECISIONS, "env_cfg.matmul_precision")
        torch.set_float32_matmul_precision(precision)
    if env_cfg.get("cudnn_benchmark") and not torch.backends.cudnn.deterministic:
        torch.backends.cudnn.benchmark = True


def to_channels_last(model: nn.Module) -> nn.Module:
    """Store ``model``'s 4-D weights as NHWC and ask its data preprocessor (when it has a
    ``channels_last`` attribute) to give NHWC image batches too; a model with neither gets a
    warning that the switch changes nothing for it."""
    model.to(memory_format=torch.channels_last)
    preprocessor = getattr(model, "data_preprocessor", None)
    if preprocessor is not None and hasattr(preprocessor, "channels_last"):
        preprocessor.channels_last = True
    elif not any(t.dim() == 4 for t in itertools.chain(model.parameters(), model.buffers())):
        print_log(
            f"env_cfg.channels_last=True has no effect on this model ({type(model).__name__}): "
            "it has no 4-D weights (convolutions) to store as NHWC, and its data preprocessor "
            "has no channels_last attribute; drop env_cfg.channels_last",
            logger="current",
            level=logging.WARNING,
        )
    return model
