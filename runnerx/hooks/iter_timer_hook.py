"""IterTimerHook: how long each iteration takes, and how much of it is waiting for data."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.logging.message_hub import ScalarRecorder
from runnerx.registry import HOOKS


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Records '<mode>/data_time' and '<mode>/time' scalars for train, val and test iterations.

    'data_time' runs from the end of the previous iteration (or the start of the epoch) to the
    start of this one, i.e. the time spent fetching the batch; 'time' covers the whole
    iteration, data included. One of the default hooks: ``default_hooks=dict(timer=...)``.
    A training iteration's two values cost two list appends
    (:class:`~runnerx.logging.ScalarRecorder`).
    """

    priority = "NORMAL"

    def __init__(self) -> None:
        self._last = perf_counter()
        self._hub: Any = None  # the hub the appenders below write to
        self._recorder: ScalarRecorder | None = None
        self._train_data_time: Callable[[float], None] | None = None
        self._train_time: Callable[[float], None] | None = None

    def _appender(self, runner: Any, key: str) -> Callable[[float], None]:
        """Record ``key`` in the runner's hub (from now on, if it is another hub)."""
        hub = runner.message_hub
        if hub is not self._hub:
            self._hub, self._recorder = hub, ScalarRecorder(hub)
            self._train_data_time = self._train_time = None
        return self._recorder.appender(key)  # type: ignore[union-attr]

    def _start(self) -> None:
        self._last = perf_counter()

    def _data_time(self, runner: Any, key: str) -> None:
        runner.message_hub.update_scalar(key, perf_counter() - self._last)

    def _iter_time(self, runner: Any, key: str) -> None:
        now = perf_counter()
        runner.message_hub.update_scalar(key, now - self._last)
        self._last = now

    def before_train_epoch(self, runner: Any) -> None:
        """Start the clock."""
        self._start()

    def before_val_epoch(self, runner: Any) -> None:
        """Start the clock."""
        self._start()

    def before_test_epoch(self, runner: Any) -> None:
        """Start the clock."""
        self._start()

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Record 'train/data_time'."""
        waited = perf_counter() - self._last
        append = self._train_data_time
        if append is None or runner.message_hub is not self._hub:
            append = self._appender(runner, "train/data_time")
            self._train_data_time = append
        append(waited)

    def before_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Record 'val/data_time'."""
        self._data_time(runner, "val/data_time")

    def before_test_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Record 'test/data_time'."""
        self._data_time(runner, "test/data_time")

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Record 'train/time'."""
        now = perf_counter()
        append = self._train_time
        if append is None or runner.message_hub is not self._hub:
            append = self._train_time = self._appender(runner, "train/time")
        append(now - self._last)
        self._last = now
        self._recorder.end_iteration()  # type: ignore[union-attr]

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Record 'val/time'."""
        self._iter_time(runner, "val/time")

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Record 'test/time'."""
        self._iter_time(runner, "test/time")
