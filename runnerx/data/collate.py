"""Collate functions: how a list of samples becomes one batch (MMEngine's two, by name).

Both keep the structure of a sample: a list of dicts becomes a dict of batched values, a list
of sequences becomes a list of batched positions, recursively. Values that are not stacked
stay in the container the transposition gives them, as in MMEngine: a list under a dict key
(``[dict(a=1), dict(a=2)]`` -> ``{'a': [1, 2]}``), a tuple at a position of a sequence
(``[(x1, 'a'), (x2, 'b')]`` -> ``[(x1, x2), ('a', 'b')]``). They differ at the leaves::

    train_dataloader = dict(collate_fn=dict(type='default_collate'), ...)  # stack tensors
    train_dataloader = dict(collate_fn=dict(type='pseudo_collate'), ...)   # no stacking (default)
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch.utils.data import default_collate as torch_default_collate

from runnerx.registry import FUNCTIONS


def _transpose(batch: Sequence, leaf: Callable[[Sequence], Any]) -> Any:
    """Collate ``batch`` (samples of one kind) by its first sample's structure."""
    first = batch[0]
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, Mapping):
        collated = {}
        for key in first:
            try:
                collated[key] = _transpose([sample[key] for sample in batch], leaf)
            except _UnequalShapes as error:
                raise error.under(f"[{key!r}]") from None
        try:
            return type(first)(collated)
        except TypeError:  # a mapping type that cannot be made from a dict
            return collated
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a named tuple
        fields = []
        for name, values in zip(first._fields, zip(*batch)):
            try:
                fields.append(_transpose(values, leaf))
            except _UnequalShapes as error:
                raise error.under(f".{name}") from None
        return type(first)(*fields)
    if isinstance(first, Sequence):
        size = len(first)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError(
                f"cannot collate sequences of different lengths: "
                f"{[len(sample) for sample in batch]}"
            )
        positions = []
        for index, position in enumerate(zip(*batch)):
            try:
                positions.append(_transpose(position, leaf))
            except _UnequalShapes as error:
                raise error.under(f"[{index}]") from None
        if isinstance(first, (list, tuple)):  # a tuple sample gives a list, as in torch
            return positions
        try:
            return type(first)(positions)
        except TypeError:  # e.g. range cannot be made from a list
            return positions
    return leaf(batch)


class _UnequalShapes(RuntimeError):
    """Samples' values of different shapes, which cannot be stacked; ``where`` (in a sample,
    ``['inputs'][0]``) is filled in on the way out, so that collating pays nothing for it."""

    def __init__(self, shapes: list[tuple]) -> None:
        super().__init__(shapes)
        self.shapes, self.where = shapes, ""

    def under(self, step: str) -> _UnequalShapes:
        """This error, with ``step`` (the key it was raised under) put in front of ``where``."""
        self.where = step + self.where
        return self


def _as_is(batch: Sequence) -> Sequence:
    return batch


def _stack_numeric(batch: Sequence) -> Any:
    first = batch[0]
    if not (isinstance(first, (torch.Tensor, numbers.Number)) or type(first).__module__ == "numpy"):
        return batch
    try:
        return torch_default_collate(batch)
    except RuntimeError:
        shapes = [tuple(getattr(value, "shape", ())) for value in batch]
        if len(set(shapes)) == 1:
            raise
        raise _UnequalShapes(shapes) from None


@FUNCTIONS.register_module()
def pseudo_collate(data_batch: Sequence) -> Any:
    """Batch samples without stacking: MMEngine's default ``collate_fn``.

    ``[dict(inputs=a, data_samples=x), dict(inputs=b, data_samples=y)]`` becomes
    ``dict(inputs=[a, b], data_samples=[x, y])``, and ``[(a, x), (b, y)]`` becomes
    ``[(a, b), (x, y)]``; tensors, numbers and other values stay as they are. Use it when
    samples differ in shape.
    """
    return _transpose(data_batch, _as_is)


@FUNCTIONS.register_module()
def default_collate(data_batch: Sequence) -> Any:
    """Batch samples and stack what can be stacked, like torch's ``default_collate``.

    Tensors of one shape are stacked along a new first dimension, numbers and numpy arrays
    become tensors; dicts, lists and tuples are collated recursively; strings and other
    objects (e.g. data-sample structures) are kept as they are, in a list under a dict key
    and in a tuple at a position of a sequence (MMEngine refuses objects torch cannot
    collate, except its data elements)::

        collate_fn=dict(type='default_collate')
    """
    try:
        return _transpose(data_batch, _stack_numeric)
    except _UnequalShapes as error:
        shown = ", ".join(map(str, error.shapes[:4])) + (", ..." if len(error.shapes) > 4 else "")
        raise RuntimeError(
            f"default_collate: the samples' {error.where or 'values'} have different shapes "
            f"({shown}), so they cannot be stacked into a batch; pad them to one shape in the "
            "dataset or its transforms, or use collate_fn=dict(type='pseudo_collate') (lists) "
            "and batch them in the model's data_preprocessor"
        ) from None
