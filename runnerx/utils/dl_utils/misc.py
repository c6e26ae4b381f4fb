"""Model and tensor helpers: ``is_norm``, ``has_batch_norm``, ``tensor2imgs`` and
``mmcv_full_available``."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.instancenorm import _InstanceNorm

from runnerx.utils.errors import ValueAssertionError
from runnerx.utils.misc import is_tuple_of

_NORM_TYPES = (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)


def is_norm(layer: nn.Module, exclude: type | tuple[type, ...] | None = None) -> bool:
    """Whether ``layer`` is a normalization layer (batch, instance, group or layer norm) and
    not one of the ``exclude`` types.

    .. code-block:: python

        decay_free = [m for m in model.modules() if is_norm(m, exclude=nn.LayerNorm)]
    """
    if exclude is not None:
        exclude = exclude if isinstance(exclude, tuple) else (exclude,)
        if not is_tuple_of(exclude, type):
            raise TypeError(
                f"is_norm: exclude must be None, a type or a tuple of types, got {exclude!r}"
            )
        if isinstance(layer, exclude):
            return False
    return isinstance(layer, _NORM_TYPES)


def has_batch_norm(model: nn.Module) -> bool:
    """Whether ``model`` is or holds a batch norm layer (``BatchNorm1d/2d/3d``,
    ``SyncBatchNorm``, ...)."""
    return any(isinstance(module, _BatchNorm) for module in model.modules())


def tensor2imgs(
    tensor: torch.Tensor,
    mean: Sequence[float] | None = None,
    std: Sequence[float] | None = None,
    to_bgr: bool = True,
) -> list[np.ndarray]:
    """A batch ``(N, C, H, W)`` of normalized images (C is 3, RGB, or 1) as ``N`` arrays
    ``(H, W, C)``: multiplied by ``std`` and shifted by ``mean`` (per channel; default: left
    as they are), BGR when ``to_bgr`` (3 channels only)."""
    if not torch.is_tensor(tensor) or tensor.ndim != 4:
        raise ValueAssertionError(
            f"tensor2imgs: expected a 4-dim (N, C, H, W) tensor, got {tensor!r}"
        )
    channels = tensor.size(1)
    if channels not in (1, 3):
        raise ValueAssertionError(f"tensor2imgs: images must have 1 or 3 channels, got {channels}")
    mean = (0,) * channels if mean is None else tuple(mean)
    std = (1,) * channels if std is None else tuple(std)
    if not len(mean) == len(std) == channels:
        raise ValueAssertionError(
            f"tensor2imgs: mean and std need {channels} values each, got {mean} and {std}"
        )
    if to_bgr and channels == 1:
        raise ValueAssertionError("tensor2imgs: to_bgr=True needs 3-channel images")
    images = tensor.permute(0, 2, 3, 1) * tensor.new_tensor(std) + tensor.new_tensor(mean)
    images = images.detach().cpu().numpy()
    if to_bgr:
        images = images[..., ::-1]
    return [np.ascontiguousarray(image) for image in images]


def mmcv_full_available() -> bool:
    """Whether mmcv with its compiled ops (``mmcv._ext``) is installed."""
    if importlib.util.find_spec("mmcv") is None:
        return False
    return importlib.util.find_spec("mmcv._ext") is not None
