"""When a training loop validates: every ``val_interval`` epochs (iterations) from
``val_begin`` on and after the last, with ``dynamic_intervals`` changing the interval at
milestones, and after a resume the validation its checkpoint missed::

    train_cfg = dict(by_epoch=True, max_epochs=300, val_begin=10, val_interval=10,
                     dynamic_intervals=[(280, 1)])   # from epoch 280 on, every epoch

:class:`ValidationSchedule` is a base class of both training loops
(:mod:`runnerx.runner.loops`); mid-epoch checks build on it in
:mod:`runnerx.runner.val_checks`.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any


class ValidationSchedule:
    """The validation schedule of a training loop, which has ``runner``, ``unit`` ('epoch' or
    'iteration': what ``val_interval`` counts), ``_stop_now`` and the counts ``_epoch`` and
    ``_iter``. MMEngine's attributes are here for loops written for it: ``dynamic_milestones``
    and ``dynamic_intervals`` (the interval from each milestone on, as two lists) and
    :meth:`_decide_current_val_interval`."""

    runner: Any
    unit: str
    _stop_now: bool  # behind the loop's stop_now property: read once per iteration here
    _epoch: int
    _iter: int

    def _init_val_schedule(
        self, val_begin: int, val_interval: int, dynamic_intervals: list[tuple[int, int]] | None
    ) -> None:
        self.val_begin = val_begin
        self.val_interval = val_interval
        # val_interval from each milestone on: [0, m1, ...] and [val_interval, i1, ...]
        milestones, intervals = zip(*interval_steps(val_interval, dynamic_intervals))
        self.dynamic_milestones, self.dynamic_intervals = list(milestones), list(intervals)
        self._interval_changes = len(milestones) > 1
        # the epoch or iteration count at which a validation last began (0: none yet), saved
        # in checkpoints; after a resume, whether a validation the checkpoint missed is due
        self.validated_at = 0
        self._catch_up = False
        self._validates = True  # whether the run has a val loop: settled when run() starts

    def resume_validation(self, validated_at: int) -> None:
        """After a resume: the checkpoint's ``validated_at``. A checkpoint saved at the end of
        an epoch (or interval) but before that validation ran has it behind; the loop then
        runs that validation first, so that what it changes (schedulers that act on metrics,
        early stopping, the best checkpoint) is what it was in the unbroken run."""
        self.validated_at = validated_at
        self._catch_up = True

    def _catch_up_validation(self, done: int, total: int) -> None:
        if self._catch_up and self.validated_at != done:
            note = (
                f"validating after {self.unit} {done} first: a validation is due there under "
                "this config, and the checkpoint resumed from was saved before one ran"
            )
            self._validate_if_due(done, total, note)
        self._catch_up = False

    def _settle_val_interval(self, upcoming: int) -> None:
        """Set ``val_interval`` for the epoch/iteration numbered ``upcoming`` (counted from
        1): the interval of the last ``dynamic_intervals`` milestone at or before it."""
        step = bisect_right(self.dynamic_milestones, upcoming) - 1
        self.val_interval = self.dynamic_intervals[step]

    def _decide_current_val_interval(self) -> None:
        """Set ``val_interval`` for the epoch (iteration) just counted: MMEngine's method, which
        a ``run()`` copied from its loops calls after ``run_epoch()`` / ``run_iter()``. It
        follows runnerx's rule (the interval of the last milestone at or before that count),
        not MMEngine's one-ahead look (see :class:`~runnerx.runner.loops.EpochBasedTrainLoop`)."""
        self._settle_val_interval(self._epoch if self.unit == "epoch" else self._iter)

    def _is_due(self, done: int, total: int) -> bool:
        """Whether validation is due after epoch (iteration) ``done``: every
        ``val_interval`` from ``val_begin`` on, and after the last one."""
        return done >= self.val_begin and (done % self.val_interval == 0 or done == total)

    def first_validation(self, total: int) -> int | None:
        """The first epoch (iteration) count after which this schedule validates in a run of
        ``total``, None for none: every ``val_interval`` from ``val_begin`` on, the interval
        of the last ``dynamic_intervals`` milestone at or before the count, and after the
        last one."""
        begin = max(self.val_begin, 1)
        if begin > total:
            return None
        milestones = self.dynamic_milestones
        for start, stop, interval in zip(
            milestones, [*milestones[1:], total + 1], self.dynamic_intervals
        ):
            low, high = max(start, begin), min(stop - 1, total)
            first = -(-low // interval) * interval  # the first multiple of interval >= low
            if low <= high and first <= high:
                return first
        return total

    def _check_val_schedule(self, total: int) -> None:
        """Before training: refuse a ``val_interval`` that cannot count, and warn when
        ``val_begin`` leaves no validation (only when the run validates: MMEngine's
        ``val_interval=0`` without validation runs)."""
        self._validates = self.runner.val_loop is not None
        if not self._validates:
            return
        interval = self.val_interval
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(
                f"train_cfg.val_interval must be a positive int (the {self.unit}s between "
                f"validations), got {interval!r}; to train without validation leave out "
                "val_dataloader, val_cfg and val_evaluator"
            )
        if self.val_begin > total:
            self.runner.logger.warning(
                f"train_cfg.val_begin={self.val_begin} is after the last {self.unit} "
                f"({total}): no validation will run"
            )

    def _validates_after(self, done: int, total: int) -> bool:
        """Whether the loop validates after epoch (iteration) ``done`` (settling
        ``val_interval`` for it): the run validates, nothing stopped it, and it is due."""
        if self._interval_changes:
            self._settle_val_interval(done)
        # _validates first: without validation, val_interval may be 0 (MMEngine runs that)
        due = self._validates and not self._stop_now and self._is_due(done, total)
        return due and self.runner.val_loop is not None

    def _validate_if_due(self, done: int, total: int, note: str | None = None) -> None:
        if self._validates_after(done, total):
            self.validated_at = done  # before: checkpoints saved while validating have it
            self._validate(note)
        if self._interval_changes:  # what hooks see in the next epoch / iteration
            self._settle_val_interval(done + 1)

    def _validate(self, note: str | None = None) -> None:
        """Run the validation loop (after logging ``note``), then train again."""
        if note:
            self.runner.logger.info(note)
        self.runner.val_loop.run()
        self.runner.model.train()


def interval_steps(
    val_interval: int, dynamic_intervals: list[tuple[int, int]] | None
) -> list[tuple[int, int]]:
    """``[(0, val_interval), *dynamic_intervals]``, checked: milestones and intervals are
    positive ints, milestones strictly ascending."""
    steps = [(0, val_interval)]
    for index, pair in enumerate(dynamic_intervals or ()):
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in pair)
            or pair[0] <= steps[-1][0]
        ):
            raise ValueError(
                f"train_cfg.dynamic_intervals[{index}] must be a (milestone, val_interval) "
                "pair of positive ints, with milestones in ascending order, e.g. "
                f"dynamic_intervals=[(280, 1)]; got {pair!r}"
            )
        steps.append((pair[0], pair[1]))
    return steps
