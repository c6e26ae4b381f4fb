"""EmptyCacheHook: hands the CUDA caching allocator's unused memory back at chosen points."""

from __future__ import annotations

from typing import Any

import torch

from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS

_BEFORE_EPOCH = ("before_train_epoch", "before_val_epoch", "before_test_epoch")
_AFTER_EPOCH = ("after_train_epoch", "after_val_epoch", "after_test_epoch")
_AFTER_ITER = ("after_train_iter", "after_val_iter", "after_test_iter")


@HOOKS.register_module()
class EmptyCacheHook(Hook):
    """Calls ``torch.cuda.empty_cache()`` before epochs, after epochs and/or after iterations.

    Only the chosen points are reported by :meth:`overridden_points`, so the Runner never calls
    this hook at the others (the default, after each epoch, costs nothing per iteration).
    Without CUDA in use it does nothing::

        custom_hooks = [dict(type='EmptyCacheHook', after_epoch=True, after_iter=False)]
    """

    priority = "NORMAL"

    def __init__(
        self, before_epoch: bool = False, after_epoch: bool = True, after_iter: bool = False
    ) -> None:
        self._points = frozenset(
            (_BEFORE_EPOCH if before_epoch else ())
            + (_AFTER_EPOCH if after_epoch else ())
            + (_AFTER_ITER if after_iter else ())
        )

    def overridden_points(self) -> list[str]:
        """The points chosen for this instance."""
        points = super().overridden_points()
        return self.points_without(points, [point for point in points if point not in self._points])

    def _empty_cache(self, point: str) -> None:
        # empty_cache itself does nothing until CUDA has been initialised
        if point in self._points:
            torch.cuda.empty_cache()

    def before_train_epoch(self, runner: Any) -> None:
        """Empty the cache when ``before_epoch``."""
        self._empty_cache("before_train_epoch")

    def before_val_epoch(self, runner: Any) -> None:
        """Empty the cache when ``before_epoch``."""
        self._empty_cache("before_val_epoch")

    def before_test_epoch(self, runner: Any) -> None:
        """Empty the cache when ``before_epoch``."""
        self._empty_cache("before_test_epoch")

    def after_train_epoch(self, runner: Any) -> None:
        """Empty the cache when ``after_epoch``."""
        self._empty_cache("after_train_epoch")

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Empty the cache when ``after_epoch``."""
        self._empty_cache("after_val_epoch")

    def after_test_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Empty the cache when ``after_epoch``."""
        self._empty_cache("after_test_epoch")

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Empty the cache when ``after_iter``."""
        self._empty_cache("after_train_iter")

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Empty the cache when ``after_iter``."""
        self._empty_cache("after_val_iter")

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Empty the cache when ``after_iter``."""
        self._empty_cache("after_test_iter")
