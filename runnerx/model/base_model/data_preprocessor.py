"""The data preprocessors, at MMEngine's path ``mmengine.model.base_model.data_preprocessor``:
BaseDataPreprocessor moves a batch to the model's device, the first step of every model step;
ImgDataPreprocessor also stacks, channel-swaps, normalises and pads a batch of images.

A model's ``data_preprocessor`` is a module of the model, so it follows the model through
``.to()`` / ``.cuda()``; it knows its device from an empty buffer, which costs nothing to keep.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from runnerx.registry import MODELS
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

__all__ = ["BaseDataPreprocessor", "ImgDataPreprocessor", "stack_batch"]


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


@MODELS.register_module()
class ImgDataPreprocessor(BaseDataPreprocessor):
    """Image batches, as MMEngine's ImgDataPreprocessor: ``inputs`` is a list of ``(C, H, W)``
    tensors (stacked, padded to the largest) or an ``(N, C, H, W)`` tensor. On the model's
    device they are converted to float, channel-swapped (``bgr_to_rgb``/``rgb_to_bgr``),
    normalised with ``mean``/``std`` (1 or 3 values; after the swap, so in the output channel
    order) and padded at the bottom and right to a multiple of ``pad_size_divisor``::

        data_preprocessor = dict(type='ImgDataPreprocessor', mean=[123.675, 116.28, 103.53],
                                 std=[58.395, 57.12, 57.375], bgr_to_rgb=True)
    """

    def __init__(
        self,
        mean: Sequence[float] | None = None,
        std: Sequence[float] | None = None,
        pad_size_divisor: int = 1,
        pad_value: float = 0,
        bgr_to_rgb: bool = False,
        rgb_to_bgr: bool = False,
        non_blocking: bool = False,
    ) -> None:
        super().__init__(non_blocking)
        if bgr_to_rgb and rgb_to_bgr:
            raise ValueAssertionError("bgr_to_rgb and rgb_to_bgr cannot both be True")
        if (mean is None) != (std is None):
            raise ValueAssertionError("mean and std must be given together (or both left None)")
        self._enable_normalize = mean is not None
        if mean is not None:
            for key, values in (("mean", mean), ("std", std)):
                if len(values) not in (1, 3):
                    raise ValueAssertionError(
                        f"{key} must have 1 value (gray or shared) or 3 (one per channel), "
                        f"but got {len(values)}: {list(values)}"
                    )
            if any(value == 0 for value in std):
                raise ValueAssertionError(
                    f"std must be non-zero in every channel (the images are divided by it), but "
                    f"got {list(std)}"
                )
            self.register_buffer("mean", torch.tensor(mean).view(-1, 1, 1), persistent=False)
            self.register_buffer("std", torch.tensor(std).view(-1, 1, 1), persistent=False)
        # the argument named when an image without 3 channels cannot be swapped
        self._channel_conversion = (
            "bgr_to_rgb" if bgr_to_rgb else "rgb_to_bgr" if rgb_to_bgr else ""
        )
        _check_divisor(pad_size_divisor)
        self.pad_size_divisor = pad_size_divisor
        self.pad_value = pad_value

    def forward(self, data: Mapping, training: bool = False) -> dict:
        """Return ``data`` with ``inputs`` a normalised, padded float batch on the device."""
        if (type(data) is not dict and not isinstance(data, Mapping)) or "inputs" not in data:
            got = f"keys {list(data)}" if isinstance(data, Mapping) else type(data).__name__
            raise TypeError(
                "ImgDataPreprocessor takes a batch dict with an 'inputs' key (and optionally "
                f"'data_samples'), e.g. dict(inputs=[image, ...]), but got {got}; a dataset "
                "sample should be a dict such as dict(inputs=image, data_samples=label)"
            )
        data = dict(self.cast_data(data))  # a new dict: the caller's batch stays as it was
        inputs = data["inputs"]
        if isinstance(inputs, torch.Tensor):
            if inputs.dim() != 4:
                raise ValueAssertionError(
                    "ImgDataPreprocessor takes an (N, C, H, W) tensor or a list of (C, H, W) "
                    f"tensors, but got a tensor of shape {tuple(inputs.shape)}"
                )
            batch = self._pad(self._normalize(inputs, channel_dim=1))
        elif isinstance(inputs, (list, tuple)) and all(
            isinstance(item, torch.Tensor) for item in inputs
        ):
            images = [self._normalize(image, channel_dim=0) for image in inputs]
            batch = stack_batch(images, self.pad_size_divisor, self.pad_value)
        else:
            raise TypeError(
                "ImgDataPreprocessor needs data['inputs'] to be a tensor or a list of tensors, "
                f"but got {type(inputs).__name__}"
            )
        data["inputs"] = batch
        data.setdefault("data_samples", None)
        return data

    def _normalize(self, images: torch.Tensor, channel_dim: int) -> torch.Tensor:
        if self._channel_conversion:
            if images.dim() != channel_dim + 3 or images.shape[channel_dim] != 3:
                found = (
                    f"{images.shape[channel_dim]} channels"
                    if images.dim() == channel_dim + 3
                    else "no channel dimension"
                )
                raise ValueAssertionError(
                    f"{self._channel_conversion}=True swaps the channels of 3-channel images, "
                    f"but got {found} (shape {tuple(images.shape)}); set "
                    f"{self._channel_conversion}=False for images that are not BGR or RGB"
                )
            images = images.flip(channel_dim)
        images = images.float()
        if self._enable_normalize:
            if self.mean.shape[0] == 3 and images.shape[channel_dim] != 3:
                raise ValueAssertionError(
                    "mean/std have 3 values, so images need 3 channels, but got shape "
                    f"{tuple(images.shape)}"
                )
            images = (images - self.mean) / self.std
        return images

    def _pad(self, batch: torch.Tensor) -> torch.Tensor:
        height, width = batch.shape[-2:]
        pad_h = _round_up(height, self.pad_size_divisor) - height
        pad_w = _round_up(width, self.pad_size_divisor) - width
        if pad_h == 0 and pad_w == 0:
            return batch
        return F.pad(batch, (0, pad_w, 0, pad_h), value=self.pad_value)


def stack_batch(
    tensor_list: list[torch.Tensor], pad_size_divisor: int = 1, pad_value: float = 0
) -> torch.Tensor:
    """Stack the tensors of ``tensor_list``, each of shape ``(C, *spatial)``, into one batch,
    padding every spatial size at the end up to the batch's largest, rounded up to a multiple
    of ``pad_size_divisor`` (MMEngine's ``stack_batch``, parameter names included)."""
    if not isinstance(tensor_list, (list, tuple)) or not all(
        isinstance(tensor, torch.Tensor) for tensor in tensor_list
    ):
        if isinstance(tensor_list, torch.Tensor):
            found = (
                f"a tensor of shape {tuple(tensor_list.shape)} (already a batch: pad it with "
                "F.pad, or pass list(batch))"
            )
        elif isinstance(tensor_list, (list, tuple)):
            found = f"a {type(tensor_list).__name__} of {[type(t).__name__ for t in tensor_list]}"
        else:
            found = type(tensor_list).__name__
        raise TypeAssertionError(f"stack_batch takes a list of tensors, but got {found}")
    if not tensor_list:
        raise ValueAssertionError("stack_batch needs at least one tensor")
    _check_divisor(pad_size_divisor)
    if len({tensor.dim() for tensor in tensor_list}) != 1:
        raise ValueAssertionError(
            f"cannot stack tensors of shapes {[tuple(t.shape) for t in tensor_list]}"
        )
    spatial_dims = range(1, tensor_list[0].dim())
    target = {
        dim: _round_up(max(tensor.shape[dim] for tensor in tensor_list), pad_size_divisor)
        for dim in spatial_dims
    }
    padded = []
    for tensor in tensor_list:
        pad = []  # F.pad lists (before, after) pairs from the last dimension backwards
        for dim in reversed(spatial_dims):
            pad += [0, target[dim] - tensor.shape[dim]]
        padded.append(F.pad(tensor, pad, value=pad_value) if any(pad) else tensor)
    return torch.stack(padded)


def _check_divisor(pad_size_divisor: Any) -> None:
    valid = isinstance(pad_size_divisor, numbers.Integral) and not isinstance(
        pad_size_divisor, bool
    )
    if not valid or pad_size_divisor < 1:
        raise ValueAssertionError(
            "pad_size_divisor must be an int >= 1 (1: no padding beyond the largest image), "
            f"but got {pad_size_divisor!r}"
        )


def _round_up(size: int, divisor: int) -> int:
    return math.ceil(size / divisor) * divisor
