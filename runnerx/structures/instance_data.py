"""InstanceData: per-instance annotations or predictions of one sample (boxes, scores, labels),
every data field holding one entry per instance, indexed and concatenated together."""

from __future__ import annotations

import functools
import operator
from collections.abc import Sized
from typing import Any

import numpy as np
import torch

from runnerx.structures.base_data_element import (
    _PRIVATE,
    BaseDataElement,
    TypeAssertionError,
    ValueAssertionError,
)

_SEQUENCES = (str, list, tuple)


def _as_index_tensor(item: list | np.ndarray | torch.Tensor) -> torch.Tensor:
    """A list, array or tensor index as a 1-D bool mask or int64 positions tensor."""
    if isinstance(item, list):
        # an empty list selects nothing (np.array([]) would be float)
        item = np.array(item) if item else np.zeros(0, dtype=np.int64)
    if isinstance(item, np.ndarray):
        if item.dtype.kind in "iu":
            item = item.astype(np.int64)
        elif item.dtype != np.bool_:
            raise TypeAssertionError(
                f"InstanceData can be indexed by integer or bool arrays, but got dtype {item.dtype}"
            )
        item = torch.from_numpy(item)
    if item.dtype == torch.uint8:
        # torch reads a uint8 index as a (deprecated) mask; refused rather than guessed
        raise TypeAssertionError(
            "InstanceData cannot be indexed by a torch.uint8 tensor: torch reads one as a "
            "(deprecated) mask, not as positions; pass a bool mask (mask.bool()) or int64 "
            "positions (index.long())"
        )
    if item.dtype != torch.bool:
        if item.dtype.is_floating_point or item.dtype.is_complex:
            raise TypeAssertionError(
                f"InstanceData can be indexed by integer or bool tensors, but got {item.dtype}"
            )
        item = item.long()
    if item.dim() != 1:
        raise ValueAssertionError(
            "InstanceData index tensors select along the instances and must be 1-D, but got "
            f"shape {tuple(item.shape)}"
        )
    return item


def _select(value: Any, positions: list[int]) -> Any:
    """``value`` (a str, list, tuple or an object with ``cat``) at ``positions``."""
    # value[p : p + 1] keeps the type; p = -1 needs the open end
    pieces = [value[p : p + 1 or None] for p in positions] or [value[:0]]
    if isinstance(value, _SEQUENCES):
        return functools.reduce(operator.add, pieces)
    return value.cat(pieces)


def _concat(key: str, values: list) -> Any:
    first = values[0]
    if isinstance(first, torch.Tensor):
        return torch.cat(values, dim=0)
    if isinstance(first, np.ndarray):
        return np.concatenate(values, axis=0)
    if isinstance(first, _SEQUENCES):
        return functools.reduce(operator.add, values)
    if hasattr(first, "cat"):
        return first.cat(values)
    raise ValueError(
        f"InstanceData.cat: field {key!r} is a {type(first).__name__}, which has no `cat` "
        "method to concatenate it with"
    )


class InstanceData(BaseDataElement):
    """Instance-level fields of one sample: every data field has one entry per instance
    (tensors and arrays along their first dimension, lists, tuples, strings, or any object
    with ``__len__``, ``__getitem__`` and a ``cat(list)`` method)::

        pred = InstanceData(metainfo=dict(img_shape=(64, 64)),
                            bboxes=torch.rand(3, 4), scores=torch.tensor([.9, .2, .6]))
        kept = pred[pred.scores > 0.5]          # 2 instances, every field indexed
        both = InstanceData.cat([pred, kept])   # 5 instances

    Indexing takes an int (keeps the dimension), a slice, a list, an integer or bool numpy
    array or tensor (not a torch.uint8 one: use ``mask.bool()``), or a field name (its value).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        """``instances.name = value`` sets a data field with one entry per instance."""
        if name not in _PRIVATE:
            if not isinstance(value, Sized):
                raise TypeAssertionError(
                    f"InstanceData field {name!r} must have a length (a tensor, array, list, "
                    f"...), but got {type(value).__name__}"
                )
            length = len(self)
            if length and len(value) != length:
                raise ValueAssertionError(
                    f"InstanceData field {name!r} has length {len(value)}, but this "
                    f"InstanceData holds {length} instances"
                )
        super().__setattr__(name, value)

    __setitem__ = __setattr__

    def __len__(self) -> int:
        """The number of instances (0 without data fields)."""
        for name in self.keys():
            return len(getattr(self, name))
        return 0

    def __getitem__(self, item: Any) -> Any:
        """The instances at ``item`` as a new InstanceData (same metainfo), or the value of
        the field ``item`` when it is a str."""
        if isinstance(item, str):
            return getattr(self, item)
        if isinstance(item, int):  # a bool is an int too, as in MMEngine
            length = len(self)
            if not -length <= item < length:
                raise IndexError(f"index {item} is out of range for {length} instances")
            item = slice(item, item + 1 or None)
        elif isinstance(item, (list, np.ndarray, torch.Tensor)):
            return self._take(_as_index_tensor(item))
        elif not isinstance(item, slice):
            raise TypeAssertionError(
                "InstanceData can be indexed by a str, int, slice, list, numpy array or "
                f"integer or bool tensor, but got {type(item).__name__}"
            )
        selected = type(self)(metainfo=self.metainfo)
        for name, value in self.items():
            selected[name] = value[item]
        return selected

    def _take(self, index: torch.Tensor) -> InstanceData:
        """The instances at a bool mask or int64 positions tensor."""
        is_mask = index.dtype == torch.bool
        if is_mask and len(index) != len(self):
            raise ValueAssertionError(
                f"a bool index must have one entry per instance: it has {len(index)}, but "
                f"this InstanceData holds {len(self)} instances"
            )
        selected = type(self)(metainfo=self.metainfo)
        positions = None  # as a list of ints, made once for the fields that need it
        for name, value in self.items():
            if isinstance(value, torch.Tensor):
                selected[name] = value[index]
            elif isinstance(value, np.ndarray):
                selected[name] = value[index.cpu().numpy()]
            elif isinstance(value, _SEQUENCES) or (
                hasattr(value, "__getitem__") and hasattr(value, "cat")
            ):
                if positions is None:
                    positions = (index.nonzero().view(-1) if is_mask else index).tolist()
                    length = len(self)
                    outside = [p for p in positions if not -length <= p < length]
                    if outside:
                        raise IndexError(
                            f"index {outside[0]} is out of range for {length} instances"
                        )
                selected[name] = _select(value, positions)
            else:
                raise ValueError(
                    f"InstanceData field {name!r} is a {type(value).__name__}, which has no "
                    "`cat` method, so it cannot be indexed by a list, array or tensor"
                )
        return selected

    @staticmethod
    def cat(instances_list: list[InstanceData]) -> InstanceData:
        """The instances of every element of ``instances_list`` (which must have the same
        fields) one after another, with the first element's metainfo. A list of one element
        gives that element itself."""
        if not all(isinstance(instances, InstanceData) for instances in instances_list):
            kinds = sorted({type(instances).__name__ for instances in instances_list})
            raise TypeAssertionError(f"InstanceData.cat takes InstanceData only, but got {kinds}")
        if len(instances_list) == 0:
            raise ValueAssertionError("InstanceData.cat needs at least one InstanceData")
        if len(instances_list) == 1:
            return instances_list[0]
        first = instances_list[0]
        keys = set(first.all_keys())
        for index, instances in enumerate(instances_list[1:], start=1):
            if set(instances.all_keys()) != keys:
                raise ValueAssertionError(
                    f"InstanceData.cat needs the same fields in every element, but element 0 "
                    f"has {sorted(keys)} and element {index} has {sorted(instances.all_keys())}"
                )
        result = type(first)(metainfo=first.metainfo)
        for name, value in first.items():
            others = [getattr(instances, name) for instances in instances_list[1:]]
            result[name] = _concat(name, [value, *others])
        return result
