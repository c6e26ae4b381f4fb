"""Hook: the base of everything that acts at fixed points of a run (MMEngine's hook points).

A hook overrides only the points it needs; the Runner calls a hook only at the points it
overrides, so a point a hook does not use costs nothing.

.. code-block:: python

    from runnerx import HOOKS
    from runnerx.hooks import Hook

    @HOOKS.register_module()
    class PrintLossHook(Hook):
        priority = 'LOW'

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if self.every_n_train_iters(runner, 100):
                runner.logger.info(f"loss {outputs['loss'].item():.4f}")

    custom_hooks = [dict(type='PrintLossHook')]
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from runnerx.utils.errors import ValueKeyError, ValueTypeError

__all__ = ["DATA_BATCH", "HOOK_POINTS", "PRIORITIES", "Hook", "Priority", "get_priority"]

#: The type of a hook's ``data_batch`` argument (MMEngine's alias, for annotations).
DATA_BATCH = dict | tuple | list | None

#: Hook priorities by name; a smaller number runs earlier at every point.
PRIORITIES = {
    "HIGHEST": 0,
    "VERY_HIGH": 10,
    "HIGH": 30,
    "ABOVE_NORMAL": 40,
    "NORMAL": 50,
    "BELOW_NORMAL": 60,
    "LOW": 70,
    "VERY_LOW": 90,
    "LOWEST": 100,
}

#: The same priorities as an enum (MMEngine's ``Priority``): ``priority = Priority.HIGH``.
Priority = IntEnum("Priority", PRIORITIES)

#: Every point a hook can act at, in the order a run reaches them.
HOOK_POINTS = (
    "before_run",
    "after_load_checkpoint",
    "before_train",
    "before_train_epoch",
    "before_train_iter",
    "after_train_iter",
    "after_train_epoch",
    "before_val",
    "before_val_epoch",
    "before_val_iter",
    "after_val_iter",
    "after_val_epoch",
    "after_val",
    "before_save_checkpoint",
    "after_train",
    "before_test",
    "before_test_epoch",
    "before_test_iter",
    "after_test_iter",
    "after_test_epoch",
    "after_test",
    "after_run",
)


def get_priority(priority: int | str) -> int:
    """The number of a priority given by name (``'NORMAL'``) or number (0 to 100)."""
    if isinstance(priority, bool):
        raise ValueTypeError(f"priority must be a name or an int from 0 to 100, got {priority!r}")
    if isinstance(priority, int):
        if not 0 <= priority <= 100:
            raise ValueError(f"priority must be between 0 and 100, got {priority}")
        return int(priority)
    if isinstance(priority, str) and priority.upper() in PRIORITIES:
        return PRIORITIES[priority.upper()]
    # MMEngine raises KeyError for an unknown name, TypeError for anything else
    error = ValueKeyError if isinstance(priority, str) else ValueTypeError
    raise error(
        f"unknown hook priority {priority!r}; use a number from 0 to 100 or one of "
        + ", ".join(PRIORITIES)
    )


class Hook:
    """Base class of hooks. Each method is one point of the run; the defaults do nothing."""

    priority: int | str = "NORMAL"
    #: MMEngine's name for every point, in the order a run reaches them
    stages = HOOK_POINTS

    def before_run(self, runner: Any) -> None:
        """Once, before anything runs (after the Runner has built everything)."""

    def after_run(self, runner: Any) -> None:
        """Once, when ``train()``/``val()``/``test()`` ends."""

    def before_train(self, runner: Any) -> None:
        """Before the first training epoch/iteration (after resuming)."""

    def after_train(self, runner: Any) -> None:
        """After the last training iteration."""

    def before_val(self, runner: Any) -> None:
        """Before a validation run."""

    def after_val(self, runner: Any) -> None:
        """After a validation run."""

    def before_test(self, runner: Any) -> None:
        """Before a test run."""

    def after_test(self, runner: Any) -> None:
        """After a test run."""

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Before a checkpoint dict is written; may add to it."""

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """After a checkpoint dict was loaded (resume or load_from)."""

    def before_train_epoch(self, runner: Any) -> None:
        """Before each training epoch."""
        self._before_epoch(runner, mode="train")

    def before_val_epoch(self, runner: Any) -> None:
        """Before each validation epoch."""
        self._before_epoch(runner, mode="val")

    def before_test_epoch(self, runner: Any) -> None:
        """Before each test epoch."""
        self._before_epoch(runner, mode="test")

    def after_train_epoch(self, runner: Any) -> None:
        """After each training epoch."""
        self._after_epoch(runner, mode="train")

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """After each validation epoch, with the evaluated metrics."""
        self._after_epoch(runner, mode="val")

    def after_test_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """After each test epoch, with the evaluated metrics."""
        self._after_epoch(runner, mode="test")

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Before each training iteration."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="train")

    def before_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Before each validation iteration."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="val")

    def before_test_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        """Before each test iteration."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="test")

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """After each training iteration, with what ``train_step`` returned."""
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="train")

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """After each validation iteration, with what ``val_step`` returned."""
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="val")

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """After each test iteration, with what ``test_step`` returned."""
        self._after_iter(runner, batch_idx, data_batch, outputs, mode="test")

    # MMEngine's points for all three modes at once: a hook that overrides one of these acts
    # at the train, val and test points it stands for (``mode`` says which)

    def _before_epoch(self, runner: Any, mode: str = "train") -> None:
        """Before each epoch of any mode."""

    def _after_epoch(self, runner: Any, mode: str = "train") -> None:
        """After each epoch of any mode."""

    def _before_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, mode: str = "train"
    ) -> None:
        """Before each iteration of any mode."""

    def _after_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: Any = None,
        outputs: Any = None,
        mode: str = "train",
    ) -> None:
        """After each iteration of any mode."""

    # Helpers for deciding whether to act, as MMEngine's hooks have them.

    def every_n_epochs(self, runner: Any, n: int, start: int = 0) -> bool:
        """Whether the epoch just finished is one of every ``n`` (counting after ``start``)."""
        done = runner.epoch + 1 - start
        return n > 0 and done >= 0 and done % n == 0

    def every_n_inner_iters(self, batch_idx: int, n: int) -> bool:
        """Whether ``batch_idx`` ends one of every ``n`` iterations of the current epoch."""
        return n > 0 and (batch_idx + 1) % n == 0

    def every_n_train_iters(self, runner: Any, n: int, start: int = 0) -> bool:
        """Whether the iteration just finished is one of every ``n`` (counting after ``start``)."""
        done = runner.iter + 1 - start
        return n > 0 and done >= 0 and done % n == 0

    def end_of_epoch(self, dataloader: Any, batch_idx: int) -> bool:
        """Whether ``batch_idx`` is the last batch of ``dataloader``."""
        return batch_idx + 1 == len(dataloader)

    def is_last_train_epoch(self, runner: Any) -> bool:
        """Whether the epoch just finished is the last training epoch."""
        return runner.epoch + 1 == runner.max_epochs

    def is_last_train_iter(self, runner: Any) -> bool:
        """Whether the iteration just finished is the last training iteration."""
        return runner.iter + 1 == runner.max_iters

    def overridden_points(self) -> list[str]:
        """The hook points this hook implements (the Runner calls only these): those its class
        overrides or the instance holds a callable for (``self.before_train = ...``, a test's
        ``hook.after_train_iter = Mock()``; MMEngine calls them too), counting those a
        mode-generic method (``_after_iter``, ...) stands for."""
        kind, own = type(self), getattr(self, "__dict__", {})

        def implemented(name: str) -> bool:
            return getattr(kind, name) is not getattr(Hook, name) or callable(own.get(name))

        points = {point for point in HOOK_POINTS if implemented(point)}
        for generic, stood_for in _GENERIC_POINTS.items():
            if implemented(generic):
                points.update(stood_for)
        return [point for point in HOOK_POINTS if point in points]

    def points_without(self, points: list[str], unused: Iterable[str]) -> list[str]:
        """``points`` (a subclass's ``super().overridden_points()``) less the ``unused`` ones
        (points its configuration never acts at), except those set on the instance: a patch
        (``hook.after_train_iter = Mock()``) is called whatever the configuration."""
        own, unused = getattr(self, "__dict__", {}), set(unused)
        return [point for point in points if point not in unused or callable(own.get(point))]

    def get_triggered_stages(self) -> list[str]:
        """MMEngine's name for :meth:`overridden_points`."""
        return self.overridden_points()


_GENERIC_POINTS = {
    "_before_epoch": ("before_train_epoch", "before_val_epoch", "before_test_epoch"),
    "_after_epoch": ("after_train_epoch", "after_val_epoch", "after_test_epoch"),
    "_before_iter": ("before_train_iter", "before_val_iter", "before_test_iter"),
    "_after_iter": ("after_train_iter", "after_val_iter", "after_test_iter"),
}
