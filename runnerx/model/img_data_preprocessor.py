"""ImgDataPreprocessor: move, stack, channel-swap, normalise and pad a batch of images."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F

from runnerx.model.data_preprocessor import BaseDataPreprocessor
from runnerx.registry import MODELS
from runnerx.utils.errors import ValueAssertionError


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
            self.register_buffer("mean", torch.tensor(mean).view(-1, 1, 1), persistent=False)
            self.register_buffer("std", torch.tensor(std).view(-1, 1, 1), persistent=False)
        self._channel_conversion = bgr_to_rgb or rgb_to_bgr
        self.pad_size_divisor = pad_size_divisor
        self.pad_value = pad_value

    def forward(self, data: Mapping, training: bool = False) -> dict:
        """Return ``data`` with ``inputs`` a normalised, padded float batch on the device."""
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
    tensors: list[torch.Tensor], pad_size_divisor: int = 1, pad_value: float = 0
) -> torch.Tensor:
    """Stack tensors of shape ``(C, *spatial)`` into one batch, padding every spatial size at
    the end up to the batch's largest, rounded up to a multiple of ``pad_size_divisor``."""
    if not tensors:
        raise ValueAssertionError("stack_batch needs at least one tensor")
    if len({tensor.dim() for tensor in tensors}) != 1:
        raise ValueAssertionError(
            f"cannot stack tensors of shapes {[tuple(t.shape) for t in tensors]}"
        )
    spatial_dims = range(1, tensors[0].dim())
    target = {
        dim: _round_up(max(tensor.shape[dim] for tensor in tensors), pad_size_divisor)
        for dim in spatial_dims
    }
    padded = []
    for tensor in tensors:
        pad = []  # F.pad lists (before, after) pairs from the last dimension backwards
        for dim in reversed(spatial_dims):
            pad += [0, target[dim] - tensor.shape[dim]]
        padded.append(F.pad(tensor, pad, value=pad_value) if any(pad) else tensor)
    return torch.stack(padded)


def _round_up(size: int, divisor: int) -> int:
    return math.ceil(size / divisor) * divisor
