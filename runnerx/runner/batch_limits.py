"""Loops that read only the first batches of each pass: ``limit_batches`` in a loop's config
(Lightning's ``limit_train_batches``, ``limit_val_batches`` and ``limit_test_batches``), and
``fast_dev_run``::

    train_cfg = dict(by_epoch=True, max_epochs=12, limit_batches=0.25)  # a quarter of each epoch
    val_cfg = dict(limit_batches=10)                                     # the first 10 batches
"""

from __future__ import annotations

from itertools import islice
from typing import Any


def batch_limit(value: Any, dataloader: Any, key: str) -> int | None:
    """The batches per pass that ``value`` (the config's ``key``) allows: None (all), a
    positive int (at most that many), or a float in (0, 1] (that share of the dataloader's
    length, rounded down, at least 1). Anything else is a ValueError naming ``key``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, float) and 0.0 < value <= 1.0:
        try:
            length = len(dataloader)
        except TypeError:
            raise ValueError(
                f"{key}={value!r} is a share of an epoch, but the dataloader has no length "
                "(an iterable dataset): give a number of batches instead"
            ) from None
        return max(1, int(length * value))
    raise ValueError(
        f"{key} must be None (all batches), a positive int (batches per pass) or a float in "
        f"(0, 1] (a share of each pass), got {value!r}"
    )


def limited(dataloader: Any, value: Any, key: str) -> Any:
    """``dataloader``, or its first batches when ``value`` (the config's ``key``, checked by
    :func:`batch_limit`) sets a limit: what the loops put in place of their dataloader."""
    limit = batch_limit(value, dataloader, key)
    return dataloader if limit is None else FirstBatches(dataloader, limit)


class FirstBatches:
    """A dataloader's first ``batches`` batches: iterating gives them, ``len`` counts them,
    and every other attribute (``dataset``, ``batch_size``, ``sampler``, ...) is the
    dataloader's own, to read, set and delete: a hook that restarts persistent workers
    (mmdet's ``PipelineSwitchHook`` sets ``_iterator = None``) restarts the dataloader's. The
    loops put it in place of their dataloader to limit each pass."""

    _OWN = frozenset({"loader", "batches"})

    def __init__(self, loader: Any, batches: int) -> None:
        self.loader = loader
        self.batches = batches

    def __iter__(self) -> Any:
        return islice(self.loader, self.batches)

    def __len__(self) -> int:
        return min(self.batches, len(self.loader))

    def __getattr__(self, name: str) -> Any:  # only asked for what the view itself lacks
        loader = self.__dict__.get("loader")
        if loader is None:  # while being copied or unpickled
            raise AttributeError(name)
        return getattr(loader, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.loader, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._OWN:
            object.__delattr__(self, name)
        else:
            delattr(self.loader, name)


def unlimited(dataloader: Any) -> Any:
    """The dataloader under any :class:`FirstBatches` views of it (``dataloader`` itself when
    there are none): the one whose workers and options are real."""
    while isinstance(dataloader, FirstBatches):
        dataloader = dataloader.loader
    return dataloader


def evaluated_samples(dataloader: Any) -> int:
    """The samples, across ranks, that one pass over ``dataloader`` evaluates, not counting
    those a sampler repeats to even out the ranks' shares (``Evaluator.evaluate``'s size,
    which cuts the gathered results to it): the dataset's length, or for
    :class:`FirstBatches` (nested ones too) the first ``len(dataloader) * batch_size``
    samples of each rank (the default samplers deal samples to ranks in turn), at most the
    whole dataset."""
    size = len(dataloader.dataset)
    if not isinstance(dataloader, FirstBatches):
        return size
    from runnerx.data.build import batch_size_of
    from runnerx.dist import get_world_size

    batch_size = batch_size_of(dataloader)
    if not batch_size:  # then no padding unless the pass reads everything: the dataset's size
        return size
    return min(size, len(dataloader) * batch_size * get_world_size())
