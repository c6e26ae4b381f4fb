"""PixelData: pixel-level annotations or predictions of one sample (segmentation maps,
heatmaps), every data field a (C, H, W) tensor or array of one height and width."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from runnerx.structures.base_data_element import (
    _PRIVATE,
    BaseDataElement,
    TypeAssertionError,
    ValueAssertionError,
)


class PixelData(BaseDataElement):
    """Pixel-level fields of one sample: tensors or numpy arrays of shape (C, H, W), all of
    the same H and W; a 2-D (H, W) value gets a channel dimension, (1, H, W)::

        seg = PixelData(metainfo=dict(img_shape=(4, 6)), sem_seg=torch.zeros(4, 6))
        seg.sem_seg.shape      # torch.Size([1, 4, 6])
        seg.shape              # (4, 6)
        seg[1:3, 0]            # a PixelData of shape (2, 1)

    Unlike MMEngine, setting a 2-D value gives no warning, and an int index out of range is
    an IndexError (MMEngine returned an empty or a wrong slice).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        """``pixels.name = value`` sets a data field of shape (C, H, W) or (H, W)."""
        if name not in _PRIVATE:
            if not isinstance(value, (torch.Tensor, np.ndarray)):
                raise TypeAssertionError(
                    f"PixelData field {name!r} must be a torch.Tensor or numpy.ndarray, but "
                    f"got {type(value).__name__}"
                )
            if value.ndim not in (2, 3):
                raise ValueAssertionError(
                    f"PixelData field {name!r} must have shape (C, H, W) or (H, W), but has "
                    f"shape {tuple(value.shape)}"
                )
            shape = self.shape
            if shape is not None and tuple(value.shape[-2:]) != shape:
                raise ValueAssertionError(
                    f"PixelData field {name!r} has height and width {tuple(value.shape[-2:])}, "
                    f"but this PixelData's are {shape}"
                )
            if value.ndim == 2:
                value = value[None]
        super().__setattr__(name, value)

    @property
    def shape(self) -> tuple[int, int] | None:
        """(H, W) of the data fields, or None without any."""
        for value in self.values():
            return tuple(value.shape[-2:])
        return None

    def __getitem__(self, item: tuple[int | slice, int | slice]) -> PixelData:
        """The pixels at ``(rows, columns)`` (each an int or a slice; an int keeps its
        dimension) of every field, as a new PixelData with the same metainfo."""
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeAssertionError(
                f"PixelData is indexed by (rows, columns), each an int or a slice, but got {item!r}"
            )
        shape = self.shape or (0, 0)
        index = [slice(None)]  # every channel
        for position, size in zip(item, shape):
            if isinstance(position, slice):
                index.append(position)
            elif isinstance(position, int):
                if not -size <= position < size:
                    raise IndexError(f"index {position} is out of range for size {size}")
                index.append(slice(position, position + 1 or None))
            else:
                raise TypeAssertionError(
                    f"PixelData indices must be ints or slices, but got {type(position).__name__}"
                )
        selected = type(self)(metainfo=self.metainfo)
        for name, value in self.items():
            setattr(selected, name, value[tuple(index)])
        return selected
