"""Compose: a dataset's ``pipeline``, the transforms a sample goes through in order; and
TestTimeAug, which makes one augmented view of a sample per combination of transforms."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runnerx.registry import TRANSFORMS


@TRANSFORMS.register_module(replaceable=True)
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


@TRANSFORMS.register_module(replaceable=True)
class TestTimeAug:
    """Test-time augmentation: a sample through every combination of transforms, taking one
    from each list in turn (mmcv's TestTimeAug), the views packed as a dict of lists.

    ``transforms=[[a1, a2], [b1, b2], [c]]`` runs four pipelines, ``a1 b1 c``, ``a1 b2 c``,
    ``a2 b1 c`` and ``a2 b2 c`` (the first list varies slowest), each on its own deep copy of
    the sample, and returns ``{key: [value of view 1, ..., value of view 4]}`` for every key
    of the views (the keys of the first view). End the test-time pipeline with it; with the
    default ``pseudo_collate`` a batch then holds, per key, one list per view, the layout
    ``BaseTTAModel.test_step`` takes::

        tta_pipeline = [
            dict(type='LoadImageFromFile'),
            dict(type='TestTimeAug', transforms=[
                [dict(type='RandomFlip', prob=1.0), dict(type='RandomFlip', prob=0.0)],
                [dict(type='PackInputs')],
            ]),
        ]

    Each entry is a transform config dict (built with ``TRANSFORMS``) or a callable. A view
    whose pipeline returns ``None`` is an error.
    """

    def __init__(self, transforms: Sequence[Sequence[Mapping | Callable]]) -> None:
        if not _is_list(transforms) or not all(_is_list(s) and s for s in transforms):
            raise TypeError(
                "TestTimeAug transforms must be a list of non-empty lists of transforms, one "
                "list per augmentation step (e.g. [[flip, no_flip], [pack]]), but got "
                f"{transforms!r}"
            )
        stages = [
            [_stage_transform(entry, step, index) for index, entry in enumerate(stage)]
            for step, stage in enumerate(transforms)
        ]
        self.pipelines = [Compose(chain) for chain in itertools.product(*stages)]

    def __call__(self, data: Any) -> dict[str, list]:
        """Every view of ``data``, packed as ``{key: [one value per view]}``."""
        views = []
        for number, pipeline in enumerate(self.pipelines, 1):
            view = pipeline(copy.deepcopy(data))
            if view is None:
                steps = " -> ".join(map(repr, pipeline.transforms))
                raise ValueError(
                    f"TestTimeAug: view {number} of {len(self.pipelines)} ({steps}) is None: a "
                    "transform returned None, but every test-time view of a sample must exist"
                )
            views.append(view)
        return {key: [view[key] for view in views] for key in views[0]}

    def __repr__(self) -> str:
        lines = "".join(f"\n    {pipeline!r}" for pipeline in self.pipelines)
        return f"{type(self).__name__}({lines}\n)"


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _stage_transform(entry: Any, step: int, index: int) -> Callable:
    try:
        return _as_transform(entry, index)
    except TypeError as error:
        raise TypeError(f"TestTimeAug transforms[{step}][{index}]: {error}") from None


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
