"""Compose: a dataset's ``pipeline``, the transforms a sample goes through in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runnerx.registry import TRANSFORMS


@TRANSFORMS.register_module()
class Compose:
    """Apply ``transforms`` one after another to a sample (a dict), as MMEngine's Compose does.

    Each entry is a config dict built with ``TRANSFORMS`` or a callable; ``None`` means no
    transforms. A transform that returns ``None`` (an unreadable file, an augmentation that
    found no valid crop) stops the pipeline, which then returns ``None`` too: ``BaseDataset``
    then fetches another sample in training. Registered in ``TRANSFORMS`` (as mmcv registers
    its Compose; MMEngine's is not registered), so pipelines nest::

        pipeline = [dict(type='LoadImage'), dict(type='Compose', transforms=[...])]
    """

    def __init__(self, transforms: Sequence[Mapping | Callable] | None) -> None:
        if transforms is None:
            transforms = []
        if isinstance(transforms, (str, bytes, Mapping)) or not isinstance(transforms, Sequence):
            raise TypeError(
                "the pipeline (Compose transforms) must be a list of transform config dicts "
                f"or callables, but got {type(transforms).__name__}: {transforms!r}"
            )
        self.transforms: list[Callable] = [
            _as_transform(entry, position) for position, entry in enumerate(transforms)
        ]

    def __call__(self, data: Any) -> Any:
        """``data`` through every transform; ``None`` as soon as one returns ``None``."""
        for transform in self.transforms:
            data = transform(data)
            if data is None:
                return None
        return data

    def __repr__(self) -> str:
        lines = "".join(f"\n    {transform}" for transform in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


def _as_transform(entry: Any, position: int) -> Callable:
    if isinstance(entry, Mapping):
        transform = TRANSFORMS.build(entry)
        if not callable(transform):
            raise TypeError(
                f"pipeline[{position}] = {dict(entry)!r} built a {type(transform).__name__}, "
                "which is not callable; a transform must be called with the sample dict"
            )
        return transform
    if callable(entry):
        return entry
    raise TypeError(
        f"pipeline[{position}] must be a transform config dict (dict(type=..., ...), the type "
        f"registered in TRANSFORMS) or a callable, but got {type(entry).__name__}: {entry!r}"
    )
