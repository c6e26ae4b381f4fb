"""BaseDataPreprocessor: moves a batch to the model's device, the first step of every model step.

A model's ``data_preprocessor`` is a module of the model, so it follows the model through
``.to()`` / ``.cuda()``; it knows its device from an empty buffer, which costs nothing to keep.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.registry import MODELS


@MODELS.register_module()
class BaseDataPreprocessor(nn.Module):
    """Moves every tensor of a batch (in dicts, lists, tuples, and objects with a ``.to``
    method) to the device of the model it belongs to; data already there is left untouched.

    ``non_blocking=True`` copies asynchronously; pinned tensors are always copied that way.
    Subclasses override ``forward(data, training)`` for batch-level work (normalising,
    batch augmentation) and call ``self.cast_data(data)`` first::

        model = dict(type='MyNet', data_preprocessor=dict(type='BaseDataPreprocessor'))
    """

    def __init__(self, non_blocking: bool = False) -> None:
        super().__init__()
        self._non_blocking = non_blocking
        # where the model lives: moves with the model, not saved in checkpoints
        self.register_buffer("_device_marker", torch.empty(0), persistent=False)

    @property
    def device(self) -> torch.device:
        """The device batches are moved to."""
        return self._buffers["_device_marker"].device

    def forward(self, data: Any, training: bool = False) -> Any:
        """Return ``data`` on the model's device (``training`` is for subclasses)."""
        return self.cast_data(data)

    def cast_data(self, data: Any) -> Any:
        """``data`` with every tensor on ``self.device``; the same objects where nothing moved."""
        device = self._buffers["_device_marker"].device  # not via nn.Module.__getattr__
        # The usual case, a dict (or list, tuple) of tensors and plain values already there,
        # is checked here (this runs every iteration: no further calls); the rest goes to _move.
        kind = type(data)
        if kind is dict or kind is list or kind is tuple:
            for value in data.values() if kind is dict else data:
                if type(value) is torch.Tensor:
                    if value.device != device:
                        break
                elif not (value is None or isinstance(value, (int, float, str, bytes))):
                    break
            else:
                return data
        return self._move(data, device)

    def _move(self, data: Any, device: torch.device) -> Any:
        if isinstance(data, torch.Tensor):
            if data.device == device:
                return data
            non_blocking = self._non_blocking or data.is_pinned()
            return data.to(device, non_blocking=non_blocking)
        if isinstance(data, (str, bytes)) or data is None:
            return data
        if isinstance(data, Mapping):
            moved = {key: self._move(value, device) for key, value in data.items()}
            if all(moved[key] is value for key, value in data.items()):
                return data
            return moved
        if isinstance(data, (list, tuple)):
            moved = [self._move(item, device) for item in data]
            if all(new is old for new, old in zip(moved, data)):
                return data
            if hasattr(data, "_fields"):  # a namedtuple
                return type(data)(*moved)
            return type(data)(moved)
        if callable(getattr(data, "to", None)):  # e.g. MMEngine's data samples
            if getattr(data, "device", None) == device:
                return data
            if self._non_blocking:
                return data.to(device, non_blocking=True)
            return data.to(device)
        return data
