"""SyncBuffersHook: averages the model's buffers (e.g. BatchNorm statistics) over the ranks."""

from __future__ import annotations

from typing import Any

from runnerx.dist import average_tensors
from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS


@HOOKS.register_module()
class SyncBuffersHook(Hook):
    """Averages ``runner.model.buffers()`` over all ranks after each training epoch, and
    before each validation epoch unless the end of a training epoch has just done it (so an
    iteration-based run, which ends no epoch before it validates, is synced too).

    Each rank's BatchNorm layers see only that rank's data (DDP does not broadcast buffers by
    default), so their running statistics drift apart; this makes every rank validate and
    save the same model. In a single process it does nothing::

        custom_hooks = [dict(type='SyncBuffersHook')]

    Whether the run is distributed is asked at each point, not when the hook is built
    (MMEngine asks once in ``__init__``). Integer buffers keep their dtype
    (:func:`runnerx.dist.average_tensors`).
    """

    priority = "NORMAL"

    def __init__(self) -> None:
        self._synced_after_train = False

    def after_train_epoch(self, runner: Any) -> None:
        """Average the buffers at the end of each training epoch."""
        average_tensors(runner.model.buffers())
        self._synced_after_train = True

    def before_val_epoch(self, runner: Any) -> None:
        """Average the buffers unless the training epoch that just ended did."""
        if not self._synced_after_train:
            average_tensors(runner.model.buffers())
        self._synced_after_train = False
